//! `[target]` after `${name}` substitution → a typed description of the system under test.

use super::raw::TARGET_KEYS;
use super::source::Source;
use super::values;
use crate::util::command::CommandLine;
use crate::util::cpus::CpuSpec;
use std::time::Duration;
use toml::{Table, Value};

/// When the target counts as ready.
#[derive(Clone, Debug, PartialEq)]
pub enum Ready {
    None,
    Tcp { addr: String, timeout: Duration },
    Http { url: String, timeout: Duration },
    Log { pattern: LogPattern, timeout: Duration },
    Delay(Duration),
}

/// The regular expression of a `ready = { log = "..." }` check, compiled once when the plan is
/// validated. Two patterns are equal when their text is.
#[derive(Clone)]
pub struct LogPattern(regex::Regex);

impl LogPattern {
    pub fn new(pattern: &str) -> Result<LogPattern, regex::Error> {
        regex::Regex::new(pattern).map(LogPattern)
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    pub fn is_match(&self, line: &str) -> bool {
        self.0.is_match(line)
    }
}

impl PartialEq for LogPattern {
    fn eq(&self, other: &LogPattern) -> bool {
        self.as_str() == other.as_str()
    }
}

impl std::fmt::Debug for LogPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LogPattern").field(&self.as_str()).finish()
    }
}

/// The resource limits a target runs inside.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Limits {
    pub cpus: Option<CpuSpec>,
    /// Fractions of a CPU (1.5 = one and a half CPUs of time per period).
    pub cpu_quota: Option<f64>,
    /// Bytes.
    pub memory: Option<u64>,
}

impl Limits {
    pub fn is_empty(&self) -> bool {
        self.cpus.is_none() && self.cpu_quota.is_none() && self.memory.is_none()
    }
}

/// The target of one matrix point, every value typed: what the runner starts. Two targets are the
/// same configuration (a kept target is reused) when they are equal.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedTarget {
    pub command: CommandLine,
    pub cwd: Option<std::path::PathBuf>,
    pub env: Vec<(String, String)>,
    pub ready: Ready,
    pub stop_signal: i32,
    pub grace: Duration,
    pub limits: Limits,
    /// The `[hosts]` machine it runs on (`host = "server"`); `None` is this machine (`local`).
    pub host: Option<super::HostSpec>,
}

const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// The smallest CPU quota: the kernel's 1 ms of CPU time per 100 ms period.
pub const CPU_QUOTA_MIN: f64 = 0.01;
/// The largest CPU quota: as many CPUs as a machine can have.
pub const CPU_QUOTA_MAX: f64 = crate::util::cpus::MAX_CPUS as f64;

