//! `perflab agent --stdio`: the far end of a remote host's channel. It reads requests (JSON lines,
//! docs/agent.md) on stdin and answers on stdout: its versions and the host's facts, clock
//! exchanges, targets started (own process group, cgroup limits through the runner's own code),
//! readiness from the target's log, stops (signal, grace, SIGKILL), sampling on an absolute
//! schedule, exec commands run to their end, and a slice of a plan's workload run in-process
//! (`segment`, for `[workload] from`, and the work its slices share: `workload_prepare`,
//! `workload_cleanup`).
//!
//! When the channel closes for any reason (end of input, a read error, `bye`), the agent stops
//! every target it started, removes their cgroups, kills what its exec commands left, runs nothing
//! more and exits. An agent killed outright cannot: it keeps a record of its targets on its host,
//! as a run does (`runner::ledger`, `Ledger::open_agent`), and the next agent (or `perflab run`)
//! started there cleans up after it and says so (`hello`'s `cleaned`).

pub mod cli;
mod clock;
mod exec;
mod facts;
mod own_binary;
mod profiles;
mod segment;

use crate::monitor::{BackgroundSampler, MonitorConfig, ProcessSelector};
use crate::plan::{LogPattern, Ready, ResolvedTarget};
use crate::remote::protocol::{self, ClockReply, CommandSpec, Envelope, Event, Hello, Reply, Request, Started, Stopped, TargetSpec};
use crate::runner::from_shared::Step;
use crate::runner::ledger::Ledger;
use crate::runner::limits::{CpuSpec, Limits};
use crate::runner::target::RunningTarget;
use crate::util::command::CommandLine;
use crate::util::Cancel;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use clock::Clock;
pub use facts::facts;

/// Where replies and events go: one line each, written whole under a lock.
#[derive(Clone)]
pub struct Out(Arc<Mutex<Box<dyn Write + Send>>>);

impl Out {
    pub fn new(w: Box<dyn Write + Send>) -> Out {
        Out(Arc::new(Mutex::new(w)))
    }

    fn line(&self, v: &impl serde::Serialize) -> bool {
        let Ok(mut text) = serde_json::to_string(v) else {
            return false;
        };
        text.push('\n');
        let mut w = self.0.lock().unwrap_or_else(|p| p.into_inner());
        w.write_all(text.as_bytes()).and_then(|_| w.flush()).is_ok()
    }

    fn reply(&self, id: u64, r: anyhow::Result<serde_json::Value>) -> bool {
        let reply = match r {
            Ok(v) => Reply {
                id,
                ok: true,
                result: Some(v),
                error: None,
            },
            Err(e) => Reply {
                id,
                ok: false,
                result: None,
                error: Some(crate::error::one_line(&e)),
            },
        };
        self.line(&reply)
    }
}

/// Everything the agent started, stopped when the channel closes.
struct Agent {
    out: Out,
    clock: Clock,
    targets: BTreeMap<String, RunningTarget>,
    sampler: Option<BackgroundSampler>,
    execs: exec::Groups,
    /// The record of what this agent started on its host (its targets' cgroups and process
    /// groups), for the next perflab here should this agent be killed.
    ledger: Ledger,
    /// What this agent cleaned up after dead agents and runs when it started (told in `hello`).
    cleaned: Vec<String>,
    /// The profiles of a target's load phase (perf stopped when they are dropped).
    profiles: profiles::Profiles,
    /// The workload segments running (`[workload] from`).
    segments: segment::Running,
}

/// Serve requests from `input` until it ends, then clean up. Returns the exit code.
pub fn serve(input: impl BufRead, out: Out) -> i32 {
    // What a killed agent (or run) left on this host goes first; then this agent keeps its own
    // record.
    let cleaned = crate::runner::reclaim::sweep();
    let mut agent = Agent {
        out,
        clock: Clock::from_env(),
        targets: BTreeMap::new(),
        sampler: None,
        execs: exec::Groups::default(),
        ledger: Ledger::open_agent().unwrap_or_else(Ledger::none),
        cleaned,
        profiles: profiles::Profiles::default(),
        segments: segment::Running::default(),
    };
    for line in input.lines() {
        let Ok(line) = line else { break };
        let t1 = agent.clock.now();
        if line.trim().is_empty() {
            continue;
        }
        let env: Envelope = match serde_json::from_str(&line) {
            Ok(e) => e,
            Err(e) => {
                let id = serde_json::from_str::<serde_json::Value>(&line)
                    .ok()
                    .and_then(|v| v.get("id")?.as_u64())
                    .unwrap_or(0);
                agent.out.reply(id, Err(anyhow::anyhow!("agent: cannot read the request: {e}")));
                continue;
            }
        };
        if matches!(env.request, Request::Bye) {
            agent.shutdown();
            agent.out.reply(env.id, Ok(serde_json::Value::Null));
            return 0;
        }
        let r = agent.handle(env.id, env.request, t1);
        if let Some(r) = r {
            if !agent.out.reply(env.id, r) {
                break; // the channel is gone
            }
        }
    }
    agent.shutdown();
    0
}

