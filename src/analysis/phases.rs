//! The phase table of system metrics: Baseline (mean of the baseline phase), Under load (mean of
//! the load phase), Peak (max over the load phase), Recovery (mean of the recovery phase), and the
//! recovery time: seconds after the load ended until the metric first came back to its baseline.
//!
//! "At its baseline" means within the baseline's band: 10 % of the baseline mean, or 3 standard
//! deviations of the baseline samples where they vary more than that. A recovery time is given only
//! where the load moved the metric, that is where its mean under load is outside that band: a metric
//! the load never moved (swap at 0 throughout, CPU busy at 100 % before and during the load) has
//! nothing to recover from (None, and not `never_recovered`); nor has a change under 0.001 (the
//! report's finest figure). "Back" is within that band, or 90 % of
//! the way back from the mean under load (a network at 0.07 Mbit/s idle and 30 under load is back at
//! 0.08).
//!
//! Input rows are monitor samples `(elapsed_s, phase, values)`; phases are named as `model::Phase`
//! names them (`baseline`, `warmup`, `load`, `recovery`), as the runner tags them.

use super::stats::{mean, sample_sd};
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
/// Back "within 10 % of the baseline" (or within its noise, [`NOISE_SDS`], where that is wider).
pub const RECOVERY_TOLERANCE: f64 = 0.10;
/// The baseline's noise: this many standard deviations of its samples.
pub const NOISE_SDS: f64 = 3.0;
/// The smallest move that counts, in the metric's own unit (0.001: the report's finest figure; a
/// network at 0.0004 Mbit/s under load after 0 idle did not move).
pub const MIN_MOVE: f64 = 1e-3;

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
    /// Seconds after the load ended until the metric was first back within the baseline's band;
    /// None where the load did not move it out of that band.
    pub recovery_s: Option<f64>,
    /// The load moved the metric, and it never came back within the recovery phase.
    pub never_recovered: bool,
    /// Samples per phase (used when pooling trials).
    pub n_baseline: usize,
    pub n_load: usize,
    pub n_recovery: usize,
}

fn value(values: &[(String, f64)], metric: &str) -> Option<f64> {
    values.iter().find(|(k, _)| k == metric).map(|(_, v)| *v).filter(|v| v.is_finite())
}

/// How far from the baseline mean `b` a value may be and still be at the baseline: 10 % of `b`, or
/// [`NOISE_SDS`] standard deviations `sd` of the baseline samples where that is wider, and at least
/// [`MIN_MOVE`].
pub fn band(b: f64, sd: Option<f64>) -> f64 {
    (RECOVERY_TOLERANCE * b.abs())
        .max(NOISE_SDS * sd.filter(|s| s.is_finite()).unwrap_or(0.0))
        .max(MIN_MOVE)
}

/// Is `v` within the band `half` of baseline `b`?
pub fn recovered(v: f64, b: f64, half: f64) -> bool {
    (v - b).abs() <= half
}

/// Did the load move the metric: is its mean under load outside the band `half` of baseline `b`?
pub fn moved(under_load: Option<f64>, b: f64, half: f64) -> bool {
    under_load.is_some_and(|l| !recovered(l, b, half))
}

