//! The metrics of a result, shared by every workload: metrics with their kind and direction,
//! histograms, series, and what one workload run produced.

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

/// What a metric is, so that it is aggregated right across repetitions: rates and gauges may be
/// averaged, counts summed, and a quantile of a distribution is never averaged (merge the histograms
/// where they exist, otherwise say which statistic of the per-trial quantiles is shown).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    /// Events per unit of time (`requests_per_s`, IOPS, MiB/s, Mbit/s).
    Rate,
    /// A number of events (`requests`, `errors`).
    Count,
    /// A level read at one moment or averaged over the run (`cpu_busy_pct`, `max_rss_mb`).
    Gauge,
    /// A length of time that is not a quantile (`latency_mean_ms`, `wall_time_s`).
    Duration,
    /// The quantile q (0 < q <= 1; 1 is the maximum) of a distribution (`latency_p99_ms`).
    Quantile(f64),
}

impl MetricKind {
    /// The kind a metric's name and unit imply, for metrics that declare none (and stores written
    /// before kinds were stored): a quantile named in the name (`_p99_`, `_median_`, `_max_`) of a
    /// time; a rate (`/s`, `_per_s`, IOPS); another time (a duration); a percentage or a level with a
    /// unit of size (a gauge); nothing or a plural noun as unit, or bytes (a count).
    pub fn infer(name: &str, unit: &str) -> MetricKind {
        let time_unit = matches!(unit, "ns" | "us" | "µs" | "ms" | "s");
        if let Some(q) = quantile_in_name(name).filter(|_| time_unit || name.contains("lat")) {
            return MetricKind::Quantile(q);
        }
        if unit.ends_with("/s") || name.ends_with("_per_s") || name.ends_with("iops") || name.ends_with("_mibps") {
            return MetricKind::Rate;
        }
        if time_unit {
            return MetricKind::Duration;
        }
        let noun = unit.len() > 1 && unit.ends_with('s') && unit.bytes().all(|b| b.is_ascii_lowercase());
        if unit.is_empty() || noun || unit == "B" || unit == "bytes" {
            return MetricKind::Count;
        }
        MetricKind::Gauge
    }

    /// The quantile, for a quantile.
    pub fn quantile(self) -> Option<f64> {
        match self {
            MetricKind::Quantile(q) => Some(q),
            _ => None,
        }
    }

    /// The kind as the store keeps it: `rate`, `count`, `gauge`, `duration`, `quantile:0.99`.
    pub fn to_text(self) -> String {
        match self {
            MetricKind::Rate => "rate".into(),
            MetricKind::Count => "count".into(),
            MetricKind::Gauge => "gauge".into(),
            MetricKind::Duration => "duration".into(),
            MetricKind::Quantile(q) => format!("quantile:{q}"),
        }
    }

    /// The kind from its stored text; None for text this version does not know.
    pub fn from_text(text: &str) -> Option<MetricKind> {
        Some(match text {
            "rate" => MetricKind::Rate,
            "count" => MetricKind::Count,
            "gauge" => MetricKind::Gauge,
            "duration" => MetricKind::Duration,
            other => {
                let q: f64 = other.strip_prefix("quantile:")?.parse().ok()?;
                if !(q > 0.0 && q <= 1.0) {
                    return None;
                }
                MetricKind::Quantile(q)
            }
        })
    }
}

/// How a quantile is called in text: 0.99 → `p99`, 0.999 → `p99.9`, 0.5 → `p50`, 1 → `max`.
pub fn quantile_label(q: f64) -> String {
    if q >= 1.0 {
        return "max".into();
    }
    let pct = format!("{:.4}", q * 100.0);
    format!("p{}", pct.trim_end_matches('0').trim_end_matches('.'))
}

/// The quantile a metric's name states: `latency_p99_ms` → 0.99, `latency_p999_ms` → 0.999,
/// `clat_p99_9_us` → 0.999, `latency_p50_ms` → 0.5, `p5` → 0.05, `latency_max_ms` and
/// `latency_p100_ms` → 1, `connect_median_ms` → 0.5.
pub fn quantile_in_name(name: &str) -> Option<f64> {
    let parts: Vec<&str> = name.split('_').collect();
    for (i, part) in parts.iter().enumerate() {
        if *part == "max" && i > 0 {
            return Some(1.0);
        }
        if *part == "median" && i > 0 {
            return Some(0.5);
        }
        if *part == "p100" {
            return Some(1.0);
        }
        let Some(digits) = part.strip_prefix('p') else { continue };
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        // `p99_9` is 99.9 %; `p999` is 0.999 and `p5` is 5 % (a single digit is a percent).
        let frac = parts.get(i + 1).filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        let v: f64 = match frac {
            Some(f) if digits.len() == 2 => format!("0.{digits}{f}").parse().ok()?,
            Some(f) if digits.len() == 1 => format!("0.0{digits}{f}").parse().ok()?,
            Some(_) => return None,
            // ab's `100%` row (`latency_p100_ms`) is the longest request.
            None if digits == "100" => 1.0,
            None if digits.len() == 1 => format!("0.0{digits}").parse().ok()?,
            None => format!("0.{digits}").parse().ok()?,
        };
        return (v > 0.0 && v <= 1.0).then_some(v);
    }
    None
}

/// One named figure, e.g. `requests_per_s` / `req/s` / higher / rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub name: String,
    pub unit: String,
    pub value: f64,
    pub better: Better,
    /// What the figure is, so that repetitions are aggregated right: [`Metric::new`] infers it from
    /// the name and unit ([`MetricKind::infer`]); a workload states it with [`Metric::with_kind`]
    /// where inference would be wrong.
    pub kind: MetricKind,
}

