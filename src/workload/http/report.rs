//! What a run measured, as one document ([`HttpJson`], `perflab.http/1`, docs/http-json.md): its
//! serialization is `--json`, and `text.rs` reads the same document as the ab-like summary and
//! the runner's `WorkloadResult`.

use super::config::Prepared;
use super::conn::ErrorClass;
use super::worker::{Stats, LATE_TOLERANCE};
use crate::workload::result::quantile;
use crate::workload::{NamedHistogram, WorkloadResult};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// A reason to doubt the figures: the load generator may have been the bottleneck.
#[derive(Clone, Debug, PartialEq)]
pub struct Warning {
    /// `client_cpu_bound`, `client_behind_schedule` or `shares_cores_with_target`.
    pub kind: &'static str,
    pub message: String,
}

pub use crate::workload::driver::interval::Tick;

pub struct HttpReport {
    pub url: String,
    pub connections: usize,
    pub threads: usize,
    pub target_rate: Option<f64>,
    /// "http/1.1", "h2" or "h2c"; `tls`: over HTTPS.
    pub protocol: &'static str,
    pub tls: bool,
    /// The workers polled for responses instead of sleeping (`--busy-poll`).
    pub busy_poll: bool,
    pub stats: Stats,
    pub series: Vec<Tick>,
    pub measured: Duration,
    pub cpu: Duration,
    pub interrupted: bool,
    /// The whole run, warm-up included (the span of `cpu`).
    pub wall: Duration,
    /// Each worker thread's CPU time over its wall time (0..1).
    pub thread_busy: Vec<f64>,
    pub warnings: Vec<Warning>,
}

/// The percentiles of ab's table, extended.
pub const PERCENTILES: [f64; 11] = [50.0, 66.0, 75.0, 80.0, 90.0, 95.0, 98.0, 99.0, 99.9, 99.99, 100.0];

impl HttpReport {
    pub fn new(cfg: &Prepared, stats: Stats, series: Vec<Tick>, measured: Duration, cpu: Duration, interrupted: bool) -> HttpReport {
        HttpReport {
            url: cfg.url.clone(),
            connections: cfg.connections,
            threads: cfg.threads,
            target_rate: cfg.rate,
            protocol: cfg.protocol.name(),
            tls: cfg.tls.is_some(),
            busy_poll: cfg.busy_poll,
            stats,
            series,
            measured,
            cpu,
            interrupted,
            wall: measured,
            thread_busy: Vec::new(),
            warnings: Vec::new(),
        }
    }

    pub fn errors(&self) -> u64 {
        self.stats.errors.iter().sum()
    }

    /// Requests that ended (a response or a transport error).
    pub fn completed(&self) -> u64 {
        self.stats.responses + self.errors()
    }

    pub fn requests_per_s(&self) -> f64 {
        self.stats.responses as f64 / self.measured.as_secs_f64().max(1e-9)
    }

    /// Responses with status >= 400 count as failed requests in the error rate, beside transport errors.
    pub fn http_errors(&self) -> u64 {
        self.stats.status[400..].iter().sum()
    }

    pub fn error_rate_pct(&self) -> f64 {
        let n = self.completed();
        if n == 0 {
            return 0.0;
        }
        100.0 * (self.errors() + self.http_errors()) as f64 / n as f64
    }

    /// The busiest worker thread's CPU time over its wall time (0..1).
    pub fn busiest_thread(&self) -> f64 {
        self.thread_busy.iter().cloned().fold(0.0, f64::max)
    }

    pub fn cpu_us_per_request(&self) -> Option<f64> {
        let n = self.completed();
        (n > 0).then(|| self.cpu.as_secs_f64() * 1e6 / n as f64)
    }

