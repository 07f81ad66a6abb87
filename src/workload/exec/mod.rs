//! The `exec` workload: run any command as the load, record its exit status and wall time, keep the
//! tail of what it printed. Tool adapters (parsing what ab, wrk, fio, ... print) build on it.

use super::{Better, Metric, RunSpec, Workload, WorkloadResult};
use crate::util::Cancel;
use serde::Deserialize;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A command: an argv list, or one string run with `sh -c`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum CommandSpec {
    Argv(Vec<String>),
    Shell(String),
}

/// `[workload] type = "exec"`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecConfig {
    pub command: CommandSpec,
    #[serde(default)]
    pub cwd: Option<std::path::PathBuf>,
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// Give up (and fail the trial) after this long: `"10m"`. Default: no limit beyond Ctrl-C.
    #[serde(default)]
    pub timeout: Option<String>,
    /// Run the command during the warm-up too (its output is discarded). Default false: warm-up waits.
    #[serde(default)]
    pub warmup_run: bool,
}

/// Check before a run that the command can be found.
pub fn preflight(cfg: &ExecConfig) -> anyhow::Result<()> {
    if let Some(t) = &cfg.timeout {
        crate::util::duration::parse(t).map_err(|e| crate::error::usage(format!("timeout: {e}")))?;
    }
    match &cfg.command {
        CommandSpec::Argv(a) if a.is_empty() => Err(crate::error::usage("the command is empty")),
        CommandSpec::Argv(a) => {
            if a[0].contains('/') || which(&a[0]) {
                Ok(())
            } else {
                Err(crate::error::usage(format!("command `{}` not found in PATH", a[0])))
            }
        }
        CommandSpec::Shell(s) if s.trim().is_empty() => Err(crate::error::usage("the command is empty")),
        CommandSpec::Shell(_) => Ok(()),
    }
}

fn which(name: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
        .unwrap_or(false)
}

pub struct ExecWorkload {
    cfg: ExecConfig,
}

impl ExecWorkload {
    pub fn new(cfg: ExecConfig) -> ExecWorkload {
        ExecWorkload { cfg }
    }
}

/// What one run of the command gave.
pub struct Outcome {
    pub status: Option<i32>,
    pub wall: Duration,
    pub stdout: String,
    pub stderr: String,
    pub cancelled: bool,
    pub timed_out: bool,
}

/// Run the command in its own process group; on cancel or timeout the whole group is killed.
pub fn run_command(cfg: &ExecConfig, cancel: &Cancel) -> anyhow::Result<Outcome> {
    let mut cmd = match &cfg.command {
        CommandSpec::Argv(a) => {
            let mut c = Command::new(&a[0]);
            c.args(&a[1..]);
            c
        }
        CommandSpec::Shell(s) => {
            let mut c = Command::new("sh");
            c.arg("-c").arg(s);
            c
        }
    };
    if let Some(d) = &cfg.cwd {
        cmd.current_dir(d);
    }
    cmd.envs(&cfg.env).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let timeout = cfg.timeout.as_deref().and_then(|t| crate::util::duration::parse(t).ok());
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| anyhow::anyhow!("cannot start the command: {e}"))?;
    let pgid = child.id() as i32;
    let out_reader = reader(child.stdout.take());
    let err_reader = reader(child.stderr.take());
    let (mut cancelled, mut timed_out) = (false, false);
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if cancel.is_cancelled() || timeout.is_some_and(|t| start.elapsed() > t) {
            cancelled = cancel.is_cancelled();
            timed_out = !cancelled;
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            break child.wait()?;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let wall = start.elapsed();
    // Anything the group left running dies with the group.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    Ok(Outcome { status: status.code(), wall, stdout, stderr, cancelled, timed_out })
}

fn reader<R: Read + Send + 'static>(r: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut r) = r {
            let _ = r.read_to_end(&mut buf);
        }
        String::from_utf8_lossy(&buf).into_owned()
    })
}

fn tail(s: &str, lines: usize) -> String {
    let v: Vec<&str> = s.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

impl Workload for ExecWorkload {
    fn name(&self) -> String {
        "exec".into()
    }

    fn run(&mut self, spec: RunSpec, cancel: &Cancel, on_load_start: &mut dyn FnMut()) -> anyhow::Result<WorkloadResult> {
        if !spec.warmup.is_zero() {
            if self.cfg.warmup_run {
                run_command(&self.cfg, cancel)?;
            } else {
                cancel.sleep(spec.warmup);
            }
        }
        let mut res = WorkloadResult::default();
        if cancel.is_cancelled() {
            res.failure = Some("interrupted".into());
            return Ok(res);
        }
        on_load_start();
        let o = run_command(&self.cfg, cancel)?;
        res.metrics.push(Metric::new("wall_s", "s", o.wall.as_secs_f64(), Better::Lower));
        if let Some(code) = o.status {
            res.metrics.push(Metric::new("exit_code", "", f64::from(code), Better::Neither));
        }
        res.raw = o.stdout.lines().rev().take(200).collect::<Vec<_>>().into_iter().rev().map(str::to_string).collect();
        res.failure = if o.cancelled {
            Some("interrupted".into())
        } else if o.timed_out {
            Some(format!("the command ran longer than its timeout ({})", self.cfg.timeout.as_deref().unwrap_or("")))
        } else {
            match o.status {
                Some(0) => None,
                Some(c) => Some(format!("the command exited with status {c}: {}", tail(&o.stderr, 5))),
                None => Some(format!("the command was killed by a signal: {}", tail(&o.stderr, 5))),
            }
        };
        Ok(res)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(cmd: CommandSpec) -> ExecConfig {
        ExecConfig { command: cmd, cwd: None, env: Default::default(), timeout: None, warmup_run: false }
    }

    #[test]
    fn a_command_runs_and_its_status_is_kept() {
        let spec = RunSpec { warmup: Duration::ZERO, load: Duration::from_secs(1) };
        let mut ok = ExecWorkload::new(cfg(CommandSpec::Shell("echo hello".into())));
        let r = ok.run(spec, &Cancel::new(), &mut || {}).expect("runs");
        assert!(r.failure.is_none());
        assert_eq!(r.raw, ["hello"]);
        assert_eq!(r.metric("exit_code").map(|m| m.value), Some(0.0));
        let mut bad = ExecWorkload::new(cfg(CommandSpec::Shell("echo oops >&2; exit 3".into())));
        let r = bad.run(spec, &Cancel::new(), &mut || {}).expect("runs");
        assert!(r.failure.as_deref().unwrap_or("").contains("status 3: oops"));
    }

    #[test]
    fn a_missing_program_is_bad_input() {
        let e = preflight(&cfg(CommandSpec::Argv(vec!["no-such-program-xyz".into()]))).expect_err("missing");
        assert_eq!(crate::error::exit_code(&e), 2);
    }
}
