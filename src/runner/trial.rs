//! One trial: (start the target,) baseline, warm-up, load, recovery, with the monitor sampling
//! throughout and every sample tagged with its phase; then stop the target and build the record.

use super::ledger::Ledger;
use super::phase::{CurrentPhase, Phase};
use super::remote_monitor::{self, HostMonitors, HostSamples};
use super::sut::Sut;
use crate::live::{Event, Publisher};
use crate::model::{PhaseSpan, TrialFailure, TrialInfo};
use crate::monitor::{MonitorConfig, ProcessSelector};
use crate::plan::{Phases, ResolvedTarget};
use crate::store::{TaggedSample, TrialRecord};
use crate::util::time::unix_now;
use crate::util::Cancel;
use crate::workload::{RunSpec, Workload};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What the runner knows about the trial it is about to run.
pub struct TrialSpec<'a> {
    pub id: usize,
    pub point: usize,
    pub repetition: u32,
    pub params_json: String,
    pub run_tag: &'a str,
    pub phases: Phases,
    /// A target to start for this trial only (restart = "per-trial").
    pub target: Option<&'a ResolvedTarget>,
    /// Where what the trial starts is recorded until it is stopped.
    pub ledger: &'a Ledger,
    /// The plan's `[[probes]]` for this trial's point.
    pub probes: &'a [crate::probe::ProbeSpec],
    /// The run directory, for the workload's setup.
    pub run_dir: Option<&'a std::path::Path>,
    /// The plan's `[hosts]` and which hosts `[monitor] hosts` samples.
    pub hosts: &'a [crate::plan::HostSpec],
    pub monitor: &'a crate::plan::MonitorHosts,
    /// `[profile]`: profiles of the target taken during the load phase.
    pub profile: Option<&'a crate::plan::ProfileSpec>,
    /// The live feed: the trial's phases, its load's seconds and the monitor's samples.
    pub feed: &'a Publisher,
}

/// Progress notifications for the progress bar.
pub trait TrialObserver {
    fn phase(&mut self, phase: Phase);
}

impl TrialObserver for () {
    fn phase(&mut self, _: Phase) {}
}

struct Clock {
    t0: Instant,
    phases: Vec<PhaseSpan>,
    current: Option<(Phase, f64)>,
    /// Ends the monitor's interval at each phase boundary.
    marker: Option<crate::monitor::Marker>,
    /// Each phase change goes on the live feed.
    feed: Publisher,
    trial: usize,
}

impl Clock {
    fn now(&self) -> f64 {
        self.t0.elapsed().as_secs_f64()
    }
    fn enter(&mut self, p: Phase, shared: &CurrentPhase, obs: &mut dyn TrialObserver) {
        self.mark();
        let now = self.now();
        if let Some((prev, start)) = self.current.take() {
            self.phases.push(PhaseSpan::new(prev, start, now));
        }
        self.current = Some((p, now));
        shared.set(p);
        obs.phase(p);
        self.feed.publish(Event::Phase {
            trial: self.trial,
            phase: p.name().to_string(),
            t_s: now,
        });
    }
    /// The samples up to now belong to the phase that is ending.
    fn mark(&self) {
        if let Some(m) = &self.marker {
            let _ = m.mark();
        }
    }
    fn close(&mut self) {
        let now = self.now();
        if let Some((prev, start)) = self.current.take() {
            self.phases.push(PhaseSpan::new(prev, start, now));
        }
    }
}

