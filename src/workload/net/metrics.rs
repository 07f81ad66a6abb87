//! A `net` trial's metrics (names in [`METRICS`], documented in docs/load.md) and per-second series.

use super::config::NetMode;
use super::report::{Body, NetReport};
use crate::workload::result::quantile_metrics;
use crate::workload::{Better, Metric, MetricKind, NamedHistogram, SeriesPoint, WorkloadResult};

/// The names a net trial's metrics can have.
pub const METRICS: &[&str] = &[
    "gbit_per_s",
    "upload_gbit_per_s",
    "download_gbit_per_s",
    "bytes",
    "server_bytes",
    "retransmits",
    "rtt_mean_us",
    "rtt_max_us",
    "stream*_gbit_per_s",
    "stream*_retransmits",
    "stream*_rtt_us",
    "sent_gbit_per_s",
    "received_gbit_per_s",
    "datagrams_sent",
    "datagrams_received",
    "lost",
    "loss_pct",
    "out_of_order",
    "jitter_ms",
    "transactions_per_s",
    "transactions",
    "connections",
    "rtt_p*_us",
    "cpu_pct",
    "cpu_s_per_gb",
    "cpu_us_per_transaction",
    "errors",
    "errors_*",
];

fn gbit(name: impl Into<String>, v: f64) -> Metric {
    Metric::new(name, "Gbit/s", v, Better::Higher)
}

impl NetReport {
    pub fn to_result(&self) -> WorkloadResult {
        let mut r = WorkloadResult::default();
        let secs = self.measured.as_secs_f64().max(1e-9);
        let g = |b: u64| b as f64 * 8.0 / secs / 1e9;
        let m = &mut r.metrics;
        match &self.body {
            Body::Stream(v) => {
                let (u, d) = self.stream_bytes();
                m.push(gbit("gbit_per_s", g(u + d)));
                if u > 0 && d > 0 {
                    m.push(gbit("upload_gbit_per_s", g(u)));
                    m.push(gbit("download_gbit_per_s", g(d)));
                }
                m.push(Metric::new("bytes", "bytes", (u + d) as f64, Better::Neither));
                if let Some(sb) = self.server_bytes() {
                    m.push(Metric::new("server_bytes", "bytes", sb as f64, Better::Neither));
                }
                m.push(Metric::new(
                    "retransmits",
                    "",
                    v.iter().map(|s| f64::from(s.retransmits)).sum(),
                    Better::Lower,
                ));
                let rtts: Vec<f64> = v.iter().map(|s| s.rtt_mean_us).filter(|x| x.is_finite()).collect();
                if !rtts.is_empty() {
                    m.push(
                        Metric::new("rtt_mean_us", "us", rtts.iter().sum::<f64>() / rtts.len() as f64, Better::Lower)
                            .with_kind(MetricKind::Gauge),
                    );
                    m.push(
                        Metric::new(
                            "rtt_max_us",
                            "us",
                            v.iter().map(|s| f64::from(s.rtt_max_us)).fold(0.0, f64::max),
                            Better::Lower,
                        )
                        .with_kind(MetricKind::Gauge),
                    );
                }
                for (i, s) in v.iter().enumerate() {
                    m.push(gbit(format!("stream{i}_gbit_per_s"), g(s.bytes)));
                    m.push(Metric::new(
                        format!("stream{i}_retransmits"),
                        "",
                        f64::from(s.retransmits),
                        Better::Lower,
                    ));
                    m.push(Metric::new(format!("stream{i}_rtt_us"), "us", s.rtt_mean_us, Better::Lower).with_kind(MetricKind::Gauge));
                }
                for t in &self.series {
                    r.series.push(SeriesPoint {
                        t_s: t.t_s,
                        name: "gbit_per_s".into(),
                        value: t.requests_per_s * 8.0 / 1e9,
                    });
                }
            }
            Body::Udp(_) => {
                let t = self.udp();
                m.push(gbit("sent_gbit_per_s", g(t.sent_bytes)));
                m.push(gbit("received_gbit_per_s", g(t.received_bytes)));
                m.push(Metric::new("datagrams_sent", "", t.sent as f64, Better::Neither));
                m.push(Metric::new("datagrams_received", "", t.received as f64, Better::Neither));
                m.push(Metric::new("lost", "", t.lost as f64, Better::Lower));
                if t.sent > 0 {
                    m.push(Metric::new("loss_pct", "%", t.lost as f64 / t.sent as f64 * 100.0, Better::Lower));
                }
                m.push(Metric::new("out_of_order", "", t.out_of_order as f64, Better::Lower));
                m.push(Metric::new("jitter_ms", "ms", t.jitter_ms, Better::Lower).with_kind(MetricKind::Gauge));
                for t in &self.series {
                    r.series.push(SeriesPoint {
                        t_s: t.t_s,
                        name: "sent_gbit_per_s".into(),
                        value: t.requests_per_s * 8.0 / 1e9,
                    });
                }
            }
            Body::Rr(rr) => {
                m.push(Metric::new(
                    "transactions_per_s",
                    "transactions/s",
                    rr.stats.ops as f64 / secs,
                    Better::Higher,
                ));
                m.push(Metric::new("transactions", "", rr.stats.ops as f64, Better::Neither));
                if self.p.mode == NetMode::Crr {
                    m.push(Metric::new("connections", "", rr.connections as f64, Better::Neither));
                }
                if !rr.stats.latency.is_empty() {
                    let qs = [("rtt_p50_us", 0.5), ("rtt_p90_us", 0.9), ("rtt_p99_us", 0.99)];
                    m.extend(quantile_metrics(&rr.stats.latency, qs, "us", 1.0));
                    m.push(Metric::new("rtt_max_us", "us", rr.stats.latency.max() as f64, Better::Lower).with_kind(MetricKind::Gauge));
                    r.histograms.push(NamedHistogram {
                        name: "rtt".into(),
                        hist: rr.stats.latency.clone(),
                    });
                }
                for t in &self.series {
                    r.series.push(SeriesPoint {
                        t_s: t.t_s,
                        name: "transactions_per_s".into(),
                        value: t.requests_per_s,
                    });
                }
            }
        }
        m.push(Metric::new("cpu_pct", "%", self.cpu_pct(), Better::Lower));
        m.push(Metric::new("cpu_s_per_gb", "CPU-s/GB", self.cpu_s_per_gb(), Better::Lower).with_kind(MetricKind::Gauge));
        m.push(Metric::new("cpu_us_per_transaction", "us", self.cpu_us_per_transaction(), Better::Lower).with_kind(MetricKind::Gauge));
        let errors = self.errors();
        m.push(Metric::new("errors", "", errors.values().sum::<u64>() as f64, Better::Lower));
        for (class, n) in errors {
            m.push(Metric::new(format!("errors_{class}"), "", n as f64, Better::Lower));
        }
        r.metrics.retain(|m| m.value.is_finite());
        r.failure = self.failure();
        r
    }
}