impl Metric {
    /// A metric whose kind is inferred from its name and unit.
    pub fn new(name: impl Into<String>, unit: impl Into<String>, value: f64, better: Better) -> Self {
        let (name, unit) = (name.into(), unit.into());
        let kind = MetricKind::infer(&name, &unit);
        Metric {
            name,
            unit,
            value,
            better,
            kind,
        }
    }

    /// The same metric with its kind stated.
    pub fn with_kind(mut self, kind: MetricKind) -> Self {
        self.kind = kind;
        self
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

/// The start of a raw-output line that says how a trial's database connections were secured and
/// authenticated (`oltp database postgres://user@host:port/db: TLSv1.3 TLS13_AES_256_GCM_SHA384,
/// SCRAM-SHA-256-PLUS`): written by the OLTP workload, shown by the report's Run section.
pub const DB_SESSION_LINE: &str = "oltp database ";

/// What one workload run produced.
#[derive(Clone, Debug, Default)]
pub struct WorkloadResult {
    pub metrics: Vec<Metric>,
    pub histograms: Vec<NamedHistogram>,
    pub series: Vec<SeriesPoint>,
    /// Error class → count (e.g. `connect_refused`, `status_5xx`).
    pub errors: Vec<(String, u64)>,
    /// Lines of output kept for the record (what an adapter could not parse, a tool's output, a
    /// built-in workload's own summary).
    pub raw: Vec<String>,
    /// `Some(reason)` when the workload failed (a parse failure, a non-zero exit).
    pub failure: Option<String>,
}

impl WorkloadResult {
    /// The result with a built-in workload's own summary (the text its command, `perflab http` or
    /// `perflab load KIND`, prints) kept as its first lines of output: the record of the run in the
    /// tool's own words, and what `--live`, which runs the command as a trial, prints at the end.
    pub fn with_summary(mut self, summary: &str) -> WorkloadResult {
        let kept = self.raw.drain(..).collect::<Vec<_>>();
        self.raw = summary.lines().map(str::to_string).chain(kept).collect();
        self
    }

    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name)
    }

    pub fn histogram(&self, name: &str) -> Option<&Histogram<u64>> {
        self.histograms.iter().find(|h| h.name == name).map(|h| &h.hist)
    }
}

#[cfg(test)]
mod tests {
    use super::{quantile_in_name, quantile_label, MetricKind};

    #[test]
    fn quantiles_are_read_from_names() {
        assert_eq!(quantile_in_name("latency_p99_ms"), Some(0.99));
        assert_eq!(quantile_in_name("latency_p999_ms"), Some(0.999));
        assert_eq!(quantile_in_name("latency_p50_ms"), Some(0.5));
        assert_eq!(quantile_in_name("latency_max_ms"), Some(1.0));
        assert_eq!(quantile_in_name("latency_p100_ms"), Some(1.0));
        assert_eq!(quantile_in_name("job0_read_clat_p99_9_us"), Some(0.999));
        assert_eq!(quantile_in_name("latency_p5_ms"), Some(0.05));
        assert_eq!(quantile_in_name("requests_per_s"), None);
        assert_eq!(quantile_in_name("max_rss_mb"), None);
        assert_eq!(quantile_in_name("latency_p100_ms"), Some(1.0), "ab's 100 % line is the maximum");
        assert_eq!(quantile_in_name("connect_median_ms"), Some(0.5));
    }

    #[test]
    fn kinds_round_trip_through_their_text() {
        for k in [
            MetricKind::Rate,
            MetricKind::Count,
            MetricKind::Gauge,
            MetricKind::Duration,
            MetricKind::Quantile(0.999),
            MetricKind::Quantile(1.0),
        ] {
            assert_eq!(MetricKind::from_text(&k.to_text()), Some(k));
        }
        assert_eq!(MetricKind::from_text("quantile:1.5"), None);
        assert_eq!(MetricKind::from_text("histogram"), None);
        assert_eq!(quantile_label(0.99), "p99");
        assert_eq!(quantile_label(0.999), "p99.9");
        assert_eq!(quantile_label(0.5), "p50");
        assert_eq!(quantile_label(1.0), "max");
    }

    #[test]
    fn kinds_follow_names_and_units() {
        assert_eq!(MetricKind::infer("latency_p99_ms", "ms"), MetricKind::Quantile(0.99));
        assert_eq!(MetricKind::infer("requests_per_s", "req/s"), MetricKind::Rate);
        assert_eq!(MetricKind::infer("job0_read_iops", "IOPS"), MetricKind::Rate);
        assert_eq!(MetricKind::infer("latency_mean_ms", "ms"), MetricKind::Duration);
        assert_eq!(MetricKind::infer("errors", ""), MetricKind::Count);
        assert_eq!(MetricKind::infer("max_rss_mb", "MB"), MetricKind::Gauge);
        assert_eq!(MetricKind::infer("complete_requests", "requests"), MetricKind::Count);
        assert_eq!(MetricKind::infer("total_transferred_bytes", "B"), MetricKind::Count);
        assert_eq!(MetricKind::infer("error_rate_pct", "%"), MetricKind::Gauge);
        assert_eq!(MetricKind::infer("received_mbitps", "Mbit/s"), MetricKind::Rate);
        assert_eq!(MetricKind::infer("wall_time_s", "s"), MetricKind::Duration);
    }
}
