//! [`ExecWorkload`]: one trial runs the optional warm-up command, then the measured command to
//! completion, then its adapter.

use super::adapters::{self, Adapter, ToolOutput};
use super::config::ExecConfig;
use super::process::{self, Exit, Finished, Stopped};
use crate::util::command::CommandLine;
use crate::util::Cancel;
use crate::workload::{Better, Metric, MetricKind, Primary, Produces, RunSpec, Unmet, Workload, WorkloadResult};

/// At most this much of the command's output is kept in `raw` when a run fails.
const RAW_KEEP_BYTES: usize = 64 * 1024;

/// Runs a command; see [`ExecConfig`].
pub struct ExecWorkload {
    cfg: ExecConfig,
    adapter: Option<&'static dyn Adapter>,
    /// Where the command runs when not on this machine (a remote host's agent).
    elsewhere: Option<Box<dyn Runner>>,
}

/// Runs a command on another machine, to its end, its `timeout` or `cancel`.
pub trait Runner: Send {
    fn run(
        &self,
        argv: &[String],
        cwd: Option<&std::path::Path>,
        env: &std::collections::BTreeMap<String, String>,
        timeout: std::time::Duration,
        cancel: &Cancel,
    ) -> anyhow::Result<Finished>;
}

impl ExecWorkload {
    pub fn new(cfg: ExecConfig) -> Self {
        let adapter = adapters::select(cfg.adapter.as_deref(), &cfg.command.words());
        ExecWorkload {
            cfg,
            adapter,
            elsewhere: None,
        }
    }

    /// The same workload, its commands run by `runner` (on another machine) and read by the same
    /// adapter.
    pub fn on(mut self, runner: Box<dyn Runner>) -> Self {
        self.elsewhere = Some(runner);
        self
    }

    /// The adapter that will parse the output, if any.
    pub fn adapter(&self) -> Option<&'static dyn Adapter> {
        self.adapter
    }

    fn spawn(&self, cmd: &CommandLine, cancel: &Cancel) -> anyhow::Result<Finished> {
        let timeout = self.cfg.timeout().map_err(crate::error::usage)?;
        if let Some(r) = &self.elsewhere {
            return r.run(&cmd.argv(), self.cfg.cwd.as_deref(), &self.cfg.env, timeout, cancel);
        }
        process::run(&cmd.argv(), self.cfg.cwd.as_deref(), &self.cfg.env, timeout, cancel)
    }
}

impl Workload for ExecWorkload {
    fn name(&self) -> String {
        match self.adapter {
            Some(a) => format!("exec:{}", a.name()),
            None => "exec".into(),
        }
    }

    fn facts(&self) -> Option<String> {
        Some(match self.adapter {
            Some(a) => format!("output read by the {} adapter", a.name()),
            None => "no adapter: exit status, wall and CPU time".into(),
        })
    }

    fn primary(&self) -> Primary {
        let mut p = self.adapter.map_or(Primary::NONE, |a| a.primary());
        if p.latency.is_empty() {
            // Every command has its run time.
            p.latency = &["wall_time_s"];
        }
        p
    }

    fn metrics(&self) -> Produces {
        super::names::produces(self.adapter, &self.cfg.command.words())
    }

    fn preflight(&self) -> Result<(), Unmet> {
        super::preflight::preflight_keyed(&self.cfg).map_err(|(key, error)| Unmet { key: Some(key), error })
    }

    fn run(&mut self, spec: RunSpec, cancel: &Cancel, on_load_start: &mut dyn FnMut()) -> anyhow::Result<WorkloadResult> {
        let warmup = match (&self.cfg.warmup_command, self.cfg.warmup_run) {
            (Some(w), _) => Some(w.clone()),
            (None, true) => Some(self.cfg.command.clone()),
            (None, false) => None,
        };
        if warmup.is_none() && !spec.warmup.is_zero() {
            cancel.sleep(spec.warmup);
        }
        if cancel.is_cancelled() {
            return Ok(WorkloadResult {
                failure: Some("interrupted".into()),
                ..Default::default()
            });
        }
        if let Some(w) = warmup {
            let f = self.spawn(&w, cancel)?;
            if let Some(why) = stop_or_exit_failure(&f, &w, self.cfg.timeout().unwrap_or_default()) {
                let mut r = WorkloadResult {
                    failure: Some(format!("warm-up command: {why}")),
                    ..Default::default()
                };
                r.raw = keep_raw(&f);
                return Ok(r);
            }
        }
        if let Err(why) = self.remove_stale_outputs() {
            return Ok(WorkloadResult {
                failure: Some(why),
                ..Default::default()
            });
        }
        on_load_start();
        let f = self.spawn(&self.cfg.command, cancel)?;
        Ok(self.result(&f))
    }
}

