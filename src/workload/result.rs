//! The result model shared by every workload.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Which direction is better for a metric, so that comparisons can say "improved" or "regressed".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
    Neither,
}

impl Better {
    pub fn as_str(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
            Better::Neither => "neither",
        }
    }
}

/// One named figure, e.g. `requests_per_s` / `req/s` / higher.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub name: String,
    pub unit: String,
    pub value: f64,
    pub better: Better,
}

impl Metric {
    pub fn new(name: impl Into<String>, unit: impl Into<String>, value: f64, better: Better) -> Self {
        Metric {
            name: name.into(),
            unit: unit.into(),
            value,
            better,
        }
    }
}

/// A latency histogram in microseconds (1 µs .. 1 h, 3 significant digits).
#[derive(Clone, Debug)]
pub struct NamedHistogram {
    /// e.g. `latency` (from intended send time), `service_time`, `connect`, `ttfb`.
    pub name: String,
    pub hist: Histogram<u64>,
}

/// A new latency histogram with perflab's standard bounds: 1 µs to 1 h, 3 significant digits.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid static histogram bounds")
}

/// One point of a per-interval series: `t_s` seconds since the load phase began.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    pub t_s: f64,
    pub name: String,
    pub value: f64,
}

/// What one workload run produced.
#[derive(Clone, Debug, Default)]
pub struct WorkloadResult {
    pub metrics: Vec<Metric>,
    pub histograms: Vec<NamedHistogram>,
    pub series: Vec<SeriesPoint>,
    /// Error class → count (e.g. `connect_refused`, `status_5xx`).
    pub errors: Vec<(String, u64)>,
    /// Lines of output kept for the record (e.g. what an adapter could not parse).
    pub raw: Vec<String>,
    /// `Some(reason)` when the workload failed (a parse failure, a non-zero exit).
    pub failure: Option<String>,
}

impl WorkloadResult {
    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name)
    }

    pub fn histogram(&self, name: &str) -> Option<&Histogram<u64>> {
        self.histograms.iter().find(|h| h.name == name).map(|h| &h.hist)
    }
}
