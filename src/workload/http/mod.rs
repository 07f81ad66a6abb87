//! `perflab http`: the HTTP load generator. Closed model (`connections`, stop at `requests` or
//! `duration`) and open model (`rate`, constant or Poisson arrivals, latency from the intended send
//! time). HTTP/1.1 on a hand-written mio hot path: one epoll loop per worker thread, request bytes
//! built once, responses framed without copying bodies, one HdrHistogram per worker merged exactly.
//! HTTPS (rustls, ring), h2 over TLS (ALPN) and h2c run on a tokio engine (`async_engine`) with the
//! same models and accounting.

mod async_conn;
mod async_ctx;
mod async_engine;
pub mod cli;
mod config;
mod conn;
mod diagnosis;
mod engine;
mod h2;
pub mod hdrlog;
mod pace;
mod report;
pub mod response;
mod shared;
mod sys;
mod template;
mod text;
mod timer;
pub mod tls;
mod uring;
mod uring_ring;
mod worker;

pub use config::{HttpConfig, Prepared, Protocol};
pub use diagnosis::diagnose;
pub use engine::run;
pub use report::{percentile_key, HttpReport, PercentilesJson, Tick, Warning, PERCENTILES};
pub use template::prepare;
pub use uring::probe as uring_permitted;
pub use worker::Stats;

use crate::util::Cancel;
use crate::workload::{Primary, Produces, RunSpec, Workload, WorkloadResult};

/// The metrics of an http trial (`HttpReport::to_result`), and the quantiles of its histograms a
/// threshold may name (`<histogram>_<pNN|max>_<ms|us>`, judged on the merged histogram).
const METRICS: &[&str] = &[
    "requests_per_s",
    "transfer_mb_s",
    "latency_mean_ms",
    "latency_sd_ms",
    "total_time_s",
    "error_rate_pct",
    "requests",
    "errors",
    "target_rate_per_s",
    "late_sends",
    "dropped_sends",
    "reconnects",
    "loadgen_cpu_us_per_req",
    "loadgen_busiest_thread_pct",
    "connections",
];
const HISTOGRAM_QUANTILES: &[&str] = &[
    "latency_p*_ms",
    "latency_p*_us",
    "latency_max_ms",
    "latency_max_us",
    "service_time_p*_ms",
    "service_time_p*_us",
    "service_time_max_ms",
    "service_time_max_us",
    "connect_p*_ms",
    "connect_p*_us",
    "connect_max_ms",
    "connect_max_us",
    "tls_handshake_p*_ms",
    "tls_handshake_p*_us",
    "tls_handshake_max_ms",
    "tls_handshake_max_us",
    "ttfb_p*_ms",
    "ttfb_p*_us",
    "ttfb_max_ms",
    "ttfb_max_us",
];

/// The http workload of a plan: warm-up, then the measured load.
pub struct HttpWorkload {
    cfg: Prepared,
}

impl HttpWorkload {
    pub fn new(cfg: HttpConfig) -> anyhow::Result<HttpWorkload> {
        Ok(HttpWorkload { cfg: prepare(&cfg)? })
    }
}

impl Workload for HttpWorkload {
    fn name(&self) -> String {
        "http".into()
    }

    fn asked_rate(&self) -> Option<f64> {
        self.cfg.rate
    }

    fn facts(&self) -> Option<String> {
        let c = &self.cfg;
        let model = match c.rate {
            Some(r) => {
                let arrival = match c.arrival {
                    config::Arrival::Constant => "constant",
                    config::Arrival::Poisson => "poisson",
                };
                format!("open model at {r} req/s ({arrival} arrivals)")
            }
            None => "closed model".into(),
        };
        let seg = if c.segment.is_whole() {
            String::new()
        } else {
            format!(", segment {} over {} connection(s)", c.segment, c.connections)
        };
        Some(format!("{}, {} thread(s), {model}{seg}", c.protocol.name(), c.threads))
    }

    fn primary(&self) -> Primary {
        // Declared once, with its key figures, in workload/figures.rs.
        crate::workload::figures::HTTP.primary
    }

    fn metrics(&self) -> Produces {
        Produces::only([METRICS, HISTOGRAM_QUANTILES])
    }

    fn segment(&mut self, segment: crate::model::Segment) -> Result<(), String> {
        self.cfg = self.cfg.segmented(segment)?;
        Ok(())
    }

    fn run(&mut self, spec: RunSpec, cancel: &Cancel, on_load_start: &mut dyn FnMut()) -> anyhow::Result<WorkloadResult> {
        let mut cfg = self.cfg.clone();
        // The trial's load phase bounds the run; `requests` may end it sooner.
        cfg.duration = Some(match cfg.duration {
            Some(d) if cfg.requests.is_some() => d.min(spec.load),
            _ => spec.load,
        });
        let report = run(&cfg, spec.warmup, cancel, on_load_start, &mut |_, _| {})?;
        Ok(report.to_result().with_summary(&report.summary()))
    }
}
