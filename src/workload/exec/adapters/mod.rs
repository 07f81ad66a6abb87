//! Tool adapters: turn a classic tool's output into perflab's result model. One file per tool; the
//! registry picks one from the program name (through wrappers such as `taskset` or `nice`) or by
//! explicit name.

pub mod ab;
pub mod fio;
pub mod iperf3;
pub mod json;
pub mod memtester;
pub mod pgbench;
pub mod stress_ng;
pub mod sysbench;
pub mod text;
pub mod wrk;

use super::process::Exit;
use crate::workload::{Primary, WorkloadResult};
use std::path::{Path, PathBuf};

/// What a tool left behind: the command's words, its working directory, output and exit status.
/// Adapters that need a file the tool wrote (fio `--output=F`, stress-ng `--yaml F`) find its name
/// in `args` and read it relative to `cwd`.
#[derive(Clone, Debug)]
pub struct ToolOutput {
    pub args: Vec<String>,
    pub cwd: Option<PathBuf>,
    pub stdout: String,
    pub stderr: String,
    pub exit: Exit,
}

impl ToolOutput {
    /// Output of a successful run (exit 0), for tests.
    pub fn new(args: &[&str], stdout: impl Into<String>, stderr: impl Into<String>, exit: Exit) -> Self {
        ToolOutput {
            args: args.iter().map(|s| s.to_string()).collect(),
            cwd: None,
            stdout: stdout.into(),
            stderr: stderr.into(),
            exit,
        }
    }

    /// The value of option `long` / `short` (`--yaml F`, `--yaml=F`, `-Y F`).
    pub fn option(&self, long: &str, short: Option<&str>) -> Option<String> {
        option(&self.args, long, short)
    }

    /// Read a file the tool wrote, relative to its working directory.
    pub fn read_file(&self, name: &str) -> Result<String, ParseError> {
        let p = match &self.cwd {
            Some(dir) if !Path::new(name).is_absolute() => dir.join(name),
            _ => PathBuf::from(name),
        };
        std::fs::read_to_string(&p).map_err(|e| ParseError::new(format!("cannot read the tool's output file {}: {e}", p.display())))
    }

    /// stdout then stderr, for tools that print on either.
    pub fn all_text(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

/// At most this much of a tool's output is kept with a parse failure.
pub const RAW_KEEP_BYTES: usize = 64 * 1024;

/// Output an adapter could not use, or the tool's own failure. `raw` keeps the lines that matter.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub reason: String,
    pub raw: Vec<String>,
}

impl ParseError {
    pub fn new(reason: impl Into<String>) -> Self {
        ParseError {
            reason: reason.into(),
            raw: Vec::new(),
        }
    }

    /// The failure `reason`, keeping the last lines of `text` (at most [`RAW_KEEP_BYTES`]).
    pub fn with_raw(reason: impl Into<String>, text: &str) -> Self {
        let mut raw = tail_lines(text, usize::MAX);
        let mut total: usize = raw.iter().map(|l| l.len() + 1).sum();
        let mut drop = 0;
        while total > RAW_KEEP_BYTES && drop < raw.len() {
            total -= raw[drop].len() + 1;
            drop += 1;
        }
        raw.drain(..drop);
        ParseError {
            reason: reason.into(),
            raw,
        }
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for ParseError {}

/// One tool.
pub trait Adapter: Send + Sync {
    /// The adapter's name (`fio`, `stress-ng`, ...), also accepted as `adapter = "..."`.
    fn name(&self) -> &'static str;
    /// Program names (basenames) that select this adapter.
    fn programs(&self) -> &[&'static str];
    /// The Debian package that provides the program.
    fn debian_package(&self) -> &'static str;
    /// Metrics from the output. A tool error or output without the expected figures is an `Err`.
    fn parse(&self, out: &ToolOutput) -> Result<WorkloadResult, ParseError>;
    /// Files named in `args` that the tool writes its report to (fio `--output`, stress-ng
    /// `--yaml`). The workload removes them before each run, so that a run that fails to write one
    /// can never be credited with a previous run's figures.
    fn output_files(&self, _args: &[String]) -> Vec<String> {
        Vec::new()
    }
    /// The tool's headline throughput and latency metrics (names its `parse` gives), in order of
    /// preference; none by default (the command's `wall_time_s` is then its latency).
    fn primary(&self) -> Primary {
        Primary::NONE
    }
}

/// The value of option `long` / `short` in `args` (`--yaml F`, `--yaml=F`, `-Y F`).
pub fn option(args: &[String], long: &str, short: Option<&str>) -> Option<String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == long || Some(a.as_str()) == short {
            return it.next().cloned();
        }
        if let Some(v) = a.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
            return Some(v.to_string());
        }
    }
    None
}

/// Every adapter.
pub fn all() -> &'static [&'static dyn Adapter] {
    &[
        &stress_ng::StressNg,
        &memtester::Memtester,
        &fio::Fio,
        &iperf3::Iperf3,
        &sysbench::Sysbench,
        &pgbench::Pgbench,
        &ab::Ab,
        &wrk::Wrk,
    ]
}

/// The adapter called `name`.
pub fn by_name(name: &str) -> Option<&'static dyn Adapter> {
    all().iter().copied().find(|a| a.name() == name)
}

/// The adapter for a program basename.
pub fn by_program(base: &str) -> Option<&'static dyn Adapter> {
    all().iter().copied().find(|a| a.programs().contains(&base))
}

/// The adapter for a command: explicit `name` (`"none"` = no adapter), else detected from the program.
pub fn select(explicit: Option<&str>, words: &[String]) -> Option<&'static dyn Adapter> {
    match explicit {
        Some("none") => None,
        Some(name) => by_name(name),
        None => tool_program(words).and_then(|p| by_program(basename(&p))),
    }
}

/// The last path component of a program.
pub fn basename(prog: &str) -> &str {
    prog.rsplit('/').next().unwrap_or(prog)
}

/// The program a command really runs, looking through common wrappers (`env A=B`, `nice -n 5`,
/// `taskset -c 0`, `numactl ...`, `timeout 10`, `chrt`, `ionice`, `stdbuf`, `sudo`) and leading
/// `VAR=value` assignments.
pub fn tool_program(words: &[String]) -> Option<String> {
    let i = crate::util::command::skip_wrappers(words, true);
    words.get(i).map(|w| w.to_string())
}

/// The last `n` lines of `text`, trimmed of blank ones.
pub fn tail_lines(text: &str, n: usize) -> Vec<String> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].iter().map(|l| l.to_string()).collect()
}
