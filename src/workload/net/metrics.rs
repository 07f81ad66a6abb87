//! A `net` trial's metrics (names in [`METRICS`], documented in docs/load.md) and per-second
//! series, read from its `perflab.load.net/1` document ([`NetJson`]).

use super::json::{ModeJson, NetJson};
use super::report::{Body, NetReport};
use super::text::or_nan;
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
    /// The trial's result: the document's metrics, series and failure, and the round trips'
    /// histogram beside them.
    pub fn to_result(&self) -> WorkloadResult {
        let mut r = self.document().to_result();
        if let Body::Rr(rr) = &self.body {
            if !rr.stats.latency.is_empty() {
                r.histograms.push(NamedHistogram {
                    name: "rtt".into(),
                    hist: rr.stats.latency.clone(),
                });
            }
        }
        r
    }
}

impl NetJson {
    /// The trial's metrics, series and failure (not its histogram: the report's).
    pub fn to_result(&self) -> WorkloadResult {
        let mut r = WorkloadResult::default();
        let m = &mut r.metrics;
        let (series_name, in_gbit) = match &self.result {
            ModeJson::Stream(st) => {
                m.push(gbit("gbit_per_s", st.gbit_per_s));
                if st.upload.bytes > 0 && st.download.bytes > 0 {
                    m.push(gbit("upload_gbit_per_s", st.upload.gbit_per_s));
                    m.push(gbit("download_gbit_per_s", st.download.gbit_per_s));
                }
                m.push(Metric::new("bytes", "bytes", st.bytes as f64, Better::Neither));
                if let Some(sb) = st.server_bytes {
                    m.push(Metric::new("server_bytes", "bytes", sb as f64, Better::Neither));
                }
                m.push(Metric::new("retransmits", "", st.retransmits as f64, Better::Lower));
                let rtts: Vec<f64> = st.streams.iter().filter_map(|s| s.rtt_mean_us).collect();
                if !rtts.is_empty() {
                    m.push(
                        Metric::new("rtt_mean_us", "us", rtts.iter().sum::<f64>() / rtts.len() as f64, Better::Lower)
                            .with_kind(MetricKind::Gauge),
                    );
                    let max = st.streams.iter().map(|s| f64::from(s.rtt_max_us)).fold(0.0, f64::max);
                    m.push(Metric::new("rtt_max_us", "us", max, Better::Lower).with_kind(MetricKind::Gauge));
                }
                for (i, s) in st.streams.iter().enumerate() {
                    m.push(gbit(format!("stream{i}_gbit_per_s"), s.gbit_per_s));
                    m.push(Metric::new(
                        format!("stream{i}_retransmits"),
                        "",
                        f64::from(s.retransmits),
                        Better::Lower,
                    ));
                    let rtt = or_nan(s.rtt_mean_us);
                    m.push(Metric::new(format!("stream{i}_rtt_us"), "us", rtt, Better::Lower).with_kind(MetricKind::Gauge));
                }
                ("gbit_per_s", true)
            }
            ModeJson::Udp(u) => {
                m.push(gbit("sent_gbit_per_s", u.sent_gbit_per_s));
                m.push(gbit("received_gbit_per_s", u.received_gbit_per_s));
                m.push(Metric::new("datagrams_sent", "", u.datagrams_sent as f64, Better::Neither));
                m.push(Metric::new("datagrams_received", "", u.datagrams_received as f64, Better::Neither));
                m.push(Metric::new("lost", "", u.lost as f64, Better::Lower));
                if let Some(loss) = u.loss_pct {
                    m.push(Metric::new("loss_pct", "%", loss, Better::Lower));
                }
                m.push(Metric::new("out_of_order", "", u.out_of_order as f64, Better::Lower));
                m.push(Metric::new("jitter_ms", "ms", or_nan(u.jitter_ms), Better::Lower).with_kind(MetricKind::Gauge));
                ("sent_gbit_per_s", true)
            }
            ModeJson::Rr(rr) | ModeJson::Crr(rr) => {
                m.push(Metric::new(
                    "transactions_per_s",
                    "transactions/s",
                    rr.transactions_per_s,
                    Better::Higher,
                ));
                m.push(Metric::new("transactions", "", rr.transactions as f64, Better::Neither));
                if matches!(self.result, ModeJson::Crr(_)) {
                    m.push(Metric::new("connections", "", rr.connections as f64, Better::Neither));
                }
                if rr.timed > 0 {
                    let t = &rr.rtt_us;
                    for (name, q, v) in [("rtt_p50_us", 0.5, t.p50), ("rtt_p90_us", 0.9, t.p90), ("rtt_p99_us", 0.99, t.p99)] {
                        m.push(Metric::new(name, "us", v, Better::Lower).with_kind(MetricKind::Quantile(q)));
                    }
                    m.push(Metric::new("rtt_max_us", "us", t.max as f64, Better::Lower).with_kind(MetricKind::Gauge));
                }
                ("transactions_per_s", false)
            }
        };
        for t in &self.series {
            r.series.push(SeriesPoint {
                t_s: t.t_s,
                name: series_name.into(),
                value: if in_gbit { t.per_s * 8.0 / 1e9 } else { t.per_s },
            });
        }
        let m = &mut r.metrics;
        m.push(Metric::new("cpu_pct", "%", or_nan(self.cpu.client_pct), Better::Lower));
        let per_gb = or_nan(self.cpu.cpu_s_per_gb);
        m.push(Metric::new("cpu_s_per_gb", "CPU-s/GB", per_gb, Better::Lower).with_kind(MetricKind::Gauge));
        let per_trx = or_nan(self.cpu.cpu_us_per_transaction);
        m.push(Metric::new("cpu_us_per_transaction", "us", per_trx, Better::Lower).with_kind(MetricKind::Gauge));
        m.push(Metric::new("errors", "", self.errors.values().sum::<u64>() as f64, Better::Lower));
        for (class, n) in &self.errors {
            m.push(Metric::new(format!("errors_{class}"), "", *n as f64, Better::Lower));
        }
        r.metrics.retain(|m| m.value.is_finite());
        r.failure = self.failure.clone();
        r
    }
}
