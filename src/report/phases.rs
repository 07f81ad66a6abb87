//! The system table per point: Baseline / Under load / Peak / Recovery and recovery time, computed
//! per trial by `crate::analysis::phases` when the trial was stored, and pooled over the point's
//! trials.

use super::loaded::{key_system_metric, summary_of};
use crate::analysis::phases::{pool, PhaseStats};
use serde::Serialize;

/// One metric of a system table (this machine's or a remote host's): Baseline / Under load / Peak
/// / Recovery over a point's trials, and the worst recovery time.
#[derive(Clone, Debug, Serialize)]
pub struct PhaseRow {
    pub metric: String,
    pub baseline: Option<f64>,
    pub under_load: Option<f64>,
    pub peak: Option<f64>,
    pub recovery: Option<f64>,
    /// Worst (largest) seconds after the load ended until the metric was back at its baseline
    /// (within 10 %, or its noise where wider), over the trials whose load moved it; None where the
    /// load did not move it, where it never came back, or with no recovery phase.
    pub recovery_s: Option<f64>,
    /// The load moved the metric and, in some trial, it never came back.
    pub never_recovered: bool,
}

impl PhaseRow {
    /// The row of `metric` pooled over its trials' phase statistics (one per trial); empty
    /// figures where there are none.
    pub fn pooled(metric: &str, per_trial: &[PhaseStats]) -> PhaseRow {
        let p = pool(per_trial);
        PhaseRow {
            metric: metric.to_string(),
            baseline: p.as_ref().and_then(|p| p.baseline),
            under_load: p.as_ref().and_then(|p| p.under_load),
            peak: p.as_ref().and_then(|p| p.peak),
            recovery: p.as_ref().and_then(|p| p.recovery),
            recovery_s: p.as_ref().and_then(|p| p.recovery_s),
            never_recovered: p.as_ref().is_some_and(|p| p.never_recovered),
        }
    }
}

/// The system table's metrics when `[report] system` does not name them: CPU busy, user, system
/// and iowait, memory, load, context switches and page faults per second, swap, and (from
/// `key_system_metric`) disk and network throughput and the target's CPU, RSS and processes.
const DEFAULT_SYSTEM: &[&str] = &[
    "cpu_user_pct",
    "cpu_system_pct",
    "cpu_iowait_pct",
    "ctxt_per_s",
    "page_faults_per_s",
    "swap_used_mb",
    "swap_in_pages_per_s",
    "swap_out_pages_per_s",
];

/// Is `name` one of the table's metrics: those `wanted` names (a trailing `*` matches a prefix), or
/// the default set when `wanted` is empty?
fn shown(name: &str, wanted: &[String]) -> bool {
    if wanted.is_empty() {
        return key_system_metric(name) || DEFAULT_SYSTEM.contains(&name);
    }
    wanted.iter().any(|w| match w.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == w,
    })
}

/// One row per system metric of the table (`wanted`, or the default set) any of the point's trials
/// sampled, sorted by name; `summaries`: each trial's (`Loaded::summaries`).
pub fn system_rows(summaries: &[Vec<PhaseStats>], wanted: &[String]) -> Vec<PhaseRow> {
    let mut names: Vec<&str> = summaries
        .iter()
        .flat_map(|s| s.iter().map(|s| s.metric.as_str()))
        .filter(|k| shown(k, wanted))
        .collect();
    names.sort_unstable();
    names.dedup();
    names.into_iter().map(|m| phase_row(m, summaries)).collect()
}

fn phase_row(metric: &str, summaries: &[Vec<PhaseStats>]) -> PhaseRow {
    let per_trial: Vec<PhaseStats> = summaries.iter().map(|s| summary_of(s, metric)).collect();
    PhaseRow::pooled(metric, &per_trial)
}

/// Did a device or interface carry nothing at this point (a `disk_*` or `net_*` row whose every
/// figure is 0)? The report leaves such rows out and says which.
pub fn idle_device(r: &PhaseRow) -> bool {
    (r.metric.starts_with("disk_") || r.metric.starts_with("net_"))
        && [r.baseline, r.under_load, r.peak, r.recovery]
            .iter()
            .all(|v| v.is_none_or(|v| v.abs() < 1e-9))
}
