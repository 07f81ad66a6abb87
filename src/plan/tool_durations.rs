//! How long an exec workload's command runs, read from its command line: the known tools' own
//! duration options (and their defaults), looked for through wrappers (`env`, `nice`, `taskset`,
//! `timeout N`, `sh -c "..."`). The dry run compares it with `[phases] load` (an exec command's run
//! time *is* its trial's load phase) and counts it in the estimate.
//!
//! Each tool's syntax is its own: stress-ng `-t/--timeout N[s|m|h|d|y]` (1 day by default); fio
//! `--runtime=N[us|ms|s|m|h|d]` plus `--ramp_time` (an upper bound unless `--time_based`); sysbench
//! `--time=N` (10 s by default; `--events=N` may end it first); iperf3 `-c` with `-t N` (10 s by
//! default) plus `-O N`; wrk `-d N[s|m|h]` (10 s by default); ab `-t N` (an upper bound: `-n` may
//! end it first); hey `-z` (a Go duration); pgbench `-T N`; `sleep`; `timeout N` (bounds the
//! command it runs). memtester and anything else: not known.

use crate::util::command::CommandLine;
use std::time::Duration;

/// How long a command runs, as far as its command line says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RunTime {
    /// This long (its duration option, or the tool's default).
    Exactly(Duration),
    /// At most this long: it stops earlier when its amount of work is done.
    AtMost(Duration),
    /// Not known from the command line.
    Unknown,
}

/// A command's run time with the words that set it (`stress-ng -t 60s`, `sysbench without --time
/// (10s by default)`), for messages.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolTime {
    pub what: String,
    pub time: RunTime,
}

impl ToolTime {
    fn new(what: impl Into<String>, time: RunTime) -> ToolTime {
        ToolTime { what: what.into(), time }
    }

    fn unknown(what: impl Into<String>) -> ToolTime {
        ToolTime::new(what, RunTime::Unknown)
    }

    /// The longest it can run, when known.
    pub fn bound(&self) -> Option<Duration> {
        match self.time {
            RunTime::Exactly(d) | RunTime::AtMost(d) => Some(d),
            RunTime::Unknown => None,
        }
    }
}

/// The run time of a command as a plan writes it (a list, or a string run with `sh -c`).
pub fn of_command(cmd: &CommandLine) -> ToolTime {
    match cmd {
        CommandLine::Argv(v) => of_argv(v),
        CommandLine::Shell(s) => of_script(s),
    }
}

/// The run time of an argv.
pub fn of_argv(words: &[String]) -> ToolTime {
    let start = crate::util::command::skip_wrappers(words, false);
    let Some(prog) = words.get(start) else {
        return ToolTime::unknown("the command");
    };
    let name = prog.rsplit('/').next().unwrap_or(prog);
    let args = &words[start + 1..];
    match name {
        "stress-ng" => stress_ng(args),
        "fio" => fio(args),
        "sysbench" => sysbench(args),
        "iperf3" => iperf3(args),
        "wrk" => wrk(args),
        "ab" => ab(args),
        "hey" => hey(args),
        "pgbench" => pgbench(args),
        "sleep" => sleep(args),
        "timeout" => timeout(args),
        "sh" | "bash" | "dash" | "zsh" | "ksh" => shell(name, args),
        _ => ToolTime::unknown(name),
    }
}

/// An option's value as written and the words that gave it (`-t 60s`, `--timeout=60s`): the last
/// occurrence, as getopt takes it. `attached`: a short option may carry its value (`-t60`).
fn opt(args: &[String], names: &[&str], attached: bool) -> Option<(String, String)> {
    let mut found = None;
    for (i, a) in args.iter().enumerate() {
        for n in names {
            if a == n {
                if let Some(v) = args.get(i + 1) {
                    found = Some((format!("{n} {v}"), v.clone()));
                }
            } else if let Some(v) = a.strip_prefix(n) {
                let long = n.starts_with("--") || n.len() > 2;
                if let Some(v) = v.strip_prefix('=').filter(|_| long || !attached) {
                    found = Some((a.clone(), v.to_string()));
                } else if attached && !long && !v.is_empty() {
                    found = Some((a.clone(), v.to_string()));
                }
            }
        }
    }
    found
}

/// Every value of an option, in order (fio's per-job options).
fn all_values(args: &[String], name: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if a == name {
            if let Some(v) = args.get(i + 1) {
                out.push((format!("{name} {v}"), v.clone()));
            }
        } else if let Some(v) = a.strip_prefix(name).and_then(|v| v.strip_prefix('=')) {
            out.push((a.clone(), v.to_string()));
        }
    }
    out
}