/// Run one trial. `kept` is a target kept across trials (restart = "keep"); otherwise `spec.target`
/// is started and stopped here. Never fails as a whole: a failure is recorded in the record. Returns
/// the record (this machine's samples) and the samples of each remote host (`[monitor] hosts`).
pub fn run_trial(
    spec: &TrialSpec,
    workload: &mut dyn Workload,
    kept: Option<&mut Sut>,
    cancel: &Cancel,
    obs: &mut dyn TrialObserver,
) -> (TrialRecord, Vec<HostSamples>) {
    let started_unix = unix_now();
    let shared = CurrentPhase::default();
    let mut clock = Clock {
        t0: Instant::now(),
        phases: Vec::new(),
        current: None,
        marker: None,
        feed: spec.feed.clone(),
        trial: spec.id,
    };
    let mut rec = new_record(spec, workload.name(), started_unix);
    clock.enter(Phase::Setup, &shared, obs);

    // The target: our own for this trial, or the kept one.
    let mut own: Option<Sut> = None;
    if let Some(cfg) = spec.target {
        let name = format!("perflab-{}-t{}", spec.run_tag, spec.id);
        match Sut::launch(cfg, &name, spec.ledger) {
            Ok(mut t) => match t.wait_ready(&cfg.ready, cancel) {
                Ok(()) => own = Some(t),
                Err(e) => {
                    rec.failure = Some(TrialFailure::TargetNotReady(format!("{e:#}")));
                    finish_target(&mut rec, Some(t));
                    return (finish(rec, clock), Vec::new());
                }
            },
            Err(e) => {
                rec.failure = Some(TrialFailure::TargetDidNotStart(format!("{e:#}")));
                return (finish(rec, clock), Vec::new());
            }
        }
    }
    let target: Option<&mut Sut> = match (own.as_mut(), kept) {
        (Some(t), _) => Some(t),
        (None, k) => k,
    };
    // The workload's own setup (the oltp tables), once the target is ready.
    let ctx = crate::workload::SetupCtx { run_dir: spec.run_dir };
    if let Err(e) = workload.setup(&ctx, cancel) {
        rec.failure = Some(TrialFailure::WorkloadError(format!("setup: {e:#}")));
        finish_target(&mut rec, own);
        return (finish(rec, clock), Vec::new());
    }
    let target_pid = target.as_ref().and_then(|t| t.local_pid());
    let target_limits = target.as_ref().and_then(|t| t.local_cpu_limits());
    let target_host = target.as_ref().and_then(|t| t.host()).map(str::to_string);
    if let Some(t) = &target {
        let (mechanism, proof) = t.limits();
        rec.limit_mechanism = Some(mechanism);
        rec.limit_proof = Some(proof);
    }

    // The monitor, sampling from now until the end of recovery.
    let samples: Arc<Mutex<Vec<TaggedSample>>> = Arc::new(Mutex::new(Vec::new()));
    let target_tree = target_pid.map(|pid| ProcessSelector::tree("target", pid as i32).with_limits(target_limits));
    let monitor = start_monitor(spec, target_tree, started_unix, &shared, cancel, samples.clone());
    let monitor = match monitor {
        Ok(m) => {
            clock.marker = Some(m.marker());
            Some(m)
        }
        Err(e) => {
            rec.failure = Some(TrialFailure::MonitorDidNotStart(format!("{e:#}")));
            None
        }
    };

    let mut target = target;
    let mut probes = None;
    // A remote target's host samples itself and the target's tree (its clock offset measured again).
    if let (Some(t), None) = (target.as_mut(), &rec.failure) {
        match t.begin_sampling(spec.phases.interval) {
            Ok(Some(warning)) => eprintln!("perflab: warning: {warning}"),
            Ok(None) => {}
            Err(e) => rec.failure = Some(TrialFailure::MonitorDidNotStart(format!("{e:#}"))),
        }
    }
    // The other monitored hosts, each over a channel of its own for this trial.
    let mut hosts = HostMonitors::default();
    if rec.failure.is_none() {
        let others = remote_monitor::others(spec.hosts, spec.monitor, target_host.as_deref());
        match HostMonitors::start(&others, spec.phases.interval) {
            Ok((h, warnings)) => {
                hosts = h;
                warnings.iter().for_each(|w| eprintln!("perflab: warning: {w}"));
            }
            Err(e) => rec.failure = Some(TrialFailure::MonitorDidNotStart(format!("{e:#}"))),
        }
    }
    if rec.failure.is_none() {
        clock.enter(Phase::Baseline, &shared, obs);
        match super::probes::start(spec.probes, &spec.phases, &shared, spec.feed, spec.id) {
            Ok(p) => probes = p,
            Err(e) => rec.failure = Some(TrialFailure::ProbesDidNotStart(format!("{e:#}"))),
        }
    }
    if rec.failure.is_none() {
        cancel.sleep(spec.phases.baseline);
        rec.failure = died(&mut target, Phase::Baseline);
    }
    let mut profiles = super::profiles::LoadProfiles::default();
    if rec.failure.is_none() && !cancel.is_cancelled() {
        let t0 = crate::profile::monotonic_now() - clock.now();
        profiles = super::profiles::LoadProfiles::start(spec.profile, target.as_deref_mut(), t0);
        // The remote hosts' samples as they come, for the live feed.
        let mut taps = hosts.taps(spec.monitor);
        if spec.feed.is_on() {
            taps.extend(target.as_deref().and_then(|t| t.tap(spec.monitor)));
        }
        let mut load = Load {
            clock: &mut clock,
            shared: &shared,
            profiles: &mut profiles,
            taps,
        };
        warmup_and_load(spec, workload, cancel, obs, &mut load, &mut rec, &mut target);
    }
    if !cancel.is_cancelled() && rec.failure.is_none() {
        clock.enter(Phase::Recovery, &shared, obs);
        cancel.sleep(spec.phases.recovery);
        rec.failure = died(&mut target, Phase::Recovery);
    }
    if cancel.is_cancelled() && rec.failure.is_none() {
        rec.failure = Some(TrialFailure::Interrupted);
    }
    super::probes::finish(probes, started_unix, &mut rec, cancel.is_cancelled());
    clock.mark();
    clock.marker = None;
    if let Some(m) = monitor {
        if let Err(e) = m.stop() {
            rec.failure.get_or_insert(TrialFailure::Monitor(format!("{e:#}")));
        }
    }
    // perf is stopped and its stacks folded once nothing is measured any more.
    rec.profiles = profiles.finish(target.as_deref_mut());
    let (mut remote, mut clocks) = hosts.stop();
    if let Some(t) = target.as_mut() {
        if rec.stderr_tail.is_none() {
            rec.stderr_tail = Some(t.stderr_tail());
        }
        let (samples, measured) = t.take_samples();
        remote.extend(samples);
        clocks.extend(measured);
    }
    finish_target(&mut rec, own);
    rec.samples = std::mem::take(&mut *samples.lock().unwrap_or_else(|p| p.into_inner()));
    let rec = finish(rec, clock);
    let placed = remote_monitor::place(rec.started_unix, &rec.phases, remote, clocks, spec.monitor);
    (rec, placed)
}