fn json(v: impl serde::Serialize) -> anyhow::Result<serde_json::Value> {
    Ok(serde_json::to_value(v)?)
}

impl Agent {
    /// Answer one request; None when the answer is sent later (by an exec thread) or already sent.
    fn handle(&mut self, id: u64, req: Request, t1: f64) -> Option<anyhow::Result<serde_json::Value>> {
        Some(match req {
            Request::Hello { .. } => json(Hello {
                protocol: protocol::PROTOCOL,
                perflab: env!("CARGO_PKG_VERSION").to_string(),
                facts: facts(),
                cleaned: std::mem::take(&mut self.cleaned),
            }),
            Request::Clock => {
                let r = json(ClockReply { t1, t2: self.clock.now() });
                self.clock.hold_answer();
                r
            }
            Request::Start { name, target } => self.start(&name, &target),
            Request::Ready { name, log, timeout_s } => self.ready(&name, &log, timeout_s),
            Request::Status { name } => match self.targets.get_mut(&name) {
                Some(t) => json(protocol::TargetStatus { died: t.exited() }),
                None => Err(anyhow::anyhow!("no target named `{name}` runs on this host")),
            },
            Request::Stop { name } => self.stop(&name),
            Request::Sample {
                interval_s,
                first_tick_unix_s,
                targets,
                pids,
            } => self.sample(interval_s, first_tick_unix_s, &targets, &pids),
            Request::SampleStop => {
                if let Some(s) = self.sampler.take() {
                    let _ = s.stop();
                }
                Ok(serde_json::Value::Null)
            }
            Request::Exec {
                command,
                cwd,
                env,
                timeout_s,
            } => {
                exec::spawn(id, command, cwd, env, timeout_s, self.out.clone(), self.execs.clone());
                return None;
            }
            Request::ProfileStart {
                kind,
                target,
                scope,
                frequency_hz,
                call_graph,
            } => {
                let pid = match target.as_deref().map(|n| self.targets.get(n).ok_or(n)) {
                    None => Ok(None),
                    Some(Ok(t)) => Ok(Some(t.pid() as i32)),
                    Some(Err(n)) => Err(anyhow::anyhow!("no target named `{n}` runs on this host")),
                };
                pid.and_then(|pid| self.profiles.start(&kind, &scope, pid, frequency_hz, &call_graph))
                    .map(|_| serde_json::Value::Null)
            }
            Request::Segment {
                kind,
                table,
                index,
                count,
                start_at_unix,
                tolerance_s,
                warmup_s,
                load_s,
                shared,
            } => {
                let ask = segment::Ask {
                    kind,
                    table,
                    segment: (index, count),
                    start_at_unix,
                    tolerance_s,
                    warmup_s,
                    load_s,
                    shared,
                };
                segment::spawn(id, ask, self.clock.clone(), self.out.clone(), &self.segments);
                return None;
            }
            Request::WorkloadPrepare { kind, table } => {
                segment::spawn_shared(id, Step::Prepare, kind, table, self.out.clone(), &self.segments);
                return None;
            }
            Request::WorkloadCleanup { kind, table } => {
                segment::spawn_shared(id, Step::Cleanup, kind, table, self.out.clone(), &self.segments);
                return None;
            }
            Request::ProfileEnable => self.profiles.enable().map(|_| serde_json::Value::Null),
            Request::ProfileDisable => self.profiles.disable().map(|_| serde_json::Value::Null),
            Request::ProfileStop => self.profiles.stop().and_then(json),
            Request::Bye => Ok(serde_json::Value::Null),
        })
    }

    fn start(&mut self, name: &str, spec: &TargetSpec) -> anyhow::Result<serde_json::Value> {
        if self.targets.contains_key(name) {
            anyhow::bail!("a target named `{name}` is already running on this host");
        }
        let cfg = resolve(spec)?;
        let unique = format!("agent-{}-{name}", std::process::id());
        let t = RunningTarget::launch(&cfg, &unique, &self.ledger)?;
        let started = Started {
            pid: t.pid() as i32,
            mechanism: t.limits.mechanism.to_string(),
            proof: t.limits.proof(t.pid()),
        };
        self.targets.insert(name.to_string(), t);
        json(started)
    }

