//! The plan's `[[probes]]` in a trial: started when the baseline begins, each probe tagged with the
//! phase the trial is in at its send time (the same shared phase that tags the monitor's samples),
//! stopped at the end of recovery; then their samples become the store's probe rows and their
//! per-phase figures the trial's metrics. A target that stops answering only makes timeouts (loss):
//! the trial goes on. With a live feed, their figures so far are published once a second (a
//! `probes` event), and their final ones, equal to the stored rows, when they stop.

use super::phase::{CurrentPhase, Phase};
use crate::live::{Event, ProbeNow, Publisher};
use crate::plan::Phases;
use crate::probe::{Observer, Outcome, PhaseFn, PhaseTag, ProbeResult, ProbeSet, ProbeSpec, RunningProbes, Sample};
use crate::store::{ProbeRecord, ProbeRow, TrialRecord};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The trial's probes, running, and what publishes their figures on the live feed.
pub struct TrialProbes {
    running: RunningProbes,
    live: Option<LiveProbes>,
}

/// The feed's side: the figures so far and the thread that publishes them once a second (it
/// stops when `stop` is dropped).
struct LiveProbes {
    feed: Publisher,
    trial: usize,
    stop: Sender<()>,
    ticker: JoinHandle<()>,
}

/// A sample into its probe's figures: counted, and the latest if its `seq` is the highest yet.
fn add(p: &mut ProbeNow, s: &Sample) {
    p.n += 1;
    match s.outcome {
        Outcome::Timeout | Outcome::Error(_) => p.lost += 1,
        Outcome::Failed { .. } => p.failed += 1,
        Outcome::Reply { .. } => {}
    }
    if p.seq.is_none_or(|q| s.seq >= q) {
        p.seq = Some(s.seq);
        p.phase = Some(s.phase.to_string());
        p.outcome = Some(s.outcome.name().to_string());
        p.rtt_ms = rtt_ms(&s.outcome).map(|ms| crate::live::event::significant(ms, 4));
    }
}

/// A sample's round trip in ms, as the store keeps it (a failure's too).
fn rtt_ms(o: &Outcome) -> Option<f64> {
    match o {
        Outcome::Reply { rtt } | Outcome::Failed { rtt, .. } => Some(rtt.as_secs_f64() * 1e3),
        Outcome::Timeout | Outcome::Error(_) => None,
    }
}

fn blank(specs: &[ProbeSpec]) -> Vec<ProbeNow> {
    specs
        .iter()
        .map(|s| ProbeNow {
            name: crate::probe::figures::spec_stem(s).trim_start_matches("probe_").to_string(),
            kind: s.kind.name().to_string(),
            ..ProbeNow::default()
        })
        .collect()
}

/// The observer that folds each sample into `now`, and the thread that publishes `now` once a
/// second while it changed.
fn live(specs: &[ProbeSpec], feed: &Publisher, trial: usize) -> anyhow::Result<(Observer, LiveProbes)> {
    let now = Arc::new(Mutex::new(blank(specs)));
    let observer: Observer = {
        let now = now.clone();
        Arc::new(move |i: usize, s: &Sample| {
            if let Some(p) = now.lock().ok().as_mut().and_then(|v| v.get_mut(i)) {
                add(p, s);
            }
        })
    };
    let (stop, stopped) = channel::<()>();
    let f = feed.clone();
    let ticker = std::thread::Builder::new().name("perflab-probes-feed".into()).spawn(move || {
        let mut published = 0;
        while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(Duration::from_secs(1)) {
            let Some(probes) = now.lock().ok().map(|v| v.clone()) else { return };
            let seen: u64 = probes.iter().map(|p| p.n).sum();
            if seen != published {
                published = seen;
                f.publish(Event::Probes { trial, probes });
            }
        }
    })?;
    let lp = LiveProbes {
        feed: feed.clone(),
        trial,
        stop,
        ticker,
    };
    Ok((observer, lp))
}

/// Time a probe may run past the planned phases (a slow target start, a late recovery) before it
/// stops by itself.
const SLACK: Duration = Duration::from_secs(600);