/// Resolve a substituted `[target]` table; errors name the key's place in the plan.
pub fn resolve(t: &Table, src: &Source, hosts: &[super::HostSpec]) -> anyhow::Result<ResolvedTarget> {
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
        Some(Value::String(s)) if s.is_empty() || s.contains('\0') => {
            return Err(err(&["cwd"], "[target] cwd: expected a directory's path".into()))
        }
        Some(Value::String(s)) => Some(std::path::PathBuf::from(s)),
        Some(other) => {
            return Err(err(
                &["cwd"],
                format!("[target] cwd: expected a path, found {}", values::describe(other)),
            ))
        }
        None => None,
    };
    let env = match t.get("env") {
        Some(Value::Table(e)) => env(e).map_err(|m| err(&["env"], format!("[target] env: {m}")))?,
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
        None => Ready::None,
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
            Some(q) if (CPU_QUOTA_MIN..=CPU_QUOTA_MAX).contains(&q) => Some(q),
            _ => {
                return Err(err(
                    &["cpu_quota"],
                    format!(
                        "[target] cpu_quota: expected a number of CPUs from {CPU_QUOTA_MIN} to {CPU_QUOTA_MAX}, found {}",
                        values::describe(v)
                    ),
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
                format!(
                    "[target] restart: expected \"per-trial\" or \"keep\", found {}",
                    values::describe(v)
                ),
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
        limits: Limits { cpus, cpu_quota, memory },
        host: host_named(t.get("host"), hosts).map_err(|m| err(&["host"], format!("[target] host: {m}")))?,
    })
}

/// `host = "server"`: a name of `[hosts]` (after `${name}` substitution), or `local`.
pub fn host_named(v: Option<&Value>, hosts: &[super::HostSpec]) -> Result<Option<super::HostSpec>, String> {
    match v {
        None => Ok(None),
        Some(Value::String(s)) if s == "local" => Ok(None),
        Some(Value::String(s)) => match hosts.iter().find(|h| &h.name == s) {
            Some(h) => Ok(Some(h.clone())),
            None => {
                let names: Vec<String> = hosts.iter().map(|h| format!("`{}`", h.name)).collect();
                Err(format!(
                    "no host named `{s}` in [hosts] (the plan names {}`local`)",
                    names.iter().map(|n| format!("{n}, ")).collect::<String>()
                ))
            }
        },
        Some(other) => Err(format!("expected a host's name, found {}", values::describe(other))),
    }
}

fn ready(r: &Table) -> Result<Ready, String> {
    let timeout = match r.get("timeout") {
        Some(v) => values::duration(v).map_err(|e| format!("timeout: {e}"))?,
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
            .ok_or_else(|| format!("{} expects a string, found {}", kinds[0], values::describe(v)))
    };
    Ok(match kinds[0].as_str() {
        "tcp" => Ready::Tcp {
            addr: checked_addr(&text()?)?,
            timeout,
        },
        "http" => Ready::Http {
            url: checked_url(&text()?)?,
            timeout,
        },
        "log" => Ready::Log {
            pattern: LogPattern::new(&text()?).map_err(|e| format!("log pattern is not a regular expression: {}", regex_error(&e)))?,
            timeout,
        },
        "delay" => Ready::Delay(values::duration(v).map_err(|e| format!("delay: {e}"))?),
        other => {
            let kinds = ["tcp", "http", "log", "delay", "timeout"];
            let hint = match crate::util::suggest::nearest(other, &kinds) {
                Some(c) => format!("did you mean `{c}`?"),
                None => "use tcp, http, log or delay".into(),
            };
            return Err(format!("unknown ready check `{}` ({hint})", crate::util::text::clip(other)));
        }
    })
}

/// Environment variables as strings (numbers and booleans as written); names and values a process
/// can receive.
fn env(e: &Table) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::with_capacity(e.len());
    for (k, v) in e {
        match v {
            Value::String(_) | Value::Integer(_) | Value::Float(_) | Value::Boolean(_) => out.push((k.clone(), values::display(v))),
            other => {
                return Err(format!(
                    "{}: expected a string, found {}",
                    crate::util::text::clip(k),
                    values::describe(other)
                ))
            }
        }
    }
    crate::util::command::check_env(out.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
    Ok(out)
}

/// `host:port` for a TCP ready check: a host and a port from 1 to 65535.
fn checked_addr(addr: &str) -> Result<String, String> {
    let shown = crate::util::text::clip(addr);
    match crate::util::url::host_port(addr) {
        Ok(_) => Ok(addr.to_string()),
        Err(why) if why.contains("port `") => Err(format!("tcp = \"{shown}\": {why}")),
        Err(why) => Err(format!("tcp = \"{shown}\" is not host:port (e.g. \"127.0.0.1:8080\"): {why}")),
    }
}

/// An `http://host[:port]/path` URL for the HTTP ready check (plain HTTP: the check speaks HTTP/1.1
/// without TLS).
fn checked_url(url: &str) -> Result<String, String> {
    let shown = crate::util::url::shown(url);
    let parsed = crate::util::url::Url::parse(url).map_err(|why| format!("http = \"{shown}\": {why}"))?;
    if parsed.scheme != "http" {
        return Err(format!(
            "http = \"{shown}\": the ready check needs an http:// URL (it speaks plain HTTP), e.g. \"http://127.0.0.1:8080/health\""
        ));
    }
    if parsed.host.is_empty() {
        return Err(format!("http = \"{shown}\" has no host"));
    }
    Ok(url.to_string())
}

/// The regex crate explains a syntax error over several lines, with a caret under the place: keep
/// its last line ("error: unclosed group").
fn regex_error(e: &regex::Error) -> String {
    let text = e.to_string();
    let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("invalid pattern");
    crate::util::text::clip(last.trim().trim_start_matches("error: "))
}

fn stop(s: &Table) -> Result<(i32, Duration), String> {
    if let Some(k) = s.keys().find(|k| *k != "signal" && *k != "grace") {
        return Err(format!("unknown key `{}` (use signal and grace)", crate::util::text::clip(k)));
    }
    let signal = s.get("signal").map(values::signal).transpose()?.unwrap_or(libc::SIGTERM);
    let grace = s
        .get("grace")
        .map(|g| values::duration(g).map_err(|e| format!("grace: {e}")))
        .transpose()?
        .unwrap_or(Duration::from_secs(5));
    Ok((signal, grace))
}
