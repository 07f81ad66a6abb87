//! Thresholds: pass/fail rules evaluated per matrix point over its successful trials. Latency
//! percentiles come from the merged histograms of all repetitions (never averaged); other metrics
//! use the mean across repetitions.

use super::experiment::Threshold;
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

/// `latency_p99_ms` → 0.99, `latency_p999_ms` → 0.999, `latency_p50_ms` → 0.5, `latency_max_ms` → 1.
fn latency_quantile(metric: &str) -> Option<f64> {
    let mid = metric.strip_prefix("latency_")?.strip_suffix("_ms")?;
    if mid == "max" {
        return Some(1.0);
    }
    let digits = mid.strip_prefix('p')?;
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    // p50 → 0.50, p99 → 0.99, p999 → 0.999; a single digit is a percent (p5 → 0.05).
    let v: f64 = format!("0.{digits}").parse().ok()?;
    Some(if digits.len() == 1 { v / 10.0 } else { v })
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
