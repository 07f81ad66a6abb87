//! The system table per point: Baseline / Under load / Peak / Recovery and recovery time, computed
//! per trial by `crate::analysis::phases` when the trial was stored, and pooled over the point's
//! trials.

use super::loaded::{key_system_metric, Loaded};
use super::model::PhaseRow;
use crate::analysis::phases::pool;

/// One row per key system metric any of the point's trials sampled, sorted by name.
pub fn system_rows(group: &[&Loaded]) -> Vec<PhaseRow> {
    let mut names: Vec<&str> = group
        .iter()
        .flat_map(|l| l.summaries.iter().map(|s| s.metric.as_str()))
        .filter(|k| key_system_metric(k))
        .collect();
    names.sort_unstable();
    names.dedup();
    names.into_iter().map(|m| phase_row(m, group)).collect()
}

fn phase_row(metric: &str, group: &[&Loaded]) -> PhaseRow {
    let per_trial: Vec<_> = group.iter().map(|l| l.summary(metric)).collect();
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