/// Start the probes (none: `Ok(None)`), each bounded to the trial's phases plus [`SLACK`]; with a
/// live `feed`, their figures are published as trial `trial`'s.
pub fn start(
    specs: &[ProbeSpec],
    phases: &Phases,
    shared: &CurrentPhase,
    feed: &Publisher,
    trial: usize,
) -> anyhow::Result<Option<TrialProbes>> {
    if specs.is_empty() {
        return Ok(None);
    }
    let bound = phases.total().saturating_add(SLACK);
    let specs: Vec<ProbeSpec> = specs
        .iter()
        .cloned()
        .map(|mut s| {
            s.duration = Some(s.duration.map_or(bound, |d| d.min(bound)));
            s
        })
        .collect();
    let tags: Vec<PhaseTag> = [Phase::Setup, Phase::Baseline, Phase::Warmup, Phase::Load, Phase::Recovery]
        .iter()
        .map(|p| PhaseTag::new(p.name()))
        .collect();
    let shared = shared.clone();
    let phase: PhaseFn = Arc::new(move || tags[shared.get() as usize].clone());
    let set = ProbeSet::open(specs.clone())?;
    let (observer, live) = match feed.is_on() {
        true => live(&specs, feed, trial).map(|(o, l)| (Some(o), Some(l)))?,
        false => (None, None),
    };
    let running = set.run(phase, observer)?;
    Ok(Some(TrialProbes { running, live }))
}

/// Stop the probes and put what they measured into the trial's record; `interrupted` (Ctrl-C):
/// the probes in flight are ended rather than waited for (see `RunningProbes::abort`).
pub fn finish(probes: Option<TrialProbes>, trial_started_unix: f64, rec: &mut TrialRecord, interrupted: bool) {
    let Some(TrialProbes { running, live }) = probes else { return };
    let results = if interrupted { running.abort() } else { running.stop() };
    if let Some(l) = live {
        drop(l.stop);
        let _ = l.ticker.join();
        // The final figures, from what is stored: every sample, whatever the observer saw.
        let mut probes = blank(&results.iter().map(|r| r.spec.clone()).collect::<Vec<_>>());
        for (p, r) in probes.iter_mut().zip(&results) {
            r.samples.iter().for_each(|s| add(p, s));
        }
        l.feed.publish(Event::Probes { trial: l.trial, probes });
    }
    for r in results {
        let figures = crate::probe::figures::figures(&r);
        if let Some(result) = rec.result.as_mut() {
            result.metrics.extend(figures);
        }
        rec.probes.push(record(&r, trial_started_unix));
    }
}

/// One probe's rows, its times counted from the trial's start.
fn record(r: &ProbeResult, trial_started_unix: f64) -> ProbeRecord {
    let offset = r.started_unix_s - trial_started_unix;
    let stem = crate::probe::figures::metric_stem(r);
    ProbeRecord {
        name: stem.trim_start_matches("probe_").to_string(),
        kind: r.spec.kind.name().to_string(),
        target: r.spec.target.to_string(),
        interval_s: r.spec.interval.as_secs_f64(),
        detail: r
            .failure
            .clone()
            .map_or_else(|| r.detail.clone(), |f| format!("{} (stopped: {f})", r.detail)),
        started_s: offset,
        samples: r
            .samples
            .iter()
            .map(|s| {
                let (rtt_ms, status) = match &s.outcome {
                    Outcome::Reply { rtt } => (Some(rtt.as_secs_f64() * 1e3), None),
                    Outcome::Failed { rtt, status } => (Some(rtt.as_secs_f64() * 1e3), Some(i64::from(*status))),
                    Outcome::Timeout | Outcome::Error(_) => (None, None),
                };
                ProbeRow {
                    seq: s.seq,
                    phase: s.phase.to_string(),
                    t_s: offset + s.t_s,
                    outcome: s.outcome.name().to_string(),
                    rtt_ms,
                    status,
                    packets: s.traffic.packets_out + s.traffic.packets_in,
                    bytes: s.traffic.bytes_out + s.traffic.bytes_in,
                }
            })
            .collect(),
    }
}
