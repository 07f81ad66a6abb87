//! Checks made before a run starts: the command names a program that exists, the adapter is known,
//! the timeout and directory make sense. Every problem is a one-line usage error (exit code 2).

use super::adapters;
use super::config::ExecConfig;
use crate::error::usage;
use crate::util::command::CommandLine;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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
    crate::util::command::check_env(cfg.env.iter().map(|(k, v)| (k.as_str(), v.as_str()))).map_err(|e| ("env", usage(e)))?;
    if let Some(dir) = &cfg.cwd {
        if dir.as_os_str().is_empty() || dir.to_string_lossy().contains('\0') {
            return Err(("cwd", usage("cwd: expected a directory's path")));
        }
    }
    cfg.command.check().map_err(|e| ("command", usage(e)))?;
    check_command(&cfg.command, cfg).map_err(|e| ("command", e))?;
    if let Some(w) = &cfg.warmup_command {
        w.check().map_err(|e| ("warmup_command", usage(format!("warmup_command: {e}"))))?;
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
    if cfg.timeout().map_err(|e| ("timeout", usage(e)))?.is_zero() {
        return Err(("timeout", usage("timeout must be longer than 0s")));
    }
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

/// The program a command starts, when it can be checked before the run: `argv[0]`, or the first
/// word of a shell string unless that is a shell keyword or builtin, an assignment or an expansion.
pub fn program_of(cmd: &CommandLine) -> Option<String> {
    let words = cmd.words();
    let first = words.first()?.clone();
    if let CommandLine::Shell(_) = cmd {
        if SHELL_WORDS.contains(&first.as_str()) || first.contains(['=', '$', '`', '(', '<', '>', '|', ';', '&', '*', '?', '~']) {
            return None;
        }
    }
    Some(first)
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
    // A plan checks the same program at each of its points (100 000 of them: 900 000 path walks):
    // a program found is remembered for the process; one not found is looked for again.
    static FOUND: Mutex<Option<HashMap<(String, String), PathBuf>>> = Mutex::new(None);
    let key = (prog.to_string(), path);
    if let Some(found) = FOUND.lock().ok().and_then(|m| m.as_ref()?.get(&key).cloned()) {
        return Some(found);
    }
    let found = std::env::split_paths(&key.1).map(|d| d.join(prog)).find(|p| is_executable(p))?;
    if let Ok(mut m) = FOUND.lock() {
        m.get_or_insert_with(HashMap::new).insert(key, found.clone());
    }
    Some(found)
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