fn has(args: &[String], names: &[&str]) -> bool {
    args.iter().any(|a| names.contains(&a.as_str()))
}

/// A number followed by one of `units` (suffix, seconds per unit; the first is for no suffix).
fn number_with_unit(v: &str, units: &[(&str, f64)]) -> Option<Duration> {
    let v = v.trim();
    let end = v.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(v.len());
    let n: f64 = v[..end].parse().ok()?;
    let suffix = v[end..].to_ascii_lowercase();
    let (_, per) = units.iter().find(|(u, _)| *u == suffix)?;
    crate::util::duration::from_secs(n * per).ok()
}

const DAY: f64 = 86_400.0;
/// stress-ng's `--timeout` units.
const STRESS_NG_UNITS: &[(&str, f64)] = &[("", 1.0), ("s", 1.0), ("m", 60.0), ("h", 3600.0), ("d", DAY), ("y", 365.0 * DAY)];
/// fio's time units (a bare number is seconds).
const FIO_UNITS: &[(&str, f64)] = &[
    ("", 1.0),
    ("s", 1.0),
    ("sec", 1.0),
    ("us", 1e-6),
    ("usec", 1e-6),
    ("ms", 1e-3),
    ("msec", 1e-3),
    ("m", 60.0),
    ("min", 60.0),
    ("h", 3600.0),
    ("hour", 3600.0),
    ("d", DAY),
    ("day", DAY),
];
/// GNU sleep's and timeout's units.
const GNU_UNITS: &[(&str, f64)] = &[("", 1.0), ("s", 1.0), ("m", 60.0), ("h", 3600.0), ("d", DAY)];
/// wrk's units.
const WRK_UNITS: &[(&str, f64)] = &[("", 1.0), ("s", 1.0), ("m", 60.0), ("h", 3600.0)];
/// Whole seconds (ab, iperf3, sysbench, pgbench).
const SECONDS: &[(&str, f64)] = &[("", 1.0)];

/// A duration option read with `units`; 0 is "no limit" for every tool here.
fn timed(what: String, v: &str, units: &[(&str, f64)], exact: bool) -> ToolTime {
    match number_with_unit(v, units) {
        Some(d) if d.is_zero() => ToolTime::unknown(format!("{what} (no time limit)")),
        Some(d) if exact => ToolTime::new(what, RunTime::Exactly(d)),
        Some(d) => ToolTime::new(what, RunTime::AtMost(d)),
        None => ToolTime::unknown(format!("{what} (not a duration perflab can read)")),
    }
}

fn stress_ng(args: &[String]) -> ToolTime {
    if has(args, &["--seq", "--sequential", "--all", "--permute", "--job", "-a"]) {
        return ToolTime::unknown("stress-ng running its stressors one after another");
    }
    let ops = args
        .iter()
        .any(|a| a.starts_with("--") && (a.ends_with("-ops") || a.contains("-ops=")));
    match opt(args, &["-t", "--timeout"], true) {
        Some((shown, v)) => timed(format!("stress-ng {shown}"), &v, STRESS_NG_UNITS, !ops),
        None if ops => ToolTime::unknown("stress-ng with a bogo-ops count and no --timeout"),
        None => ToolTime::new(
            "stress-ng without --timeout (1 day by default)",
            RunTime::Exactly(Duration::from_secs(86_400)),
        ),
    }
}