    fn ready(&mut self, name: &str, log: &str, timeout_s: f64) -> anyhow::Result<serde_json::Value> {
        let t = self
            .targets
            .get_mut(name)
            .ok_or_else(|| anyhow::anyhow!("no target named `{name}` runs on this host"))?;
        let pattern = LogPattern::new(log).map_err(|e| anyhow::anyhow!("ready log pattern: {e}"))?;
        let timeout = Duration::try_from_secs_f64(timeout_s).unwrap_or(Duration::from_secs(30));
        t.wait_ready(&Ready::Log { pattern, timeout }, &Cancel::new())?;
        Ok(serde_json::Value::Null)
    }

    fn stop(&mut self, name: &str) -> anyhow::Result<serde_json::Value> {
        let t = self
            .targets
            .remove(name)
            .ok_or_else(|| anyhow::anyhow!("no target named `{name}` runs on this host"))?;
        let s = t.stop()?;
        json(Stopped {
            died: s.died,
            stdout_tail: s.stdout_tail,
            stderr_tail: s.stderr_tail,
        })
    }

    fn sample(&mut self, interval_s: f64, first_tick: Option<f64>, targets: &[String], pids: &[i32]) -> anyhow::Result<serde_json::Value> {
        let interval = Duration::try_from_secs_f64(interval_s).unwrap_or_default();
        if interval < Duration::from_millis(10) {
            anyhow::bail!("sampling interval {interval_s} s is too short: the minimum is 10ms");
        }
        if let Some(s) = self.sampler.take() {
            let _ = s.stop();
        }
        let mut processes = Vec::new();
        for name in targets {
            let t = self
                .targets
                .get(name)
                .ok_or_else(|| anyhow::anyhow!("no target named `{name}` runs on this host"))?;
            processes.push(ProcessSelector::tree(name, t.pid() as i32).with_limits(t.limits.cpu_limits()));
        }
        for pid in pids {
            processes.push(ProcessSelector::tree(&pid.to_string(), *pid));
        }
        let clock = self.clock.clone();
        if first_tick.is_some_and(|t| !t.is_finite()) {
            anyhow::bail!("the first tick is not a time");
        }
        let cfg = MonitorConfig {
            interval,
            processes,
            // The host's clock as the controller knows it (with the testing skew) back to the real one.
            first_tick_unix: first_tick.map(|t| t - clock.skew()),
            ..MonitorConfig::default()
        };
        let out = self.out.clone();
        let s = crate::monitor::spawn(cfg, Cancel::new(), move |s| {
            out.line(&Event::Sample {
                unix_s: s.unix_s + clock.skew(),
                elapsed_s: s.elapsed_s,
                values: s.values,
            });
        })?;
        self.sampler = Some(s);
        Ok(serde_json::Value::Null)
    }

    /// Stop sampling, every target (signal, grace, SIGKILL; cgroups removed) and every exec group.
    fn shutdown(&mut self) {
        if let Some(s) = self.sampler.take() {
            let _ = s.stop();
        }
        // The load this agent sends stops first.
        self.segments.stop_all();
        // perf goes (and a tracefs it mounted) before the targets it profiled.
        self.profiles = profiles::Profiles::default();
        for (name, t) in std::mem::take(&mut self.targets) {
            if let Err(e) = t.stop() {
                eprintln!("perflab agent: stopping target `{name}`: {}", crate::error::one_line(&e));
            }
        }
        self.execs.kill_all();
        // Everything is stopped: the record goes (it stays if a cgroup would not go, for the next
        // perflab on this host to try again).
        self.ledger.close();
    }
}

/// The runner's view of a target the controller sent.
fn resolve(spec: &TargetSpec) -> anyhow::Result<ResolvedTarget> {
    let (mut spec_command, mut env) = (spec.command.clone(), spec.env.clone());
    own_binary::use_own_perflab(&mut spec_command, &mut env);
    let command = match &spec_command {
        CommandSpec::Argv(a) => CommandLine::Argv(a.clone()),
        CommandSpec::Shell(s) => CommandLine::Shell(s.clone()),
    };
    let cpus = match spec.cpus.as_deref() {
        None => None,
        Some(s) => Some(match s.trim().parse::<usize>() {
            Ok(n) => CpuSpec::Count(n),
            Err(_) => CpuSpec::List(crate::runner::limits::parse_cpu_list(s).map_err(|e| anyhow::anyhow!("cpus: {e}"))?),
        }),
    };
    let limits = Limits {
        cpus,
        cpu_quota: spec.cpu_quota,
        memory: spec.memory,
    };
    if let Some((key, why)) = crate::runner::limits::unsupported(&limits) {
        anyhow::bail!("{key}: {why}");
    }
    Ok(ResolvedTarget {
        command,
        cwd: spec.cwd.as_ref().map(std::path::PathBuf::from),
        env,
        ready: Ready::None,
        stop_signal: spec.stop_signal,
        grace: Duration::try_from_secs_f64(spec.grace_s).unwrap_or(Duration::from_secs(5)),
        limits,
        host: None,
    })
}
