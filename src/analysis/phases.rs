//! The phase table of system metrics: Baseline (mean of the baseline phase), Under load (mean of
//! the load phase), Peak (max over the load phase), Recovery (mean of the recovery phase), and the
//! recovery time: seconds after the load ended until the metric first came back within 10 % of
//! its baseline mean (None if it never did, or there is no baseline or recovery phase).
//!
//! Input rows are monitor samples `(elapsed_s, phase, values)`; phases are named as `model::Phase`
//! names them (`baseline`, `warmup`, `load`, `recovery`), as the runner tags them.

use super::stats::mean;
use crate::model::Phase;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One owned monitor sample: (seconds since the trial started, phase, (metric, value) pairs).
pub type Sample = (f64, String, Vec<(String, f64)>);
/// The same sample, borrowed.
pub type SampleRef<'a> = (f64, &'a str, &'a [(String, f64)]);

pub const BASELINE: &str = Phase::Baseline.name();
pub const LOAD: &str = Phase::Load.name();
pub const RECOVERY: &str = Phase::Recovery.name();
/// Back "within 10 % of the baseline".
pub const RECOVERY_TOLERANCE: f64 = 0.10;

/// Borrow owned samples.
pub fn refs(samples: &[Sample]) -> Vec<SampleRef<'_>> {
    samples.iter().map(|(t, p, v)| (*t, p.as_str(), v.as_slice())).collect()
}

/// One metric's row of the phase table.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PhaseStats {
    pub metric: String,
    pub baseline: Option<f64>,
    pub under_load: Option<f64>,
    pub peak: Option<f64>,
    pub recovery: Option<f64>,
    /// Seconds after the load ended until the metric was first back within 10 % of the baseline.
    pub recovery_s: Option<f64>,
    /// There was a baseline and a recovery phase but the metric never came back.
    pub never_recovered: bool,
    /// Samples per phase (used when pooling trials).
    pub n_baseline: usize,
    pub n_load: usize,
    pub n_recovery: usize,
}

fn value(values: &[(String, f64)], metric: &str) -> Option<f64> {
    values.iter().find(|(k, _)| k == metric).map(|(_, v)| *v).filter(|v| v.is_finite())
}

/// Is `v` within the recovery tolerance of baseline `b`? (A zero baseline needs an exact zero.)
pub fn recovered(v: f64, b: f64) -> bool {
    (v - b).abs() <= RECOVERY_TOLERANCE * b.abs().max(1e-9)
}

/// The recovery time: the first `(t, v)` of the recovery phase within 10 % of `baseline`, as
/// seconds after `load_end_s` (never negative); None if no value came back.
pub fn recovery_time<I>(baseline: f64, load_end_s: f64, recovery: I) -> Option<f64>
where
    I: IntoIterator<Item = (f64, f64)>,
{
    recovery
        .into_iter()
        .find(|(_, v)| recovered(*v, baseline))
        .map(|(t, _)| (t - load_end_s).max(0.0))
}

/// One metric's phase row for one trial. `load_end_s` is when the load phase ended (seconds since
/// the trial started); None takes the last load-phase sample's time.
pub fn metric_phases(metric: &str, rows: &[SampleRef<'_>], load_end_s: Option<f64>) -> PhaseStats {
    let mut by: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for (t, phase, values) in rows {
        if let Some(v) = value(values, metric) {
            by.entry(phase).or_default().push((*t, v));
        }
    }
    let vals = |p: &str| -> Vec<f64> { by.get(p).map(|v| v.iter().map(|x| x.1).collect()).unwrap_or_default() };
    let (base, load, rec) = (vals(BASELINE), vals(LOAD), vals(RECOVERY));
    let baseline = mean(&base);
    let load_end = load_end_s.or_else(|| by.get(LOAD).and_then(|l| l.last()).map(|x| x.0));
    let mut recovery_s = None;
    let mut never_recovered = false;
    if let (Some(b), Some(end), Some(r)) = (baseline, load_end, by.get(RECOVERY)) {
        recovery_s = recovery_time(b, end, r.iter().copied());
        never_recovered = recovery_s.is_none();
    }
    PhaseStats {
        metric: metric.to_string(),
        baseline,
        under_load: mean(&load),
        peak: load.iter().copied().reduce(f64::max),
        recovery: mean(&rec),
        recovery_s,
        never_recovered,
        n_baseline: base.len(),
        n_load: load.len(),
        n_recovery: rec.len(),
    }
}

/// The phase table of one trial: every metric present, sorted by name.
pub fn trial_phases(rows: &[SampleRef<'_>], load_end_s: Option<f64>) -> Vec<PhaseStats> {
    let mut names: Vec<&str> = rows.iter().flat_map(|(_, _, v)| v.iter().map(|(k, _)| k.as_str())).collect();
    names.sort_unstable();
    names.dedup();
    names.into_iter().map(|m| metric_phases(m, rows, load_end_s)).collect()
}

/// Pool one metric's rows over several trials (of one point): phase means weighted by sample
/// counts (the mean of all pooled samples), the highest peak, and the worst (largest) recovery
/// time; `never_recovered` if any trial never came back (then `recovery_s` is None).
/// None when given no rows; the metric name is taken from the first.
pub fn pool(trials: &[PhaseStats]) -> Option<PhaseStats> {
    let first = trials.first()?;
    let wmean = |f: fn(&PhaseStats) -> (Option<f64>, usize)| {
        let (mut s, mut n) = (0.0, 0usize);
        for t in trials {
            if let (Some(m), k) = f(t) {
                s += m * k as f64;
                n += k;
            }
        }
        (n > 0).then(|| s / n as f64)
    };
    let never = trials.iter().any(|t| t.never_recovered);
    Some(PhaseStats {
        metric: first.metric.clone(),
        baseline: wmean(|t| (t.baseline, t.n_baseline)),
        under_load: wmean(|t| (t.under_load, t.n_load)),
        peak: trials.iter().filter_map(|t| t.peak).reduce(f64::max),
        recovery: wmean(|t| (t.recovery, t.n_recovery)),
        recovery_s: if never {
            None
        } else {
            trials.iter().filter_map(|t| t.recovery_s).reduce(f64::max)
        },
        never_recovered: never,
        n_baseline: trials.iter().map(|t| t.n_baseline).sum(),
        n_load: trials.iter().map(|t| t.n_load).sum(),
        n_recovery: trials.iter().map(|t| t.n_recovery).sum(),
    })
}
