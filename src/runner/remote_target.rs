//! A target on a remote host (`[target] host = "server"`): started inside its limits, watched and
//! stopped by that host's agent over its own ssh channel, opened for this target (so that a channel
//! lost in one trial is reconnected for the next). A `log` ready check is read on the host; `tcp`,
//! `http` and delay checks are made from this machine, as a client would. When the channel is lost,
//! the agent stops the target's process group and removes its cgroups on its own.

use super::target::{http_ok, tcp_accepts, Stopped};
use crate::plan::{HostSpec, MonitorHosts, Ready, ResolvedTarget};
use crate::remote::protocol::{self, CommandSpec, Event, Request, Started, TargetSpec, TargetStatus};
use crate::remote::{clock, Channel, Measured, Offset};
use crate::util::command::CommandLine;
use crate::util::Cancel;
use std::time::{Duration, Instant};

/// How long an ordinary request to the agent may take.
const CALL: Duration = Duration::from_secs(30);

/// A target started by a host's agent.
pub struct RemoteTarget {
    ch: Channel,
    /// The target's name on the agent.
    name: String,
    /// Its pid on the host (the leader of its process group there).
    pub pid: i32,
    pub mechanism: String,
    pub proof: String,
    grace: Duration,
    /// The host's clock offset as measured in this trial (at its start, then at its end).
    clocks: Vec<Measured>,
    exited: Option<String>,
}

/// One sampling interval of a remote host, placed on this machine's timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteSample {
    /// The plan's name for the host.
    pub host: String,
    /// This machine's unix time of the sample (the host's time minus its clock offset).
    pub unix_s: f64,
    /// The monitor's columns; the target's process tree as `proc_target_*`.
    pub values: Vec<(String, f64)>,
}

/// One remote host's latest sample as it arrives, for the live feed (`host` events): the samples
/// themselves stay queued for the trial's end, which stores them.
pub struct HostTap {
    /// The plan's name for the host.
    pub host: String,
    latest: crate::remote::channel::LatestSample,
    /// The host's clock offset as measured when its sampling began.
    clocks: Vec<Measured>,
    /// The target's process tree's prefix on the agent (`proc_NAME_`), named `proc_target_` as
    /// the trial's end names it.
    rename: Option<String>,
    /// Whether the host's own system is monitored (`[monitor] hosts`), or only the target's tree.
    system: bool,
    seen: u64,
}

impl HostTap {
    pub fn new(ch: &Channel, clocks: &[Measured], target: Option<&str>, monitored: &MonitorHosts) -> HostTap {
        HostTap {
            host: ch.host.clone(),
            latest: ch.latest_sample(),
            clocks: clocks.to_vec(),
            rename: target.map(|n| format!("proc_{n}_")),
            system: monitored.includes(&ch.host),
            seen: 0,
        }
    }

    /// The host's latest sample when one came since the last call: this machine's unix time (the
    /// host's minus its offset) and its values as the trial stores them.
    pub fn fresh(&mut self) -> Option<(f64, Vec<(String, f64)>)> {
        let l = self.latest.lock().ok()?;
        if l.0 == self.seen {
            return None;
        }
        self.seen = l.0;
        let (unix_s, values) = l.1.clone()?;
        drop(l);
        let values = values
            .into_iter()
            .map(|(k, v)| match self.rename.as_deref().and_then(|p| k.strip_prefix(p)) {
                Some(rest) => (format!("proc_target_{rest}"), v),
                None => (k, v),
            })
            .filter(|(k, _)| self.system || k.starts_with("proc_target_"))
            .collect();
        Some((unix_s - clock::offset_at(&self.clocks, unix_s), values))
    }
}

/// The agent's description of a plan's target.
pub fn spec(cfg: &ResolvedTarget) -> TargetSpec {
    TargetSpec {
        command: match &cfg.command {
            CommandLine::Argv(a) => CommandSpec::Argv(a.clone()),
            CommandLine::Shell(s) => CommandSpec::Shell(s.clone()),
        },
        cwd: cfg.cwd.as_ref().map(|p| p.display().to_string()),
        env: cfg.env.clone(),
        stop_signal: cfg.stop_signal,
        grace_s: cfg.grace.as_secs_f64(),
        cpus: cfg.limits.cpus.as_ref().map(|c| match c {
            crate::util::cpus::CpuSpec::Count(n) => n.to_string(),
            crate::util::cpus::CpuSpec::List(l) => crate::util::cpus::format_cpu_list(l),
        }),
        cpu_quota: cfg.limits.cpu_quota,
        memory: cfg.limits.memory,
    }
}