/// What the warm-up and load phases change as they go: the trial's clock and phase, and the
/// profiles' window (opened when the load starts, closed when it ends).
struct Load<'a> {
    clock: &'a mut Clock,
    shared: &'a CurrentPhase,
    profiles: &'a mut super::profiles::LoadProfiles,
    /// The remote hosts' latest samples, published with each second.
    taps: Vec<super::remote_target::HostTap>,
}

/// The warm-up and load phases: the workload runs, the load phase starts at its cutover (or when
/// it returns, for a workload without one), and its result or failure goes into `rec`.
fn warmup_and_load(
    spec: &TrialSpec,
    workload: &mut dyn Workload,
    cancel: &Cancel,
    obs: &mut dyn TrialObserver,
    load: &mut Load,
    rec: &mut TrialRecord,
    target: &mut Option<&mut Sut>,
) {
    let shared = load.shared;
    load.clock.enter(Phase::Warmup, shared, obs);
    let mut load_started = false;
    let run = {
        let clock = &mut *load.clock;
        let profiles = &mut *load.profiles;
        let obs: &mut dyn TrialObserver = obs;
        let target = &mut *target;
        let mut on_load = || {
            clock.enter(Phase::Load, shared, obs);
            profiles.load_started(target.as_deref_mut(), clock.now());
            load_started = true;
        };
        let run_spec = RunSpec {
            warmup: spec.phases.warmup,
            load: spec.phases.load,
        };
        if spec.feed.is_on() {
            let taps = std::mem::take(&mut load.taps);
            let watch = seconds(spec.feed.clone(), spec.id, taps, rec.started_unix);
            crate::workload::driver::coordinator::watching(watch, || workload.run(run_spec, cancel, &mut on_load))
        } else {
            workload.run(run_spec, cancel, &mut on_load)
        }
    };
    if !load_started {
        load.clock.enter(Phase::Load, shared, obs);
        load.profiles.load_started(target.as_deref_mut(), load.clock.now());
    }
    load.profiles.load_ended(target.as_deref_mut());
    match run {
        Ok(r) => {
            if let Some(f) = &r.failure {
                // A workload stopped by Ctrl-C says so in its own words; the trial was interrupted.
                rec.failure = Some(if cancel.is_cancelled() {
                    TrialFailure::Interrupted
                } else {
                    TrialFailure::Workload(f.clone())
                });
            }
            rec.result = Some(r);
        }
        Err(e) => rec.failure = Some(TrialFailure::WorkloadError(format!("{e:#}"))),
    }
    if rec.failure.is_none() {
        rec.failure = died(target, Phase::Load);
    }
}

