//! What an installed perflab ships beside itself: `perflab completions SHELL` (every subcommand
//! completes, in a real bash) and `perflab man [DIR]` (one page per subcommand that `man -l` reads,
//! naming its options).

use clap::CommandFactory;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

/// The visible subcommands of `perflab` (what `perflab --help` lists).
fn subcommands() -> Vec<String> {
    let names: Vec<String> = perflab::cli::Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect();
    assert!(names.len() >= 15 && names.contains(&"run".to_string()), "{names:?}");
    names
}

fn completions(shell: &str) -> String {
    let out = Command::new(BIN)
        .args(["completions", shell])
        .output()
        .expect("perflab completions");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8")
}

/// bash, given the script, completes `perflab <TAB>` to every subcommand and `perflab run --<TAB>`
/// to the run's options.
#[test]
fn bash_completes_every_subcommand() {
    let tmp = tempfile::tempdir().expect("tmp");
    let script = tmp.path().join("perflab.bash");
    std::fs::write(&script, completions("bash")).expect("write the script");
    let complete = |words: &str| -> Vec<String> {
        let prog = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); COMP_LINE=\"${{COMP_WORDS[*]}}\"; \
             COMP_POINT=${{#COMP_LINE}}; _perflab perflab \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let out = Command::new("bash").args(["--norc", "-c", &prog]).output().expect("bash");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
    };
    let offered = complete("perflab ''");
    for name in subcommands() {
        assert!(offered.contains(&name), "`perflab <TAB>` does not offer {name}: {offered:?}");
    }
    let run = complete("perflab run --");
    for opt in ["--dry-run", "--resume", "--json"] {
        assert!(run.iter().any(|o| o == opt), "`perflab run --<TAB>` does not offer {opt}: {run:?}");
    }
}

#[test]
fn every_shell_gets_a_script_naming_every_subcommand() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = completions(shell);
        for name in subcommands() {
            assert!(script.contains(&name), "{shell}: no {name}");
        }
    }
    let out = Command::new(BIN)
        .args(["completions", "tcsh"])
        .output()
        .expect("perflab completions");
    crate::common::one_line_exit_2(&out, "tcsh");
}

/// A man page rendered by man(1) as text (no hyphenation or justification, wide lines).
fn rendered(page: &Path) -> String {
    let out = Command::new("man")
        .arg("-l")
        .arg(page)
        .env("MANWIDTH", "200")
        .env("MAN_KEEP_FORMATTING", "")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output();
    let Ok(out) = out else {
        crate::common::skip_unless_required("man is not installed (Debian package `man-db`)");
        return std::fs::read_to_string(page).expect("page");
    };
    assert!(
        out.status.success(),
        "man -l {}: {}",
        page.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("warning"), "man -l {}: {err}", page.display());
    // Bold and underline come as overstrikes when not on a terminal: keep the letters.
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut plain = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\u{8}' {
            plain.pop();
        } else {
            plain.push(c);
        }
    }
    plain
}

#[test]
fn man_writes_a_page_per_subcommand_that_man_reads() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("man1");
    let out = Command::new(BIN).arg("man").arg(&dir).output().expect("perflab man");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let top = rendered(&dir.join("perflab.1"));
    assert!(top.contains("perflab - A performance lab in one binary"), "{top}");
    for name in subcommands() {
        assert!(top.contains(&name), "perflab.1 does not list {name}");
        let page = dir.join(format!("perflab-{name}.1"));
        assert!(page.is_file(), "no {}", page.display());
        let text = rendered(&page);
        assert!(text.contains(&format!("perflab-{name}")), "{}: {text}", page.display());
    }
    // A subcommand's page names its options, and nested subcommands have pages of their own.
    let run = rendered(&dir.join("perflab-run.1"));
    for opt in ["--dry-run", "--resume", "--runs-dir"] {
        assert!(run.contains(opt), "perflab-run.1 lacks {opt}: {run}");
    }
    assert!(dir.join("perflab-store-upgrade.1").is_file());
    assert!(!dir.join("perflab-help.1").exists(), "no page for clap's help subcommand");
    assert!(
        std::fs::read_dir(&dir)
            .expect("dir")
            .all(|e| e.expect("entry").file_name().to_string_lossy().ends_with(".1")),
        "nothing but the pages is left behind"
    );
}

#[test]
fn man_into_a_file_is_one_line_and_exit_code_2() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = tmp.path().join("not-a-dir");
    std::fs::write(&file, "x").expect("write");
    let out = Command::new(BIN).arg("man").arg(&file).output().expect("perflab man");
    crate::common::one_line_exit_2(&out, "not-a-dir");
    assert_eq!(std::fs::read(&file).expect("read"), b"x", "the file is untouched");
}