    pub fn status_counts(&self) -> Vec<(u16, u64)> {
        self.stats
            .status
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(s, n)| (s as u16, *n))
            .collect()
    }

    pub fn error_counts(&self) -> Vec<(&'static str, u64, Option<String>)> {
        ErrorClass::ALL
            .iter()
            .filter(|c| self.stats.errors[**c as usize] > 0)
            .map(|c| {
                (
                    c.name(),
                    self.stats.errors[*c as usize],
                    self.stats.first_error[*c as usize].clone(),
                )
            })
            .collect()
    }

    /// The runner's view: the document's metrics, series and errors, and the histograms
    /// (merged exactly across trials, so kept whole).
    pub fn to_result(&self) -> WorkloadResult {
        let mut r = self.document().to_result();
        for (name, h) in [
            ("latency", &self.stats.latency),
            ("service_time", &self.stats.service),
            ("connect", &self.stats.connect),
            ("tls_handshake", &self.stats.tls_handshake),
            ("ttfb", &self.stats.ttfb),
        ] {
            if !h.is_empty() {
                r.histograms.push(NamedHistogram {
                    name: name.into(),
                    hist: h.clone(),
                });
            }
        }
        r
    }

    /// The summary an ab user recognises (from the document).
    pub fn summary(&self) -> String {
        self.document().summary()
    }

    /// The `perflab.http/1` document, typed.
    pub fn document(&self) -> HttpJson {
        let st = &self.stats;
        HttpJson {
            schema: "perflab.http/1",
            url: self.url.clone(),
            protocol: self.protocol,
            tls: self.tls,
            connections: self.connections,
            threads: self.threads,
            duration_s: self.measured.as_secs_f64(),
            interrupted: self.interrupted,
            requests: st.responses,
            requests_per_s: self.requests_per_s(),
            body_bytes: st.body_bytes,
            status: self.status_counts().into_iter().map(|(c, n)| (c.to_string(), n)).collect(),
            errors: self
                .error_counts()
                .into_iter()
                .map(|(class, count, first)| ErrorJson { class, count, first })
                .collect(),
            error_rate_pct: self.error_rate_pct(),
            in_flight_at_stop: st.inflight_at_stop,
            reconnects: st.reconnects,
            connections_opened: st.connections_opened,
            open_model: self.target_rate.map(|r| OpenModelJson {
                target_rate_per_s: r,
                scheduled: st.scheduled,
                late: st.late,
                dropped: st.dropped,
                late_tolerance_ms: LATE_TOLERANCE.as_millis() as u64,
            }),
            latency_ms: PercentilesJson::of(&st.latency),
            service_time_ms: PercentilesJson::of(&st.service),
            connect_ms: PercentilesJson::of(&st.connect),
            tls_handshake_ms: PercentilesJson::of(&st.tls_handshake),
            ttfb_ms: PercentilesJson::of(&st.ttfb),
            client_cpu_us_per_request: self.cpu_us_per_request(),
            client_cpu_s: self.cpu.as_secs_f64(),
            client_wall_s: self.wall.as_secs_f64(),
            client_thread_busy_pct: self.thread_busy.iter().map(|b| b * 100.0).collect(),
            busy_poll: self.busy_poll,
            client_spin_s: st.spin.as_secs_f64(),
            warnings: self
                .warnings
                .iter()
                .map(|w| WarningJson {
                    kind: w.kind,
                    message: w.message.clone(),
                })
                .collect(),
            series: self
                .series
                .iter()
                .map(|t| SecondJson {
                    t_s: t.t_s,
                    requests_per_s: t.requests_per_s,
                    errors: t.errors,
                    p50_ms: t.p50_ms.is_finite().then_some(t.p50_ms),
                    p99_ms: t.p99_ms.is_finite().then_some(t.p99_ms),
                })
                .collect(),
        }
    }

    /// The `perflab.http/1` JSON document, as printed (keys in alphabetical order).
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(self.document()).unwrap_or_default()
    }
}

/// The `perflab.http/1` document (docs/http-json.md): this struct is the schema. Serialized
/// through [`HttpReport::json`], its keys come out in alphabetical order.
#[derive(Clone, Debug, Serialize)]
pub struct HttpJson {
    pub schema: &'static str,
    pub url: String,
    pub protocol: &'static str,
    pub tls: bool,
    pub connections: usize,
    pub threads: usize,
    pub duration_s: f64,
    pub interrupted: bool,
    pub requests: u64,
    pub requests_per_s: f64,
    pub body_bytes: u64,
    /// Responses per status code.
    pub status: BTreeMap<String, u64>,
    pub errors: Vec<ErrorJson>,
    pub error_rate_pct: f64,
    pub in_flight_at_stop: u64,
    pub reconnects: u64,
    pub connections_opened: u64,
    pub open_model: Option<OpenModelJson>,
    pub latency_ms: Option<PercentilesJson>,
    pub service_time_ms: Option<PercentilesJson>,
    pub connect_ms: Option<PercentilesJson>,
    pub tls_handshake_ms: Option<PercentilesJson>,
    pub ttfb_ms: Option<PercentilesJson>,
    pub client_cpu_us_per_request: Option<f64>,
    pub client_cpu_s: f64,
    pub client_wall_s: f64,
    pub client_thread_busy_pct: Vec<f64>,
    pub busy_poll: bool,
    pub client_spin_s: f64,
    pub warnings: Vec<WarningJson>,
    pub series: Vec<SecondJson>,
}

