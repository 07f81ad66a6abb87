//! Checks made before a run starts: the command names a program that exists, the adapter is known,
//! the timeout and directory make sense. Every problem is a one-line usage error (exit code 2).

use super::adapters;
use super::config::ExecConfig;
use crate::error::usage;
use crate::util::command::CommandLine;
use std::path::{Path, PathBuf};

/// Shell words that are not programs: a shell string starting with one is not checked.
const SHELL_WORDS: &[&str] = &[
    "cd", "exec", "for", "while", "if", "case", "{", "(", "!", "set", "export", "source", ".", "eval", "true", "false", "echo", "printf",
    "test", "[", "[[", "read", "ulimit", "umask", "trap", "until", "time",
];

/// Check `cfg` before the run: program on PATH (naming its Debian package when an adapter knows it),
/// adapter name, timeout, working directory.
pub fn preflight(cfg: &ExecConfig) -> anyhow::Result<()> {
    preflight_keyed(cfg).map_err(|(_, e)| e)
}

/// [`preflight`], with the `[workload]` key each problem is about (`command`, `warmup_command`,
/// `adapter`, `timeout`, `cwd`).
pub fn preflight_keyed(cfg: &ExecConfig) -> Result<(), (&'static str, anyhow::Error)> {
    check_command(&cfg.command, cfg).map_err(|e| ("command", e))?;
    if let Some(w) = &cfg.warmup_command {
        check_command(w, cfg).map_err(|e| ("warmup_command", usage(format!("warmup_command: {e:#}"))))?;
    }
    if let Some(name) = &cfg.adapter {
        if name != "none" && adapters::by_name(name).is_none() {
            let known: Vec<&str> = adapters::all().iter().map(|a| a.name()).collect();
            return Err((
                "adapter",
                usage(format!("unknown adapter `{name}` (known: {}, none)", known.join(", "))),
            ));
        }
    }
    cfg.timeout().map_err(|e| ("timeout", usage(e)))?;
    if let Some(dir) = &cfg.cwd {
        if !dir.is_dir() {
            return Err(("cwd", usage(format!("cwd `{}` is not a directory", dir.display()))));
        }
    }
    Ok(())
}

fn check_command(cmd: &CommandLine, cfg: &ExecConfig) -> anyhow::Result<()> {
    let words = cmd.words();
    if words.is_empty() || words.iter().all(|w| w.trim().is_empty()) {
        return Err(usage("command is empty"));
    }
    if matches!(cmd, CommandLine::Shell(_)) && SHELL_WORDS.contains(&words[0].as_str()) {
        return Ok(());
    }
    // The first program (a wrapper like `taskset` or `nice`) and the tool it wraps must both exist.
    let mut programs = vec![words[0].clone()];
    if let Some(tool) = adapters::tool_program(&words) {
        if !programs.contains(&tool) {
            programs.push(tool);
        }
    }
    for prog in programs {
        if matches!(cmd, CommandLine::Shell(_)) && prog.contains('=') {
            continue;
        }
        if find_program(&prog, cfg.cwd.as_deref(), cfg.env.get("PATH").map(String::as_str)).is_none() {
            let base = adapters::basename(&prog);
            let explicit = cfg.adapter.as_deref().and_then(adapters::by_name);
            let package = adapters::by_program(base).or(explicit.filter(|a| a.programs().contains(&base)));
            return Err(usage(match package {
                Some(a) => format!("{base} not found on PATH (Debian package: {})", a.debian_package()),
                None if prog.contains('/') => format!("`{prog}` not found or not executable"),
                None => format!("`{prog}` not found on PATH"),
            }));
        }
    }
    Ok(())
}

/// The path `prog` resolves to: as given when it contains a `/` (relative to `cwd`), else the first
/// executable match on PATH (the command's own PATH when its env sets one).
pub fn find_program(prog: &str, cwd: Option<&Path>, path: Option<&str>) -> Option<PathBuf> {
    if prog.contains('/') {
        let p = match cwd {
            Some(dir) if !Path::new(prog).is_absolute() => dir.join(prog),
            _ => PathBuf::from(prog),
        };
        return is_executable(&p).then_some(p);
    }
    let path = path.map(str::to_string).or_else(|| std::env::var("PATH").ok())?;
    std::env::split_paths(&path).map(|d| d.join(prog)).find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