fn fio(args: &[String]) -> ToolTime {
    let flags = ["--time_based", "--group_reporting"];
    let job_file = args
        .iter()
        .enumerate()
        .any(|(i, a)| !a.starts_with('-') && (i == 0 || args[i - 1].contains('=') || flags.contains(&args[i - 1].as_str())));
    let longest = |name: &str| -> Option<Result<(String, Duration), String>> {
        let vals = all_values(args, name);
        let mut best: Option<(String, Duration)> = None;
        for (shown, v) in vals {
            let Some(d) = number_with_unit(&v, FIO_UNITS) else {
                return Some(Err(format!("fio {shown}")));
            };
            if best.as_ref().is_none_or(|(_, b)| d > *b) {
                best = Some((shown, d));
            }
        }
        best.map(Ok)
    };
    let runtime = longest("--runtime").or_else(|| longest("--timeout"));
    let (shown, run) = match runtime {
        None if job_file => return ToolTime::unknown("fio with a job file"),
        None => return ToolTime::unknown("fio without --runtime (it runs until its --size is done)"),
        Some(Err(what)) => return ToolTime::unknown(format!("{what} (not a duration perflab can read)")),
        Some(Ok(r)) => r,
    };
    if run.is_zero() {
        return ToolTime::unknown(format!("fio {shown} (no time limit)"));
    }
    let ramp = match longest("--ramp_time") {
        Some(Ok((r, d))) => Some((r, d)),
        _ => None,
    };
    let time_based = args.iter().any(|a| a == "--time_based" || a == "--time_based=1");
    let mut what = format!("fio {shown}");
    if let Some((r, _)) = &ramp {
        what.push_str(&format!(" {r}"));
    }
    let total = run.saturating_add(ramp.map_or(Duration::ZERO, |(_, d)| d));
    if time_based {
        ToolTime::new(format!("{what} --time_based"), RunTime::Exactly(total))
    } else {
        ToolTime::new(format!("{what} without --time_based"), RunTime::AtMost(total))
    }
}

fn sysbench(args: &[String]) -> ToolTime {
    let command = args.iter().rfind(|a| !a.starts_with('-')).map(String::as_str);
    if command != Some("run") {
        return ToolTime::unknown(format!("sysbench {}", command.unwrap_or("without a command")));
    }
    let events = opt(args, &["--events", "--max-requests"], false).is_some_and(|(_, v)| v.trim() != "0");
    match opt(args, &["--time", "--max-time"], false) {
        Some((shown, v)) => timed(format!("sysbench {shown}"), &v, SECONDS, !events),
        None => {
            let d = Duration::from_secs(10);
            let what = "sysbench without --time (10s by default)";
            ToolTime::new(what, if events { RunTime::AtMost(d) } else { RunTime::Exactly(d) })
        }
    }
}

fn iperf3(args: &[String]) -> ToolTime {
    if !has(args, &["-c", "--client"]) {
        return ToolTime::unknown("iperf3 (not a client: it runs until stopped)");
    }
    if let Some((shown, _)) = opt(args, &["-n", "--bytes", "-k", "--blockcount"], true) {
        return ToolTime::unknown(format!("iperf3 {shown}"));
    }
    let omit = opt(args, &["-O", "--omit"], true).and_then(|(s, v)| Some((s, number_with_unit(&v, SECONDS)?)));
    let t = match opt(args, &["-t", "--time"], true) {
        Some((shown, v)) => timed(format!("iperf3 {shown}"), &v, SECONDS, true),
        None => ToolTime::new("iperf3 -c without -t (10s by default)", RunTime::Exactly(Duration::from_secs(10))),
    };
    match (t.time, omit) {
        (RunTime::Exactly(d), Some((shown, o))) => ToolTime::new(format!("{} {shown}", t.what), RunTime::Exactly(d.saturating_add(o))),
        _ => t,
    }
}

fn wrk(args: &[String]) -> ToolTime {
    match opt(args, &["-d", "--duration"], true) {
        Some((shown, v)) => timed(format!("wrk {shown}"), &v, WRK_UNITS, true),
        None => ToolTime::new("wrk without -d (10s by default)", RunTime::Exactly(Duration::from_secs(10))),
    }
}

fn ab(args: &[String]) -> ToolTime {
    match opt(args, &["-t"], true) {
        Some((shown, v)) => timed(format!("ab {shown}"), &v, SECONDS, false),
        None => ToolTime::unknown("ab without -t (it runs until its -n requests are done)"),
    }
}

fn hey(args: &[String]) -> ToolTime {
    match opt(args, &["-z", "--z"], false) {
        Some((shown, v)) => match go_duration(&v) {
            Some(d) if !d.is_zero() => ToolTime::new(format!("hey {shown}"), RunTime::Exactly(d)),
            _ => ToolTime::unknown(format!("hey {shown}")),
        },
        None => ToolTime::unknown("hey without -z (it runs until its -n requests are done)"),
    }
}

/// A Go duration (`1m30s`, `500ms`, `1.5h`).
fn go_duration(v: &str) -> Option<Duration> {
    let mut rest = v.trim();
    let mut secs = 0.0;
    while !rest.is_empty() {
        let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let n: f64 = rest[..end].parse().ok()?;
        let unit_end = rest[end..]
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .map_or(rest.len(), |i| end + i);
        let per = match &rest[end..unit_end] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        secs += n * per;
        rest = &rest[unit_end..];
    }
    crate::util::duration::from_secs(secs).ok()
}

