//! The `net` workload of a plan (`type = "net"`).

use super::config::{prepare, NetConfig, NetMode, Prepared};
use super::metrics::METRICS;
use crate::util::Cancel;
use crate::workload::driver::coordinator::Hooks;
use crate::workload::{Primary, Produces, RunSpec, Workload, WorkloadResult};

pub struct NetWorkload {
    p: Prepared,
}

impl NetWorkload {
    pub fn new(cfg: &NetConfig) -> anyhow::Result<NetWorkload> {
        Ok(NetWorkload { p: prepare(cfg)? })
    }
}

/// What the dry run says of these settings besides the keys: the mode's shape, sizes in bytes.
fn facts(p: &Prepared) -> String {
    let buf = p.buffer.map(|b| format!(", socket buffers {b} B")).unwrap_or_default();
    match p.mode {
        NetMode::Stream => format!(
            "{} TCP stream(s) {} to {}, writes of {} B{}{}{}",
            p.streams,
            p.direction.name(),
            p.target,
            p.size,
            p.bytes.map(|b| format!(", exactly {b} bytes (no warm-up)")).unwrap_or_default(),
            buf,
            if p.zerocopy { ", MSG_ZEROCOPY" } else { "" }
        ),
        NetMode::Udp => format!(
            "{} UDP sender(s) to {}, {} B datagrams at {} bit/s in all{buf}",
            p.streams, p.target, p.size, p.rate
        ),
        NetMode::Rr => format!("round trips of {} B to {} on {} connection(s){buf}", p.size, p.target, p.streams),
        NetMode::Crr => format!(
            "a connection to {} per round trip of {} B, {} at a time{buf}",
            p.target, p.size, p.streams
        ),
    }
}

impl Workload for NetWorkload {
    fn name(&self) -> String {
        "net".into()
    }

    fn facts(&self) -> Option<String> {
        Some(facts(&self.p))
    }

    fn primary(&self) -> Primary {
        match self.p.mode {
            NetMode::Stream => Primary {
                throughput: &["gbit_per_s"],
                latency: &["rtt_mean_us"],
                latency_histogram: None,
            },
            NetMode::Udp => Primary {
                throughput: &["received_gbit_per_s"],
                latency: &["jitter_ms"],
                latency_histogram: None,
            },
            NetMode::Rr | NetMode::Crr => Primary {
                throughput: &["transactions_per_s"],
                latency: &["rtt_p99_us"],
                latency_histogram: Some("rtt"),
            },
        }
    }

    fn metrics(&self) -> Produces {
        Produces::only([METRICS])
    }

    fn run(&mut self, spec: RunSpec, cancel: &Cancel, on_load_start: &mut dyn FnMut()) -> anyhow::Result<WorkloadResult> {
        let report = Hooks::cutover_only(on_load_start, |hooks| {
            super::engine::run(&self.p, spec.warmup, spec.load, cancel, hooks)
        })?;
        Ok(report.to_result())
    }
}
