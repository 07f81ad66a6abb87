//! The system table per point: Baseline / Under load / Peak / Recovery and recovery time, computed
//! per trial by `crate::analysis::phases` and pooled over the point's trials.

use super::assemble::Loaded;
use super::model::PhaseRow;
use crate::analysis::phases::{metric_phases, pool, SampleRef};

/// A trial's monitor samples, borrowed as the analysis wants them.
pub(crate) fn sample_refs(l: &Loaded) -> Vec<SampleRef<'_>> {
    l.samples.iter().map(|s| (s.t_s, s.phase.as_str(), s.values.as_slice())).collect()
}

/// When the load phase ended, in seconds since the trial started.
fn load_end(l: &Loaded) -> Option<f64> {
    l.trial
        .phases
        .iter()
        .filter(|p| p.0 == crate::analysis::phases::LOAD)
        .map(|p| p.2)
        .reduce(f64::max)
}

pub(crate) fn phase_row(metric: &str, group: &[&Loaded]) -> PhaseRow {
    let per_trial: Vec<_> = group.iter().map(|l| metric_phases(metric, &sample_refs(l), load_end(l))).collect();
    let p = pool(&per_trial);
    PhaseRow {
        metric: metric.to_string(),
        baseline: p.as_ref().and_then(|p| p.baseline),
        under_load: p.as_ref().and_then(|p| p.under_load),
        peak: p.as_ref().and_then(|p| p.peak),
        recovery: p.as_ref().and_then(|p| p.recovery),
        recovery_s: p.as_ref().and_then(|p| p.recovery_s),
    }
}