fn pgbench(args: &[String]) -> ToolTime {
    if has(args, &["-i", "--initialize"]) {
        return ToolTime::unknown("pgbench -i");
    }
    match opt(args, &["-T", "--time"], true) {
        Some((shown, v)) => timed(format!("pgbench {shown}"), &v, SECONDS, true),
        None => ToolTime::unknown("pgbench without -T (it runs until its -t transactions are done)"),
    }
}

fn sleep(args: &[String]) -> ToolTime {
    let words: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let mut total = Duration::ZERO;
    for w in &words {
        match number_with_unit(w, GNU_UNITS) {
            Some(d) => total = total.saturating_add(d),
            None => return ToolTime::unknown(format!("sleep {w}")),
        }
    }
    let shown: Vec<&str> = words.iter().map(|w| w.as_str()).collect();
    ToolTime::new(format!("sleep {}", shown.join(" ")), RunTime::Exactly(total))
}

/// `timeout [OPTION] DURATION COMMAND...`: the command's own time, bounded by DURATION.
fn timeout(args: &[String]) -> ToolTime {
    let mut i = 0;
    while let Some(a) = args.get(i).filter(|a| a.starts_with('-')) {
        i += if matches!(a.as_str(), "-k" | "-s") { 2 } else { 1 };
    }
    let Some(limit) = args.get(i) else {
        return ToolTime::unknown("timeout");
    };
    let inner = of_argv(&args[i + 1..]);
    let Some(bound) = number_with_unit(limit, GNU_UNITS) else {
        return ToolTime::unknown(format!("timeout {limit}"));
    };
    if bound.is_zero() {
        return inner;
    }
    let stopped = || format!("timeout {limit} (stopping {})", inner.what);
    match inner.time {
        RunTime::Exactly(d) | RunTime::AtMost(d) if d <= bound => inner,
        RunTime::Exactly(_) => ToolTime::new(stopped(), RunTime::Exactly(bound)),
        RunTime::AtMost(_) | RunTime::Unknown => ToolTime::new(format!("timeout {limit} around {}", inner.what), RunTime::AtMost(bound)),
    }
}

/// `sh -c SCRIPT` (any flags holding `c`, such as `-ec`); a script file: not known.
fn shell(name: &str, args: &[String]) -> ToolTime {
    let c = args
        .iter()
        .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'));
    match c.and_then(|i| args.get(i + 1)) {
        Some(script) => of_script(script),
        None => ToolTime::unknown(name),
    }
}

/// Commands that take no time worth counting beside a tool in a script or pipeline.
const QUICK: &[&str] = &[
    "echo", "printf", "true", ":", "cd", "export", "set", "test", "[", "mkdir", "rm", "cp", "mv", "ln", "touch", "cat", "tee", "grep",
    "sed", "awk", "head", "tail", "sort", "wc", "cut", "tr", "sync", "date", "ulimit", "umask",
];
/// Shell words that make a script more than a list of commands.
const COMPOUND: &[&str] = &["for", "while", "until", "if", "case", "function", "{", "(", "select"];

/// A shell script: commands in sequence (`;`, `&&`, `||`, new lines) add up, the commands of a
/// pipeline (`|`, `&`) run side by side; quick commands (echo, tee, ...) count for nothing.
pub fn of_script(script: &str) -> ToolTime {
    if script.contains("$(") || script.contains('`') {
        return ToolTime::unknown("a shell script with command substitution");
    }
    let mut seq: Vec<ToolTime> = Vec::new();
    for pipeline in split_script(script) {
        let mut side: Vec<ToolTime> = Vec::new();
        for words in pipeline {
            let start = crate::util::command::skip_wrappers(&words, false);
            let Some(prog) = words.get(start) else { continue };
            let prog = prog.rsplit('/').next().unwrap_or(prog);
            if COMPOUND.contains(&prog) {
                return ToolTime::unknown("a shell script with loops or conditions");
            }
            if !QUICK.contains(&prog) {
                side.push(of_argv(&words));
            }
        }
        if let Some(t) = combine(side, false) {
            seq.push(t);
        }
    }
    combine(seq, true).unwrap_or_else(|| ToolTime::unknown("the script"))
}

