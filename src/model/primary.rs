//! A workload's headline figures: its primary throughput and latency. The runner prints them per
//! trial, the store keeps them with the run (`meta.primary`), and the analysis sweeps the primary
//! throughput in its scaling section (fio IOPS and iperf3 Mbit/s as much as HTTP requests/s).

use super::Metric;
use serde::{Deserialize, Serialize};

/// What a workload declares before it runs: for each role, metric names in order of preference
/// (the first one a trial produced is used). A name starting with `*` matches any metric whose name
/// ends with the rest (stress-ng's `*_bogo_ops_per_s`, whatever the stressor).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Primary {
    /// Higher-is-better rates: `requests_per_s`, `read_iops`, `received_mbitps`, `transactions_per_s`.
    pub throughput: &'static [&'static str],
    /// Lower-is-better times: `latency_p99_ms`, `read_clat_p99_us`, `wall_time_s`.
    pub latency: &'static [&'static str],
    /// The histogram the latency metric is a quantile of, when the workload records one (http:
    /// `latency`); a threshold on one of its quantiles is judged on the merged histogram.
    pub latency_histogram: Option<&'static str>,
}

impl Primary {
    /// No headline figure (a command whose output nothing parses has only its wall time).
    pub const NONE: Primary = Primary {
        throughput: &[],
        latency: &[],
        latency_histogram: None,
    };

    /// "requests_per_s, latency_p99_ms (of the latency histogram)" for the dry run.
    pub fn describe(&self) -> String {
        let list = |names: &[&str]| match names {
            [] => None,
            [one] => Some(one.to_string()),
            many => Some(format!("first of {}", many.join(" / "))),
        };
        let mut parts = Vec::new();
        if let Some(t) = list(self.throughput) {
            parts.push(format!("throughput {t}"));
        }
        if let Some(l) = list(self.latency) {
            let hist = self
                .latency_histogram
                .map(|h| format!(" (from the merged `{h}` histogram)"))
                .unwrap_or_default();
            parts.push(format!("latency {l}{hist}"));
        }
        if parts.is_empty() {
            "none declared".into()
        } else {
            parts.join(", ")
        }
    }
}

/// The names a run's primary figures resolved to, stored with the run (`meta.primary`, JSON).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrimaryMetrics {
    pub throughput: Option<String>,
    pub latency: Option<String>,
    pub latency_histogram: Option<String>,
}

impl PrimaryMetrics {
    /// Resolve declarations (in order) against what trials produced: for each role, the first
    /// candidate, in declaration order, that some trial has.
    pub fn resolve<'a>(declared: &[Primary], results: impl IntoIterator<Item = &'a [Metric]> + Clone) -> PrimaryMetrics {
        let find = |role: fn(&Primary) -> &'static [&'static str]| -> Option<String> {
            declared.iter().flat_map(|p| role(p).iter()).find_map(|want| {
                results
                    .clone()
                    .into_iter()
                    .find_map(|ms| ms.iter().find(|m| matches(want, &m.name)).map(|m| m.name.clone()))
            })
        };
        let latency = find(|p| p.latency);
        let latency_histogram = latency.as_ref().and_then(|l| {
            declared
                .iter()
                .find(|p| p.latency.iter().any(|w| matches(w, l)))
                .and_then(|p| p.latency_histogram.map(str::to_string))
        });
        PrimaryMetrics {
            throughput: find(|p| p.throughput),
            latency,
            latency_histogram,
        }
    }

    /// The same for one trial's result.
    pub fn of_result(declared: &Primary, metrics: &[Metric]) -> PrimaryMetrics {
        PrimaryMetrics::resolve(std::slice::from_ref(declared), [metrics])
    }
}

/// Whether `name` is what the declared `want` names (`*suffix` matches by suffix).
pub fn matches(want: &str, name: &str) -> bool {
    match want.strip_prefix('*') {
        Some(suffix) => name.ends_with(suffix) && name.len() > suffix.len(),
        None => want == name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Better;

    #[test]
    fn the_first_declared_name_a_trial_has_wins() {
        const FIO: Primary = Primary {
            throughput: &["read_iops", "write_iops"],
            latency: &["read_clat_p99_us", "write_clat_p99_us"],
            latency_histogram: None,
        };
        let write_only = vec![
            Metric::new("write_iops", "IO/s", 10.0, Better::Higher),
            Metric::new("write_clat_p99_us", "us", 5.0, Better::Lower),
        ];
        let p = PrimaryMetrics::of_result(&FIO, &write_only);
        assert_eq!(p.throughput.as_deref(), Some("write_iops"));
        assert_eq!(p.latency.as_deref(), Some("write_clat_p99_us"));
        let stress = [Metric::new("cpu_bogo_ops_per_s", "ops/s", 1.0, Better::Higher)];
        const STRESS: Primary = Primary {
            throughput: &["*_bogo_ops_per_s"],
            latency: &[],
            latency_histogram: None,
        };
        assert_eq!(
            PrimaryMetrics::of_result(&STRESS, &stress).throughput.as_deref(),
            Some("cpu_bogo_ops_per_s")
        );
        assert_eq!(PrimaryMetrics::of_result(&Primary::NONE, &stress), PrimaryMetrics::default());
    }
}
