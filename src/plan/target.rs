//! `[target]` after `${name}` substitution → a typed description of the system under test.

use super::raw::TARGET_KEYS;
use super::source::Source;
use super::values::{self, Command};
use crate::util::cpus::CpuSpec;
use std::time::Duration;
use toml::{Table, Value};

/// When the target counts as ready.
#[derive(Clone, Debug, PartialEq)]
pub enum ReadySpec {
    None,
    Tcp { addr: String, timeout: Duration },
    Http { url: String, timeout: Duration },
    Log { pattern: String, timeout: Duration },
    Delay(Duration),
}

/// The target of one matrix point, every value typed.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedTarget {
    pub command: Command,
    pub cwd: Option<std::path::PathBuf>,
    pub env: Vec<(String, String)>,
    pub ready: ReadySpec,
    pub stop_signal: i32,
    pub grace: Duration,
    pub cpus: Option<CpuSpec>,
    pub cpu_quota: Option<f64>,
    pub memory: Option<u64>,
}

const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// Resolve a substituted `[target]` table; errors name the key's place in the plan.
pub fn resolve(t: &Table, src: &Source) -> anyhow::Result<ResolvedTarget> {
    let err = |key: &[&str], msg: String| {
        let mut path = vec!["target"];
        path.extend_from_slice(key);
        src.error(&src.key_span(&path), msg)
    };
    for k in t.keys() {
        if !TARGET_KEYS.contains(&k.as_str()) {
            let hint = crate::util::suggest::nearest(k, TARGET_KEYS)
                .map(|c| format!(" (did you mean `{c}`?)"))
                .unwrap_or_default();
            return Err(err(&[k], format!("unknown key `{k}` in [target]{hint}")));
        }
    }
    let command = match t.get("command") {
        Some(v) => values::command(v).map_err(|m| err(&["command"], format!("[target] command: {m}")))?,
        None => return Err(err(&[], "[target] needs a `command`".into())),
    };
    let cwd = match t.get("cwd") {
        Some(Value::String(s)) => Some(std::path::PathBuf::from(s)),
        Some(other) => return Err(err(&["cwd"], format!("[target] cwd: expected a path, found {other}"))),
        None => None,
    };
    let env = match t.get("env") {
        Some(Value::Table(e)) => e.iter().map(|(k, v)| (k.clone(), values::display(v))).collect(),
        Some(_) => {
            return Err(err(
                &["env"],
                "[target] env: expected a table such as { RUST_LOG = \"info\" }".into(),
            ))
        }
        None => Vec::new(),
    };
    let ready = match t.get("ready") {
        Some(Value::Table(r)) => ready(r).map_err(|m| err(&["ready"], format!("[target] ready: {m}")))?,
        Some(_) => {
            return Err(err(
                &["ready"],
                "[target] ready: expected a table such as { tcp = \"127.0.0.1:8080\" }".into(),
            ))
        }
        None => ReadySpec::None,
    };
    let (stop_signal, grace) = match t.get("stop") {
        Some(Value::Table(s)) => stop(s).map_err(|m| err(&["stop"], format!("[target] stop: {m}")))?,
        Some(_) => {
            return Err(err(
                &["stop"],
                "[target] stop: expected { signal = \"SIGTERM\", grace = \"5s\" }".into(),
            ))
        }
        None => (libc::SIGTERM, Duration::from_secs(5)),
    };
    let cpus = match t.get("cpus") {
        Some(v) => Some(values::cpus(v).map_err(|m| err(&["cpus"], format!("[target] cpus: {m}")))?),
        None => None,
    };
    let cpu_quota = match t.get("cpu_quota") {
        Some(v) => match values::number(v) {
            Some(q) if q > 0.0 => Some(q),
            _ => {
                return Err(err(
                    &["cpu_quota"],
                    format!("[target] cpu_quota: expected a positive number of CPUs, found {v}"),
                ))
            }
        },
        None => None,
    };
    let memory = match t.get("memory") {
        Some(v) => Some(values::memory(v).map_err(|m| err(&["memory"], format!("[target] memory: {m}")))?),
        None => None,
    };
    if let Some(v) = t.get("restart") {
        if !matches!(v.as_str(), Some("per-trial" | "keep")) {
            return Err(err(
                &["restart"],
                format!("[target] restart: expected \"per-trial\" or \"keep\", found {v}"),
            ));
        }
    }
    Ok(ResolvedTarget {
        command,
        cwd,
        env,
        ready,
        stop_signal,
        grace,
        cpus,
        cpu_quota,
        memory,
    })
}

fn ready(r: &Table) -> Result<ReadySpec, String> {
    let timeout = match r.get("timeout") {
        Some(v) => values::duration(v)?,
        None => READY_TIMEOUT,
    };
    let kinds: Vec<&String> = r.keys().filter(|k| *k != "timeout").collect();
    if kinds.len() != 1 {
        return Err("give exactly one of tcp, http, log or delay (and optionally timeout)".into());
    }
    let v = &r[kinds[0].as_str()];
    let text = || {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("{} expects a string", kinds[0]))
    };
    Ok(match kinds[0].as_str() {
        "tcp" => ReadySpec::Tcp { addr: text()?, timeout },
        "http" => ReadySpec::Http { url: text()?, timeout },
        "log" => {
            let pattern = text()?;
            // regex's message draws the pattern over several lines; its last line says what is wrong.
            regex::Regex::new(&pattern).map_err(|e| {
                let why = e
                    .to_string()
                    .lines()
                    .last()
                    .unwrap_or_default()
                    .trim_start_matches("error: ")
                    .to_string();
                format!("log pattern is not a regular expression: {why}")
            })?;
            ReadySpec::Log { pattern, timeout }
        }
        "delay" => ReadySpec::Delay(values::duration(v)?),
        other => {
            let kinds = ["tcp", "http", "log", "delay", "timeout"];
            let hint = match crate::util::suggest::nearest(other, &kinds) {
                Some(c) => format!("did you mean `{c}`?"),
                None => "use tcp, http, log or delay".into(),
            };
            return Err(format!("unknown ready check `{other}` ({hint})"));
        }
    })
}

fn stop(s: &Table) -> Result<(i32, Duration), String> {
    if let Some(k) = s.keys().find(|k| *k != "signal" && *k != "grace") {
        return Err(format!("unknown key `{k}` (use signal and grace)"));
    }
    let signal = s.get("signal").map(values::signal).transpose()?.unwrap_or(libc::SIGTERM);
    let grace = s.get("grace").map(values::duration).transpose()?.unwrap_or(Duration::from_secs(5));
    Ok((signal, grace))
}
