//! What an installed CLI ships beside itself: shell completions (`perflab completions SHELL`, by
//! clap_complete) and man pages (`perflab man [DIR]`, by clap_mangen). Both are made from the clap
//! definition of every subcommand, the one `--help` prints, so they never drift from it.

use anyhow::Context;
use clap::CommandFactory;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for (bash, zsh, fish, elvish, powershell)
    pub shell: clap_complete::Shell,
}

#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// The directory to write the pages into (made if missing)
    #[arg(default_value = ".")]
    pub dir: PathBuf,
}

/// The completion script for `shell` on stdout. A reader that stops early (`| head`) is no error.
pub fn completions(a: CompletionsArgs) -> anyhow::Result<i32> {
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut super::Cli::command(), "perflab", &mut script);
    let mut out = std::io::stdout().lock();
    match out.write_all(&script).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e).context("cannot write the completions to stdout"),
        _ => Ok(0),
    }
}

/// Every man page: (file name, roff source), `perflab.1` first, then one page per subcommand at
/// every level (`perflab-run.1`, `perflab-store-upgrade.1`), hidden ones and `help` left out.
pub fn pages() -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    fn walk(cmd: &clap::Command, version: &str, out: &mut Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
        let man = clap_mangen::Man::new(cmd.clone()).source(format!("perflab {version}"));
        let mut roff = Vec::new();
        man.render(&mut roff)?;
        out.push((man.get_filename(), roff));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, version, out)?;
        }
        Ok(())
    }
    let mut cmd = super::Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, env!("CARGO_PKG_VERSION"), &mut out).context("cannot render the man pages")?;
    Ok(out)
}

/// Write every page into `a.dir` (each file whole or absent) and say where, in one line.
pub fn man(a: ManArgs) -> anyhow::Result<i32> {
    let pages = pages()?;
    let dir: &Path = &a.dir;
    if dir.exists() && !dir.is_dir() {
        return Err(crate::error::usage(format!(
            "{} is a file, not a directory for the man pages",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| crate::error::usage(format!("cannot make the directory {}: {}", dir.display(), e)))?;
    for (name, roff) in &pages {
        let path = dir.join(name);
        crate::util::fs::write_atomic(&path, roff).map_err(|e| crate::error::usage(format!("cannot write {}: {e}", path.display())))?;
    }
    println!(
        "wrote {} man pages to {} ({}, ...): man -l {}",
        pages.len(),
        dir.display(),
        pages.iter().take(3).map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", "),
        dir.join("perflab.1").display()
    );
    Ok(0)
}
