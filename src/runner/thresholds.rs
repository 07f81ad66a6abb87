//! Thresholds: pass/fail rules evaluated per matrix point over its successful trials. Latency
//! percentiles come from the merged histograms of all repetitions (never averaged); other metrics
//! use the mean across repetitions.

use crate::plan::Threshold;
use crate::store::StoredTrial;

/// The value a threshold is judged on for one point, or None if the point has no such figure.
pub fn observed(metric: &str, trials: &[&StoredTrial]) -> Option<f64> {
    let ok: Vec<&&StoredTrial> = trials.iter().filter(|t| t.ok()).collect();
    if ok.is_empty() {
        return None;
    }
    if let Some(q) = latency_quantile(metric) {
        let mut merged: Option<hdrhistogram::Histogram<u64>> = None;
        for t in &ok {
            if let Some(h) = t.histograms.iter().find(|h| h.name == "latency") {
                match merged.as_mut() {
                    Some(m) => m.add(&h.hist).ok()?,
                    None => merged = Some(h.hist.clone()),
                }
            }
        }
        if let Some(m) = merged.filter(|m| !m.is_empty()) {
            let us = if q >= 1.0 { m.max() } else { m.value_at_quantile(q) };
            return Some(us as f64 / 1000.0);
        }
    }
    let vals: Vec<f64> = ok.iter().filter_map(|t| t.metric(metric)).collect();
    (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
}

/// The quantile of the merged `latency` histogram that a `latency_pNN_ms` / `latency_max_ms` names.
fn latency_quantile(metric: &str) -> Option<f64> {
    metric.strip_prefix("latency_")?.strip_suffix("_ms")?;
    crate::workload::result::quantile_in_name(metric)
}

/// The outcome of one threshold at one point.
pub struct Verdict {
    pub observed: Option<f64>,
    pub passed: bool,
}

pub fn judge(th: &Threshold, trials: &[&StoredTrial]) -> Verdict {
    let observed = observed(&th.metric, trials);
    // A figure that cannot be computed (every trial failed) cannot pass.
    let passed = observed.is_some_and(|v| th.op.holds(v, th.value));
    Verdict { observed, passed }
}

#[cfg(test)]
mod tests {
    use super::latency_quantile;

    #[test]
    fn quantile_names() {
        assert_eq!(latency_quantile("latency_p99_ms"), Some(0.99));
        assert_eq!(latency_quantile("latency_p999_ms"), Some(0.999));
        assert_eq!(latency_quantile("latency_p50_ms"), Some(0.5));
        assert_eq!(latency_quantile("latency_max_ms"), Some(1.0));
        assert_eq!(latency_quantile("requests_per_s"), None);
    }
}
