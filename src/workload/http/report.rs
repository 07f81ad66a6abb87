//! What a run measured, and how it is shown: the ab-like summary, the JSON document
//! (`perflab.http/1`, docs/http-json.md) and the runner's `WorkloadResult`.

use super::config::Prepared;
use super::conn::ErrorClass;
use super::worker::{Stats, LATE_TOLERANCE};
use crate::workload::result::{quantile, value_at};
use crate::workload::{Better, Metric, NamedHistogram, SeriesPoint, WorkloadResult};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;
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

    /// The runner's view.
    pub fn to_result(&self) -> WorkloadResult {
        let mut r = WorkloadResult::default();
        let ms = |h: &Histogram<u64>, q: f64| quantile(h, q, 1000.0);
        let lat = &self.stats.latency;
        let m = &mut r.metrics;
        m.push(Metric::new("requests_per_s", "req/s", self.requests_per_s(), Better::Higher));
        m.push(Metric::new(
            "transfer_mb_s",
            "MB/s",
            self.stats.body_bytes as f64 / 1_048_576.0 / self.measured.as_secs_f64().max(1e-9),
            Better::Higher,
        ));
        if !lat.is_empty() {
            for (name, q) in [
                ("latency_p50_ms", 0.5),
                ("latency_p90_ms", 0.9),
                ("latency_p99_ms", 0.99),
                ("latency_p999_ms", 0.999),
            ] {
                m.push(Metric::new(name, "ms", ms(lat, q), Better::Lower));
            }
            m.push(Metric::new("latency_mean_ms", "ms", lat.mean() / 1000.0, Better::Lower));
            // The spread of the latency (ab's "+/-sd"), from the histogram.
            m.push(Metric::new("latency_sd_ms", "ms", lat.stdev() / 1000.0, Better::Lower));
            m.push(Metric::new("latency_max_ms", "ms", lat.max() as f64 / 1000.0, Better::Lower));
        }
        m.push(Metric::new("error_rate_pct", "%", self.error_rate_pct(), Better::Lower));
        // The measured run's total time (its requests over its throughput), seconds.
        m.push(Metric::new("total_time_s", "s", self.measured.as_secs_f64(), Better::Neither));
        m.push(Metric::new("requests", "", self.stats.responses as f64, Better::Neither));
        m.push(Metric::new("errors", "", self.errors() as f64, Better::Lower));
        // The closed model's concurrency (Little's law: throughput × mean latency ≈ connections).
        if self.target_rate.is_none() {
            m.push(Metric::new("connections", "", self.connections as f64, Better::Neither));
        }
        if let Some(rate) = self.target_rate {
            m.push(Metric::new("target_rate_per_s", "req/s", rate, Better::Neither));
            m.push(Metric::new("late_sends", "", self.stats.late as f64, Better::Lower));
            m.push(Metric::new("dropped_sends", "", self.stats.dropped as f64, Better::Lower));
        }
        m.push(Metric::new("reconnects", "", self.stats.reconnects as f64, Better::Neither));
        if let Some(c) = self.cpu_us_per_request() {
            m.push(Metric::new("loadgen_cpu_us_per_req", "µs", c, Better::Lower));
        }
        if !self.thread_busy.is_empty() {
            m.push(Metric::new(
                "loadgen_busiest_thread_pct",
                "%",
                self.busiest_thread() * 100.0,
                Better::Neither,
            ));
        }
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
        for t in &self.series {
            r.series.push(SeriesPoint {
                t_s: t.t_s,
                name: "requests_per_s".into(),
                value: t.requests_per_s,
            });
            if t.p99_ms.is_finite() {
                r.series.push(SeriesPoint {
                    t_s: t.t_s,
                    name: "latency_p99_ms".into(),
                    value: t.p99_ms,
                });
            }
        }
        r.errors = self.error_counts().into_iter().map(|(n, c, _)| (n.to_string(), c)).collect();
        for (s, n) in self.status_counts() {
            if s >= 400 {
                r.errors.push((format!("status_{s}"), n));
            }
        }
        if self.stats.responses == 0 {
            r.failure = Some(match self.error_counts().first() {
                Some((class, n, ex)) => format!("no response: {n} {class} error(s), e.g. {}", ex.as_deref().unwrap_or("")),
                None => "no response".into(),
            });
        }
        r
    }

    /// The summary an ab user recognises.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let st = &self.stats;
        let secs = self.measured.as_secs_f64();
        let _ = writeln!(s, "Target:                 {}", self.url);
        let _ = writeln!(
            s,
            "Protocol:               {}{}",
            self.protocol,
            if self.tls { " over TLS" } else { "" }
        );
        let _ = writeln!(s, "Connections:            {} on {} thread(s)", self.connections, self.threads);
        let _ = writeln!(
            s,
            "Time taken:             {secs:.3} s{}",
            if self.interrupted { " (interrupted)" } else { "" }
        );
        let _ = writeln!(s, "Complete requests:      {}", st.responses);
        let _ = writeln!(s, "Failed requests:        {}", self.errors() + self.http_errors());
        for (class, n, ex) in self.error_counts() {
            let _ = writeln!(s, "   {class}: {n} (first: {})", ex.unwrap_or_default());
        }
        if self.http_errors() > 0 {
            for (code, n) in self.status_counts().into_iter().filter(|(c, _)| *c >= 400) {
                let _ = writeln!(s, "   status {code}: {n}");
            }
        }
        if st.inflight_at_stop > 0 {
            let _ = writeln!(s, "In flight at stop:      {} (not counted)", st.inflight_at_stop);
        }
        let _ = writeln!(s, "Reconnects:             {}", st.reconnects);
        let _ = writeln!(s, "Requests per second:    {:.2} [#/sec] (mean)", self.requests_per_s());
        if let Some(rate) = self.target_rate {
            let _ = writeln!(
                s,
                "Target rate:            {rate:.2} [#/sec]; achieved {:.2}",
                self.requests_per_s()
            );
            let _ = writeln!(
                s,
                "Late sends:             {} (more than {} ms after their intended time)",
                st.late,
                LATE_TOLERANCE.as_millis()
            );
            let _ = writeln!(s, "Dropped sends:          {} (never sent)", st.dropped);
        }
        let _ = writeln!(
            s,
            "Transfer rate:          {:.2} [Kbytes/sec] received (bodies)",
            st.body_bytes as f64 / 1024.0 / secs.max(1e-9)
        );
        if let Some(c) = self.cpu_us_per_request() {
            let _ = writeln!(
                s,
                "Client CPU:             {c:.1} µs per request ({:.3} s user+sys; busiest thread {:.0} %{})",
                self.cpu.as_secs_f64(),
                self.busiest_thread() * 100.0,
                if self.busy_poll {
                    format!("; busy polling, {:.3} s of it polling for nothing", st.spin.as_secs_f64())
                } else {
                    String::new()
                }
            );
        }
        for w in &self.warnings {
            let _ = writeln!(s, "WARNING:                {}", w.message);
        }
        if st.latency.is_empty() {
            return s;
        }
        let _ = writeln!(s, "\nConnection Times (ms)\n              min  mean[+/-sd] median   max");
        let row = |name: &str, h: &Histogram<u64>| {
            let f = |v: f64| v / 1000.0;
            format!(
                "{name:<9} {:>7.2} {:>6.2} {:>5.2} {:>7.2} {:>7.2}\n",
                f(h.min() as f64),
                f(h.mean()),
                f(h.stdev()),
                f(value_at(h, 0.5) as f64),
                f(h.max() as f64)
            )
        };
        if !st.connect.is_empty() {
            s.push_str(&row("Connect:", &st.connect));
        }
        if !st.tls_handshake.is_empty() {
            s.push_str(&row("TLS:", &st.tls_handshake));
        }
        s.push_str(&row("Waiting:", &st.ttfb));
        s.push_str(&row("Service:", &st.service));
        s.push_str(&row("Total:", &st.latency));
        let from = if self.target_rate.is_some() {
            "from the intended send time"
        } else {
            "from the send"
        };
        let _ = writeln!(s, "\nPercentage of the requests served within a certain time (ms), {from}");
        for p in PERCENTILES {
            let v = quantile(&st.latency, p / 100.0, 1000.0);
            let label = if p == 100.0 {
                format!("{p:>5}%")
            } else {
                format!("{:>5}%", trim(p))
            };
            let suffix = if p == 100.0 { " (longest request)" } else { "" };
            let _ = writeln!(s, " {label} {v:>9.2}{suffix}");
        }
        s
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
    fn of(h: &Histogram<u64>) -> Option<PercentilesJson> {
        (!h.is_empty()).then(|| PercentilesJson {
            percentiles: PERCENTILES
                .iter()
                .map(|p| (format!("p{}", trim(*p)), quantile(h, p / 100.0, 1000.0)))
                .collect(),
            min: h.min() as f64 / 1000.0,
            mean: h.mean() / 1000.0,
            stdev: h.stdev() / 1000.0,
            count: h.len(),
        })
    }
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
    pub p99_ms: Option<f64>,
}

fn trim(p: f64) -> String {
    let s = format!("{p}");
    s.trim_end_matches(".0").to_string()
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