/// One class of transport errors.
#[derive(Clone, Debug, Serialize)]
pub struct ErrorJson {
    pub class: &'static str,
    pub count: u64,
    pub first: Option<String>,
}

/// The open model's accounting.
#[derive(Clone, Debug, Serialize)]
pub struct OpenModelJson {
    pub target_rate_per_s: f64,
    pub scheduled: u64,
    pub late: u64,
    pub dropped: u64,
    pub late_tolerance_ms: u64,
}

/// A histogram's percentiles (`p50` ... `p100`), min, mean and stdev in ms, and its count.
#[derive(Clone, Debug, Serialize)]
pub struct PercentilesJson {
    #[serde(flatten)]
    pub percentiles: BTreeMap<String, f64>,
    pub min: f64,
    pub mean: f64,
    pub stdev: f64,
    pub count: u64,
}

impl PercentilesJson {
    /// Null for an empty histogram (µs in, ms out).
    pub fn of(h: &Histogram<u64>) -> Option<PercentilesJson> {
        (!h.is_empty()).then(|| PercentilesJson {
            percentiles: PERCENTILES
                .iter()
                .map(|p| (percentile_key(*p), quantile(h, p / 100.0, 1000.0)))
                .collect(),
            min: h.min() as f64 / 1000.0,
            mean: h.mean() / 1000.0,
            stdev: h.stdev() / 1000.0,
            count: h.len(),
        })
    }
}

/// `p99.9`, `p100`: a percentile's key in the document.
pub fn percentile_key(p: f64) -> String {
    format!("p{}", format!("{p}").trim_end_matches(".0"))
}

/// A reason to doubt the figures.
#[derive(Clone, Debug, Serialize)]
pub struct WarningJson {
    pub kind: &'static str,
    pub message: String,
}

/// One second of the measured phase.
#[derive(Clone, Debug, Serialize)]
pub struct SecondJson {
    pub t_s: f64,
    pub requests_per_s: f64,
    pub errors: u64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::result::{assert_json_documented, doc_section};

    /// A report with a figure in every field: a response, an error, the open model, a warning, a second.
    fn report() -> HttpReport {
        let mut cfg = super::super::config::HttpConfig::new("http://127.0.0.1:9/");
        cfg.rate = Some(10.0);
        let p = super::super::config::prepare(&cfg).expect("valid");
        let mut st = Stats::new();
        st.responses = 1;
        st.status[200] = 1;
        for h in [
            &mut st.latency,
            &mut st.service,
            &mut st.connect,
            &mut st.tls_handshake,
            &mut st.ttfb,
        ] {
            h.record(1500).expect("record");
        }
        st.count_error(ErrorClass::Reset, "reset by peer");
        let tick = Tick {
            t_s: 0.0,
            span_s: 1.0,
            responses: 1,
            errors: 1,
            requests_per_s: 1.0,
            p50_ms: f64::NAN,
            p99_ms: f64::NAN,
        };
        let mut r = HttpReport::new(&p, st, vec![tick], Duration::from_secs(1), Duration::from_millis(5), false);
        r.thread_busy = vec![0.5];
        r.warnings.push(Warning {
            kind: "client_cpu_bound",
            message: "busy".into(),
        });
        r
    }

    #[test]
    fn every_key_of_the_json_is_documented() {
        let j = report().json();
        assert!(j["latency_ms"]["p99.9"].is_number() && j["open_model"]["late_tolerance_ms"] == 1);
        assert_eq!(j["latency_ms"]["count"], 1);
        assert_eq!(j["series"][0]["p99_ms"], serde_json::Value::Null);
        assert_eq!(j["status"]["200"], 1);
        assert_eq!(j["errors"][0]["class"], "reset");
        assert_json_documented(
            &j,
            doc_section(include_str!("../../../docs/http-json.md"), "perflab.http/1"),
            &["status"],
        );
    }
}