impl ExecWorkload {
    /// Remove the report files the tool will write (see [`Adapter::output_files`]).
    fn remove_stale_outputs(&self) -> Result<(), String> {
        let Some(a) = self.adapter else { return Ok(()) };
        if self.elsewhere.is_some() {
            return Ok(()); // they are on the other machine
        }
        for name in a.output_files(&self.cfg.command.words()) {
            let path = match &self.cfg.cwd {
                Some(dir) if !std::path::Path::new(&name).is_absolute() => dir.join(&name),
                _ => std::path::PathBuf::from(&name),
            };
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("cannot remove the previous report {}: {e}", path.display())),
            }
        }
        Ok(())
    }

    /// The result of one finished run: the command's own figures, then the adapter's.
    pub fn result(&self, f: &Finished) -> WorkloadResult {
        let mut r = WorkloadResult {
            metrics: command_metrics(f),
            ..Default::default()
        };
        if f.truncated {
            r.raw.push(format!(
                "(output longer than {} MiB: only its last {} MiB were kept)",
                process::CAPTURE_LIMIT >> 20,
                process::CAPTURE_LIMIT >> 20
            ));
        }
        let timeout = self.cfg.timeout().unwrap_or_default();
        if let Some(why) = stop_or_exit_failure(f, &self.cfg.command, timeout).filter(|_| f.stopped.is_some()) {
            r.failure = Some(why);
            r.raw = keep_raw(f);
            return r;
        }
        let Some(adapter) = self.adapter else {
            if let Some(why) = stop_or_exit_failure(f, &self.cfg.command, timeout) {
                r.failure = Some(why);
                r.raw = keep_raw(f);
            }
            return r;
        };
        let out = ToolOutput {
            args: self.cfg.command.words(),
            cwd: self.cfg.cwd.clone(),
            stdout: f.stdout.clone(),
            stderr: f.stderr.clone(),
            exit: f.exit,
        };
        match adapter.parse(&out) {
            Ok(parsed) => {
                merge(&mut r, parsed);
                if r.failure.is_none() {
                    r.failure = stop_or_exit_failure(f, &self.cfg.command, timeout);
                    if r.failure.is_some() && r.raw.is_empty() {
                        r.raw = keep_raw(f);
                    }
                }
            }
            Err(e) => {
                r.failure = Some(if e.reason.starts_with(&format!("{}: ", adapter.name())) {
                    e.reason
                } else {
                    format!("{}: {}", adapter.name(), e.reason)
                });
                r.raw = if e.raw.is_empty() { keep_raw(f) } else { e.raw };
            }
        }
        r
    }
}

/// wall time, CPU time, peak RSS and exit status of the command.
fn command_metrics(f: &Finished) -> Vec<Metric> {
    let code = match f.exit {
        Exit::Code(c) => c as f64,
        Exit::Signal(s) => 128.0 + s as f64,
    };
    vec![
        Metric::new("wall_time_s", "s", f.wall.as_secs_f64(), Better::Lower),
        Metric::new("cpu_user_s", "s", f.user.as_secs_f64(), Better::Lower),
        Metric::new("cpu_system_s", "s", f.system.as_secs_f64(), Better::Lower),
        Metric::new("max_rss_mb", "MiB", f.max_rss_kb as f64 / 1024.0, Better::Lower),
        Metric::new("exit_status", "", code, Better::Neither).with_kind(MetricKind::Gauge),
    ]
}

/// Why a run counts as failed by perflab's own rules: stopped early, or a non-zero exit.
fn stop_or_exit_failure(f: &Finished, cmd: &CommandLine, timeout: std::time::Duration) -> Option<String> {
    match f.stopped {
        Some(Stopped::Cancelled) => return Some("interrupted".into()),
        Some(Stopped::TimedOut) => {
            return Some(format!(
                "`{}` timed out after {}",
                cmd.display(),
                crate::util::duration::format(timeout)
            ))
        }
        None => {}
    }
    if f.exit == Exit::Code(0) {
        return None;
    }
    let last = adapters::tail_lines(&f.stderr, 1)
        .pop()
        .or_else(|| adapters::tail_lines(&f.stdout, 1).pop());
    Some(match last {
        Some(line) => format!("`{}` failed with {}: {}", cmd.display(), f.exit, line.trim()),
        None => format!("`{}` failed with {}", cmd.display(), f.exit),
    })
}

/// The tail of stdout and stderr (at most 64 KiB together), for the record.
fn keep_raw(f: &Finished) -> Vec<String> {
    let mut lines: Vec<String> = f.stdout.lines().chain(f.stderr.lines()).map(str::to_string).collect();
    let mut total: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut drop = 0;
    while total > RAW_KEEP_BYTES && drop < lines.len() {
        total -= lines[drop].len() + 1;
        drop += 1;
    }
    lines.drain(..drop);
    lines
}

/// Add an adapter's result to the command's.
fn merge(into: &mut WorkloadResult, from: WorkloadResult) {
    for m in from.metrics {
        into.metrics.retain(|x| x.name != m.name);
        into.metrics.push(m);
    }
    into.histograms.extend(from.histograms);
    into.series.extend(from.series);
    into.errors.extend(from.errors);
    into.raw.extend(from.raw);
    if from.failure.is_some() {
        into.failure = from.failure;
    }
}