/// What tells the live feed each second of a load on perflab's driver: the second's responses,
/// errors and latency quantiles, with the monitor's latest key figures; then each remote host's
/// latest sample's key figures (`taps`; a host without a new sample since the last second is left
/// out), placed on the trial's timeline (`started_unix`).
fn seconds(
    feed: Publisher,
    trial: usize,
    mut taps: Vec<super::remote_target::HostTap>,
    started_unix: f64,
) -> crate::workload::driver::coordinator::Watcher {
    use crate::live::event::significant;
    Box::new(move |t, h| {
        let q = |q: f64| (t.responses > 0).then(|| significant(crate::workload::result::quantile(h, q, 1000.0), 4));
        feed.publish(Event::Second {
            trial,
            t_s: (t.t_s * 1000.0).round() / 1000.0,
            span_s: (t.span_s * 1000.0).round() / 1000.0,
            responses: t.responses,
            errors: t.errors,
            p50_ms: q(0.5),
            p99_ms: q(0.99),
            p999_ms: q(0.999),
            host: feed.host_now(),
        });
        for tap in &mut taps {
            if let Some((unix_s, values)) = tap.fresh() {
                feed.publish(Event::Host {
                    trial,
                    host: tap.host.clone(),
                    t_s: ((unix_s - started_unix) * 1000.0).round() / 1000.0,
                    figures: crate::live::HostNow::of(&values),
                });
            }
        }
    })
}

/// The record of a trial that has not run yet.
fn new_record(spec: &TrialSpec, workload: String, started_unix: f64) -> TrialRecord {
    TrialRecord::new(TrialInfo::new(
        spec.id,
        spec.point,
        spec.repetition,
        spec.params_json.clone(),
        workload,
        started_unix,
    ))
}

/// Sample the system, perflab itself and the target's process tree into `sink`, each sample tagged
/// with the phase it was taken in.
fn start_monitor(
    spec: &TrialSpec,
    target: Option<ProcessSelector>,
    started_unix: f64,
    phase: &CurrentPhase,
    cancel: &Cancel,
    sink: Arc<Mutex<Vec<TaggedSample>>>,
) -> anyhow::Result<crate::monitor::BackgroundSampler> {
    let mut processes = vec![ProcessSelector::own_process("loadgen")];
    processes.extend(target);
    let mcfg = MonitorConfig {
        interval: spec.phases.interval,
        processes,
        // Without `local` in `[monitor] hosts`, only perflab's own process (and a local target's).
        only: (!spec.monitor.local).then(|| vec![crate::monitor::Group::Proc]),
        // The remote hosts tick on the same grid (`HostMonitors`, `RemoteTarget::begin_sampling`).
        first_tick_unix: Some(crate::monitor::grid_tick(crate::util::time::unix_now(), spec.phases.interval)),
        ..MonitorConfig::default()
    };
    let tag = phase.clone();
    let (feed, trial) = (spec.feed.clone(), spec.id);
    crate::monitor::spawn(mcfg, cancel.clone(), move |s| {
        if feed.is_on() {
            feed.sample(crate::live::LatestSample {
                trial,
                phase: tag.get().name().to_string(),
                t_s: s.unix_s - started_unix,
                values: s.values.clone(),
            });
        }
        if let Ok(mut v) = sink.lock() {
            v.push(TaggedSample {
                phase: tag.get().name().to_string(),
                t_s: s.unix_s - started_unix,
                unix_s: s.unix_s,
                values: s.values,
            });
        }
    })
}

fn died(target: &mut Option<&mut Sut>, phase: Phase) -> Option<TrialFailure> {
    let t = target.as_mut()?;
    t.exited().map(|how| TrialFailure::TargetDied { how, phase })
}

fn finish_target(rec: &mut TrialRecord, t: Option<Sut>) {
    if let Some(t) = t {
        match t.stop() {
            Ok(s) => {
                rec.stdout_tail = Some(s.stdout_tail);
                rec.stderr_tail = Some(s.stderr_tail);
            }
            Err(e) => {
                rec.failure.get_or_insert(TrialFailure::TargetStop(format!("{e:#}")));
            }
        }
    }
}

fn finish(mut rec: TrialRecord, mut clock: Clock) -> TrialRecord {
    clock.close();
    rec.phases = clock.phases.into_iter().filter(|p| p.phase != Phase::Setup).collect();
    rec.ended_unix = unix_now();
    rec
}
