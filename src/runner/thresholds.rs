//! Thresholds: pass/fail rules evaluated per matrix point over its successful trials, each judged on
//! a statistic that suits what the metric is ([`MetricKind`]), and said with the verdict:
//!
//! - a quantile of a distribution whose histograms were stored (`latency_p99_ms` of the http
//!   workload: `<histogram>_<pNN|max>_ms`): that quantile of the histograms merged over the
//!   repetitions ("p99 of the merged `latency` histogram of 3 trials");
//! - a quantile a tool printed (ab, wrk, sysbench `latency_p99_ms`, fio `read_clat_p99_us`): never the
//!   mean of the per-trial quantiles, but their median ("median of 3 trials' p99"); a maximum is the
//!   largest of them, which is the maximum over all the trials;
//! - any other metric: the mean across repetitions ("mean of 3 trials").

use super::experiment::PointInfo;
use crate::plan::Threshold;
use crate::store::{Store, StoredTrial};
use crate::workload::result::{quantile_in_name, quantile_label};
use crate::workload::MetricKind;

/// The figure a threshold is judged on at one point, and what it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed {
    pub value: f64,
    /// "median of 3 trials' p99", "p99 of the merged `latency` histogram of 3 trials", "mean of 3 trials".
    pub basis: String,
    /// The successful trials it comes from.
    pub n: usize,
}

/// The value a threshold is judged on for one point, or None if the point has no such figure.
pub fn observed(metric: &str, trials: &[&StoredTrial]) -> Option<Observed> {
    let ok: Vec<&StoredTrial> = trials.iter().copied().filter(|t| t.ok()).collect();
    if ok.is_empty() {
        return None;
    }
    if let Some(o) = from_histograms(metric, &ok) {
        return Some(o);
    }
    let with: Vec<(f64, MetricKind)> = ok
        .iter()
        .filter_map(|t| t.metrics.iter().find(|m| m.name == metric).map(|m| (m.value, m.kind)))
        .collect();
    let n = with.len();
    let (_, kind) = *with.first()?;
    let mut vals: Vec<f64> = with.iter().map(|(v, _)| *v).collect();
    let trials = if n == 1 { "1 trial".to_string() } else { format!("{n} trials") };
    Some(match kind {
        MetricKind::Quantile(q) if q >= 1.0 => Observed {
            value: vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            basis: format!("largest of {trials}' max"),
            n,
        },
        MetricKind::Quantile(q) => Observed {
            value: median(&mut vals),
            basis: format!("median of {trials}' {}", quantile_label(q)),
            n,
        },
        _ => Observed {
            value: vals.iter().sum::<f64>() / n as f64,
            basis: format!("mean of {trials}"),
            n,
        },
    })
}

/// `<histogram>_<quantile>_ms` (or `_us`) of a histogram the trials stored: that quantile of their
/// merged histogram, in the metric's unit.
fn from_histograms(metric: &str, ok: &[&StoredTrial]) -> Option<Observed> {
    let (stem, per_us) = match (metric.strip_suffix("_ms"), metric.strip_suffix("_us")) {
        (Some(s), _) => (s, 1000.0),
        (None, Some(s)) => (s, 1.0),
        (None, None) => return None,
    };
    let mut names: Vec<&str> = ok.iter().flat_map(|t| t.histograms.iter().map(|h| h.name.as_str())).collect();
    names.sort_unstable();
    names.dedup();
    let (hist, q) = names.into_iter().find_map(|h| {
        let rest = stem.strip_prefix(h)?.strip_prefix('_')?;
        // Only the quantile itself may follow the histogram's name (`latency_p99`, `latency_max`).
        let q = quantile_in_name(&format!("x_{rest}"))?;
        (rest == "max" || rest.starts_with('p')).then_some((h, q))
    })?;
    let mut merged: Option<hdrhistogram::Histogram<u64>> = None;
    let mut n = 0;
    for t in ok {
        if let Some(h) = t.histograms.iter().find(|h| h.name == hist) {
            n += 1;
            match merged.as_mut() {
                Some(m) => m.add(&h.hist).ok()?,
                None => merged = Some(h.hist.clone()),
            }
        }
    }
    let m = merged.filter(|m| !m.is_empty())?;
    let trials = if n == 1 { "1 trial".to_string() } else { format!("{n} trials") };
    Some(Observed {
        value: crate::workload::result::quantile(&m, q, per_us),
        basis: format!("{} of the merged `{hist}` histogram of {trials}", quantile_label(q)),
        n,
    })
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// The outcome of one threshold at one point.
pub struct Verdict {
    pub observed: Option<Observed>,
    pub passed: bool,
}

impl Verdict {
    /// "observed 13.000 (median of 3 trials' p99)", or "no data".
    pub fn text(&self) -> String {
        match &self.observed {
            Some(o) => format!("observed {:.3} ({})", o.value, o.basis),
            None => "no data (no successful trial has this metric)".into(),
        }
    }
}

pub fn judge(th: &Threshold, trials: &[&StoredTrial]) -> Verdict {
    let observed = observed(&th.metric, trials);
    // A figure that cannot be computed (every trial failed) cannot pass.
    let passed = observed.as_ref().is_some_and(|o| th.op.holds(o.value, th.value));
    Verdict { observed, passed }
}

/// The thresholds at point `point` as they stand, judged over its trials stored so far (of
/// `trials`, the run's) by [`judge`], the rule the run's end applies: what the live feed publishes
/// after each of the point's trials is stored.
pub fn as_they_stand(thresholds: &[Threshold], point: usize, trials: &[StoredTrial]) -> Vec<crate::live::Event> {
    let ts: Vec<&StoredTrial> = trials.iter().filter(|t| t.point == point).collect();
    thresholds
        .iter()
        .map(|th| {
            let v = judge(th, &ts);
            crate::live::Event::Threshold {
                expr: th.expr.clone(),
                point,
                observed: v.observed.as_ref().map(|o| o.value),
                basis: v.observed.map(|o| o.basis).unwrap_or_default(),
                passed: v.passed,
            }
        })
        .collect()
}

/// Judge every threshold at every point, store the verdicts (replacing earlier ones: `--resume`) and
/// return the broken ones as lines for the user (`expr at point: observed 11.000 (median of 3
/// trials' p99)`).
pub fn judge_all(store: &mut Store, thresholds: &[Threshold], points: &[PointInfo], trials: &[StoredTrial]) -> anyhow::Result<Vec<String>> {
    let mut broken = Vec::new();
    store.clear_thresholds()?;
    for th in thresholds {
        for p in points {
            let ts: Vec<&StoredTrial> = trials.iter().filter(|t| t.point == p.id).collect();
            let v = judge(th, &ts);
            let (observed, basis) = v.observed.as_ref().map_or((None, ""), |o| (Some(o.value), o.basis.as_str()));
            store.write_threshold(&th.expr, p.id, observed, basis, v.passed)?;
            if !v.passed {
                let at = if p.label.is_empty() { "the single point" } else { &p.label };
                broken.push(format!("{} at {at}: {}", th.expr, v.text()));
            }
        }
    }
    Ok(broken)
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