impl RemoteTarget {
    /// Reach `host`'s agent and start the target there as `name`.
    pub fn launch(cfg: &ResolvedTarget, host: &HostSpec, name: &str) -> anyhow::Result<RemoteTarget> {
        let mut ch = crate::remote::open(host)?;
        let st: Started = ch.call(
            Request::Start {
                name: name.to_string(),
                target: spec(cfg),
            },
            CALL,
        )?;
        Ok(RemoteTarget {
            ch,
            name: name.to_string(),
            pid: st.pid,
            mechanism: st.mechanism,
            proof: st.proof,
            grace: cfg.grace,
            clocks: Vec::new(),
            exited: None,
        })
    }

    /// The plan's name for the host.
    pub fn host(&self) -> &str {
        &self.ch.host
    }

    /// The pid of the local ssh client carrying the channel.
    pub fn channel_pid(&self) -> u32 {
        self.ch.pid()
    }

    /// The host's clock offset, as last measured.
    pub fn offset(&self) -> Option<Offset> {
        self.clocks.last().map(|m| Offset {
            offset_s: m.offset_s,
            uncertainty_s: m.uncertainty_s,
            rtt_s: m.rtt_s,
        })
    }

    /// Wait until the target is ready: a log line is waited for on the host, the other checks are
    /// made here.
    pub fn wait_ready(&mut self, ready: &Ready, cancel: &Cancel) -> anyhow::Result<()> {
        let start = Instant::now();
        let (timeout, what) = match ready {
            Ready::None => return Ok(()),
            Ready::Log { pattern, timeout } => {
                let req = Request::Ready {
                    name: self.name.clone(),
                    log: pattern.as_str().to_string(),
                    timeout_s: timeout.as_secs_f64(),
                };
                return self.ch.call::<serde_json::Value>(req, *timeout + CALL).map(|_| ());
            }
            Ready::Delay(d) => (*d, String::new()),
            Ready::Tcp { addr, timeout } => (*timeout, format!("port {addr} to accept")),
            Ready::Http { url, timeout } => (*timeout, format!("{url} to answer 200")),
        };
        let mut polled = Instant::now();
        loop {
            if cancel.is_cancelled() {
                anyhow::bail!("interrupted while waiting for the target to become ready");
            }
            if polled.elapsed() >= Duration::from_millis(250) {
                polled = Instant::now();
                if let Some(how) = self.exited() {
                    anyhow::bail!("target {how} before it was ready");
                }
            }
            let ok = match ready {
                Ready::Delay(d) => start.elapsed() >= *d,
                Ready::Tcp { addr, .. } => tcp_accepts(addr),
                Ready::Http { url, .. } => http_ok(url),
                Ready::None | Ready::Log { .. } => true,
            };
            if ok {
                return Ok(());
            }
            if !matches!(ready, Ready::Delay(_)) && start.elapsed() > timeout {
                anyhow::bail!(
                    "target was not ready after {}: waited for {what}",
                    crate::util::duration::format(timeout)
                );
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// `Some(description)` once the target has exited on the host, or its channel is lost (then
    /// the agent has stopped it).
    pub fn exited(&mut self) -> Option<String> {
        if self.exited.is_none() {
            self.exited = match self.ch.lost() {
                Some(e) => Some(format!("was lost with its host's channel ({})", crate::error::one_line(&e))),
                None => match self.ch.call::<TargetStatus>(Request::Status { name: self.name.clone() }, CALL) {
                    Ok(s) => s.died,
                    Err(e) => Some(format!("could not be watched ({})", crate::error::one_line(&e))),
                },
            };
        }
        self.exited.clone()
    }

    /// Measure the host's clock offset again and have the agent sample the host and the target's
    /// process tree every `interval` (replacing any earlier sampling). Returns a warning when the
    /// offset's uncertainty exceeds a tenth of the interval.
    pub fn begin_sampling(&mut self, interval: Duration) -> anyhow::Result<Option<String>> {
        let o = self.ch.clock(crate::remote::CLOCK_EXCHANGES)?;
        self.clocks = vec![Measured::now(&self.ch.host, &o)];
        self.ch.call::<serde_json::Value>(
            Request::Sample {
                interval_s: interval.as_secs_f64().max(0.01),
                // The trial's shared grid, on the host's clock.
                first_tick_unix_s: Some(crate::monitor::grid_tick(crate::util::time::unix_now(), interval) + o.offset_s),
                targets: vec![self.name.clone()],
                pids: Vec::new(),
            },
            CALL,
        )?;
        Ok(clock_warning(&self.ch.host, &o, interval))
    }

    /// A live tap on the host's samples (call after [`begin_sampling`](Self::begin_sampling)).
    pub fn tap(&self, monitored: &MonitorHosts) -> HostTap {
        HostTap::new(&self.ch, &self.clocks, Some(&self.name), monitored)
    }

    /// The samples received so far, on this machine's timeline, and the trial's clock measurements:
    /// the offset is measured once more (when the channel still stands) and each sample is placed
    /// with the offset of its time, between the measurements (`clock::offset_at`).
    pub fn take_samples(&mut self) -> (Vec<RemoteSample>, Vec<Measured>) {
        if !self.clocks.is_empty() && self.ch.lost().is_none() {
            if let Ok(o) = self.ch.clock(crate::remote::CLOCK_EXCHANGES) {
                self.clocks.push(Measured::now(&self.ch.host, &o));
            }
        }
        let prefix = format!("proc_{}_", self.name);
        let mut out = Vec::new();
        while let Ok(e) = self.ch.events().try_recv() {
            if let Event::Sample { unix_s, values, .. } = e {
                let values = values
                    .into_iter()
                    .map(|(k, v)| match k.strip_prefix(&prefix) {
                        Some(rest) => (format!("proc_target_{rest}"), v),
                        None => (k, v),
                    })
                    .collect();
                out.push(RemoteSample {
                    host: self.ch.host.clone(),
                    unix_s: unix_s - clock::offset_at(&self.clocks, unix_s),
                    values,
                });
            }
        }
        (out, std::mem::take(&mut self.clocks))
    }

    /// Start perf on the host for a profile of this target (its events disabled until enabled).
    pub fn profile_start(&mut self, kind: &str, scope: &str, frequency_hz: u32, call_graph: &str) -> anyhow::Result<()> {
        let req = Request::ProfileStart {
            kind: kind.to_string(),
            target: Some(self.name.clone()),
            scope: scope.to_string(),
            frequency_hz,
            call_graph: call_graph.to_string(),
        };
        // perf takes up to a few seconds to start on a busy host.
        self.ch.call::<serde_json::Value>(req, CALL + Duration::from_secs(30)).map(|_| ())
    }

    /// Open (`enable`) or close (`disable`) the windows of the host's profiles.
    pub fn profile_call(&mut self, what: &str) -> anyhow::Result<()> {
        let req = if what == "enable" {
            Request::ProfileEnable
        } else {
            Request::ProfileDisable
        };
        self.ch.call::<serde_json::Value>(req, CALL).map(|_| ())
    }

    /// Stop perf on the host and take its profiles (their times count from the window's opening).
    pub fn profile_stop(&mut self) -> anyhow::Result<Vec<crate::model::Profile>> {
        // Folding the stacks takes a while on a busy host.
        self.ch.call(Request::ProfileStop, CALL + Duration::from_secs(60))
    }

    /// Stop the target on the host (its stop signal, grace, SIGKILL; cgroups removed) and close
    /// the channel. A target lost with its channel was already stopped by the agent.
    pub fn stop(mut self) -> anyhow::Result<Stopped> {
        if let Some(e) = self.ch.lost() {
            return Ok(Stopped {
                stdout_tail: String::new(),
                stderr_tail: String::new(),
                died: Some(format!("was lost with its host's channel ({})", crate::error::one_line(&e))),
            });
        }
        let _ = self.ch.call::<serde_json::Value>(Request::SampleStop, CALL);
        let s: protocol::Stopped = self.ch.call(Request::Stop { name: self.name.clone() }, self.grace + CALL)?;
        self.ch.close()?;
        Ok(Stopped {
            stdout_tail: s.stdout_tail,
            stderr_tail: s.stderr_tail,
            died: s.died,
        })
    }
}

/// A warning when `o`'s uncertainty exceeds a tenth of the sampling interval.
pub fn clock_warning(host: &str, o: &Offset, interval: Duration) -> Option<String> {
    (o.uncertainty_s > interval.as_secs_f64() / 10.0).then(|| {
        format!(
            "host `{host}`: the clock offset is known to ± {:.3} ms only, more than a tenth of the sampling interval ({}): its samples may fall into the wrong phase near a boundary",
            o.uncertainty_s * 1e3,
            crate::util::duration::format(interval)
        )
    })
}
