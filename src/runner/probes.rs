//! The plan's `[[probes]]` in a trial: started when the baseline begins, each probe tagged with the
//! phase the trial is in at its send time (the same shared phase that tags the monitor's samples),
//! stopped at the end of recovery; then their samples become the store's probe rows and their
//! per-phase figures the trial's metrics. A target that stops answering only makes timeouts (loss):
//! the trial goes on.

use super::phase::{CurrentPhase, Phase};
use crate::plan::Phases;
use crate::probe::{Outcome, PhaseFn, PhaseTag, ProbeResult, ProbeSet, ProbeSpec, RunningProbes};
use crate::store::{ProbeRecord, ProbeRow, TrialRecord};
use std::sync::Arc;
use std::time::Duration;

/// Time a probe may run past the planned phases (a slow target start, a late recovery) before it
/// stops by itself.
const SLACK: Duration = Duration::from_secs(600);

/// Start the probes (none: `Ok(None)`), each bounded to the trial's phases plus [`SLACK`].
pub fn start(specs: &[ProbeSpec], phases: &Phases, shared: &CurrentPhase) -> anyhow::Result<Option<RunningProbes>> {
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
    ProbeSet::start(specs, phase).map(Some)
}

/// Stop the probes and put what they measured into the trial's record; `interrupted` (Ctrl-C):
/// the probes in flight are ended rather than waited for (see `RunningProbes::abort`).
pub fn finish(running: Option<RunningProbes>, trial_started_unix: f64, rec: &mut TrialRecord, interrupted: bool) {
    let Some(running) = running else { return };
    let results = if interrupted { running.abort() } else { running.stop() };
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
