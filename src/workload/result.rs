//! The result model now lives in `crate::model` (the bottom layer); these paths stay for the
//! workloads that name them.

pub use crate::model::result::*;

use hdrhistogram::Histogram;

/// The value at quantile `q` (from 0 to 1; 1 is the largest value recorded) of a histogram, in
/// its own unit. Every workload reads its latency quantiles here (or through [`quantile`]).
pub fn value_at(h: &Histogram<u64>, q: f64) -> u64 {
    if q >= 1.0 {
        h.max()
    } else {
        h.value_at_quantile(q)
    }
}

/// [`value_at`] divided by `per` (a histogram of µs: 1 gives µs, 1000 gives ms).
pub fn quantile(h: &Histogram<u64>, q: f64, per: f64) -> f64 {
    value_at(h, q) as f64 / per
}

/// One metric per `(name, q)`: the histogram's quantile `q` in `unit` (its values divided by
/// `per`), lower better, of kind quantile `q`; none when the histogram is empty.
pub fn quantile_metrics<N: Into<String>>(
    h: &Histogram<u64>,
    names: impl IntoIterator<Item = (N, f64)>,
    unit: &str,
    per: f64,
) -> Vec<Metric> {
    if h.is_empty() {
        return Vec::new();
    }
    names
        .into_iter()
        .map(|(name, q)| Metric::new(name, unit, quantile(h, q, per), Better::Lower).with_kind(MetricKind::Quantile(q)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_read_from_the_histogram_in_the_unit_asked() {
        let mut h = Histogram::<u64>::new(3).expect("histogram");
        for v in 1..=1000u64 {
            h.record(v).expect("record");
        }
        assert_eq!(quantile(&h, 0.5, 1.0), 500.0);
        assert_eq!(quantile(&h, 0.99, 1000.0), 0.99);
        assert_eq!(quantile(&h, 1.0, 1.0), 1000.0);
        let m = quantile_metrics(&h, [("x_p50_us", 0.5), ("x_p99_us", 0.99)], "us", 1.0);
        assert_eq!(m.len(), 2);
        assert_eq!((m[1].name.as_str(), m[1].value), ("x_p99_us", 990.0));
        assert_eq!(m[1].kind, MetricKind::infer("x_p99_us", "us"), "the kind the name says");
        assert!(quantile_metrics(&Histogram::<u64>::new(3).expect("h"), [("x", 0.5)], "us", 1.0).is_empty());
    }
}