/// The recovery time: the first `(t, v)` of the recovery phase within `half` of `baseline`, as
/// seconds after `load_end_s` (never negative); None if no value came back.
pub fn recovery_time<I>(baseline: f64, half: f64, load_end_s: f64, recovery: I) -> Option<f64>
where
    I: IntoIterator<Item = (f64, f64)>,
{
    recovery
        .into_iter()
        .find(|(_, v)| recovered(*v, baseline, half))
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
    let under_load = mean(&load);
    let load_end = load_end_s.or_else(|| by.get(LOAD).and_then(|l| l.last()).map(|x| x.0));
    let mut recovery_s = None;
    let mut never_recovered = false;
    if let (Some(b), Some(end), Some(r)) = (baseline, load_end, by.get(RECOVERY)) {
        let half = band(b, sample_sd(&base));
        if let Some(l) = under_load.filter(|l| !recovered(*l, b, half)) {
            let back = half.max(RECOVERY_TOLERANCE * (l - b).abs());
            recovery_s = recovery_time(b, back, end, r.iter().copied());
            never_recovered = recovery_s.is_none();
        }
    }
    PhaseStats {
        metric: metric.to_string(),
        baseline,
        under_load,
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

/// Did the load move the metric in this trial (as judged when it was stored: it has a recovery
/// time or never came back), and is its mean under load outside 10 % of its baseline? The second
/// test repeats, on the stored means, the part of the judgement a store written before it was
/// made can still be held to.
fn trial_moved(t: &PhaseStats) -> bool {
    (t.recovery_s.is_some() || t.never_recovered) && t.baseline.is_some_and(|b| moved(t.under_load, b, band(b, None)))
}

/// Pool one metric's rows over several trials (of one point): phase means weighted by sample
/// counts (the mean of all pooled samples), the highest peak, and the worst (largest) recovery
/// time of the trials whose load moved the metric; `never_recovered` if any of them never came
/// back (then `recovery_s` is None). None when given no rows; the metric name is taken from the
/// first.
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
    let moved: Vec<&PhaseStats> = trials.iter().filter(|t| trial_moved(t)).collect();
    let never = moved.iter().any(|t| t.never_recovered);
    Some(PhaseStats {
        metric: first.metric.clone(),
        baseline: wmean(|t| (t.baseline, t.n_baseline)),
        under_load: wmean(|t| (t.under_load, t.n_load)),
        peak: trials.iter().filter_map(|t| t.peak).reduce(f64::max),
        recovery: wmean(|t| (t.recovery, t.n_recovery)),
        recovery_s: if never {
            None
        } else {
            moved.iter().filter_map(|t| t.recovery_s).reduce(f64::max)
        },
        never_recovered: never,
        n_baseline: trials.iter().map(|t| t.n_baseline).sum(),
        n_load: trials.iter().map(|t| t.n_load).sum(),
        n_recovery: trials.iter().map(|t| t.n_recovery).sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `metric` sampled every 0.5 s: baseline values, then load values, then recovery values; the
    /// load ends at the last load sample.
    fn trial(metric: &str, base: &[f64], load: &[f64], rec: &[f64]) -> PhaseStats {
        let mut rows: Vec<Sample> = Vec::new();
        let mut t = 0.0;
        for (phase, vals) in [(BASELINE, base), (LOAD, load), (RECOVERY, rec)] {
            for v in vals {
                t += 0.5;
                rows.push((t, phase.to_string(), vec![(metric.to_string(), *v)]));
            }
        }
        metric_phases(metric, &refs(&rows), None)
    }

    #[test]
    fn a_metric_the_load_never_moved_has_no_recovery_time() {
        let swap = trial("swap_used_mb", &[0.0; 4], &[0.0; 6], &[0.0; 3]);
        assert_eq!((swap.recovery_s, swap.never_recovered), (None, false));
        // A blip under the report's finest figure: 0.000 idle and 0.000 under load.
        let net = trial("net_lo_rx_mbitps", &[0.0; 4], &[0.0, 0.002, 0.0, 0.0, 0.0, 0.0], &[0.0; 3]);
        assert_eq!((net.recovery_s, net.never_recovered), (None, false));
        // Busy before the load (another program) and during it: within 10 % of the baseline.
        let cpu = trial("cpu_busy_pct", &[99.0, 99.5, 100.0, 99.5], &[100.0; 6], &[99.0, 100.0, 99.0]);
        assert_eq!((cpu.recovery_s, cpu.never_recovered), (None, false));
        // A noisy baseline (mean 100, sd 28): 150 under load is within 3 sd of it.
        let ctxt = trial("ctxt_per_s", &[100.0, 140.0, 60.0, 100.0], &[150.0; 6], &[100.0; 3]);
        assert_eq!((ctxt.recovery_s, ctxt.never_recovered), (None, false));
    }

    #[test]
    fn a_metric_the_load_moved_has_its_recovery_time_or_never_came_back() {
        let cpu = trial("cpu_busy_pct", &[5.0; 4], &[80.0; 6], &[50.0, 5.2, 5.0]);
        assert_eq!(cpu.recovery_s, Some(1.0));
        let stuck = trial("cpu_busy_pct", &[5.0; 4], &[80.0; 6], &[50.0, 40.0, 30.0]);
        assert_eq!((stuck.recovery_s, stuck.never_recovered), (None, true));
        // From a zero baseline, any change is a move; back means back to zero.
        let swap = trial("swap_used_mb", &[0.0; 4], &[12.0; 6], &[12.0, 0.0, 0.0]);
        assert_eq!(swap.recovery_s, Some(1.0));
        // Back within the baseline's noise (3 sd = 84) counts as back, though not within 10 % of the
        // baseline nor 90 % of the way back from 900.
        let ctxt = trial("ctxt_per_s", &[100.0, 140.0, 60.0, 100.0], &[900.0; 6], &[400.0, 170.0]);
        assert_eq!(ctxt.recovery_s, Some(1.0));
        // And 90 % of the way back from the load: 0.079 after 0.070 idle and 30 under load.
        let net = trial("net_lo_rx_mbitps", &[0.07; 4], &[30.0; 6], &[0.079, 0.079]);
        assert_eq!(net.recovery_s, Some(0.5));
    }

    #[test]
    fn pooling_keeps_the_recovery_time_of_the_trials_the_load_moved() {
        let moved = trial("mem_used_mb", &[1000.0; 4], &[1500.0; 6], &[1400.0, 1010.0]);
        let still = trial("mem_used_mb", &[1000.0; 4], &[1000.0; 6], &[1000.0; 2]);
        assert_eq!(pool(&[still.clone(), moved.clone()]).unwrap().recovery_s, Some(1.0));
        assert_eq!(pool(&[still.clone(), still.clone()]).unwrap().recovery_s, None);
        // A store written before the judgement: a recovery time on a metric 3 % off its baseline
        // under load is dropped when pooled.
        let old = PhaseStats {
            recovery_s: Some(0.285),
            under_load: Some(1030.0),
            ..still
        };
        let pooled = pool(&[old]).unwrap();
        assert_eq!((pooled.recovery_s, pooled.never_recovered), (None, false));
    }
}