/// Commands one after another (`sum`) or side by side.
fn combine(parts: Vec<ToolTime>, sum: bool) -> Option<ToolTime> {
    if parts.len() <= 1 {
        return parts.into_iter().next();
    }
    if let Some(u) = parts.iter().find(|p| p.time == RunTime::Unknown) {
        return Some(u.clone());
    }
    let exact = parts.iter().all(|p| matches!(p.time, RunTime::Exactly(_)));
    let bounds = parts.iter().filter_map(ToolTime::bound);
    let d = if sum {
        bounds.fold(Duration::ZERO, Duration::saturating_add)
    } else {
        bounds.max().unwrap_or_default()
    };
    let what: Vec<&str> = parts.iter().map(|p| p.what.as_str()).collect();
    let what = what.join(if sum { " then " } else { " beside " });
    Some(ToolTime::new(what, if exact { RunTime::Exactly(d) } else { RunTime::AtMost(d) }))
}

/// A script as a sequence of pipelines, each a list of commands' words (quotes removed, escapes
/// applied, redirections and comments dropped; no expansion).
fn split_script(s: &str) -> Vec<Vec<Vec<String>>> {
    let mut seq: Vec<Vec<Vec<String>>> = vec![vec![vec![]]];
    let mut word: Option<String> = None;
    let mut redirect = false;
    let mut chars = s.chars().peekable();
    let end_word = |word: &mut Option<String>, redirect: &mut bool, seq: &mut Vec<Vec<Vec<String>>>| {
        if let Some(w) = word.take() {
            if std::mem::take(redirect) {
                return;
            }
            if let Some(cmd) = seq.last_mut().and_then(|p| p.last_mut()) {
                cmd.push(w);
            }
        }
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\r' => end_word(&mut word, &mut redirect, &mut seq),
            '>' | '<' => {
                // `2>&1`, `>>file`, `<in`: the operator (with a leading fd number) and its target.
                if word.as_deref().is_some_and(|w| w.chars().all(|c| c.is_ascii_digit())) {
                    word = None;
                }
                end_word(&mut word, &mut redirect, &mut seq);
                while chars.next_if(|n| matches!(n, '>' | '<' | '&' | '|')).is_some() {}
                redirect = true;
            }
            '\n' | ';' | '&' | '|' | '(' | ')' => {
                end_word(&mut word, &mut redirect, &mut seq);
                let double = chars.next_if_eq(&c).is_some();
                let new_pipeline = matches!(c, '\n' | ';' | '(' | ')') || double;
                if new_pipeline {
                    seq.push(vec![vec![]]);
                } else if let Some(p) = seq.last_mut() {
                    p.push(vec![]);
                }
            }
            '#' if word.is_none() => while chars.next_if(|c| *c != '\n').is_some() {},
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                chars.by_ref().take_while(|c| *c != '\'').for_each(|c| w.push(c));
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => w.extend(chars.next()),
                        _ => w.push(c),
                    }
                }
            }
            '\\' => {
                let w = word.get_or_insert_with(String::new);
                w.extend(chars.next().filter(|c| *c != '\n'));
            }
            _ => word.get_or_insert_with(String::new).push(c),
        }
    }
    end_word(&mut word, &mut redirect, &mut seq);
    seq
}

/// An exec workload's times at one point: its command's, its warm-up's and its `timeout`.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecTimes {
    pub command: ToolTime,
    /// The warm-up command's (`warmup_command`, or the command itself with `warmup_run`); None
    /// when the plan's warm-up time passes idle.
    pub warmup: Option<ToolTime>,
    /// `timeout` (perflab stops the command then and the trial fails).
    pub timeout: Duration,
}

/// The times of an exec `[workload]` table after substitution; None when it has no command
/// perflab can read (validation says why).
pub fn exec_times(workload: &toml::Table) -> Option<ExecTimes> {
    use crate::workload::exec::config::{DurationSpec, DEFAULT_TIMEOUT};
    let command = |key: &str| workload.get(key).and_then(|v| v.clone().try_into::<CommandLine>().ok());
    let times = of_command(&command("command")?);
    let warmup = match command("warmup_command") {
        Some(w) => Some(of_command(&w)),
        None if workload.get("warmup_run").and_then(toml::Value::as_bool) == Some(true) => Some(times.clone()),
        None => None,
    };
    let timeout = workload
        .get("timeout")
        .and_then(|v| v.clone().try_into::<DurationSpec>().ok())
        .and_then(|d| d.get().ok())
        .unwrap_or(DEFAULT_TIMEOUT);
    Some(ExecTimes {
        command: times,
        warmup,
        timeout,
    })
}

#[cfg(test)]
#[path = "tool_durations_tests.rs"]
mod tests;
