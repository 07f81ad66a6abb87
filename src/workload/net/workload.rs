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

/// `p` cut to `segment`'s slice (see [`Workload::segment`]).
fn segmented(p: &Prepared, segment: crate::model::Segment) -> Result<Prepared, String> {
    let mut out = p.clone();
    let n = segment.share(p.streams as u64) as usize;
    if n == 0 {
        return Err(format!(
            "{} streams cannot be split into {} segments: each segment needs at least one",
            p.streams, segment.count
        ));
    }
    if let Some(total) = p.bytes {
        let b = segment.share(total);
        if b == 0 {
            return Err(format!(
                "{total} bytes cannot be split into {} segments: each segment needs at least one",
                segment.count
            ));
        }
        out.bytes = Some(b);
    }
    out.rate = p.rate * n as f64 / p.streams as f64;
    out.streams = n;
    Ok(out)
}

impl Workload for NetWorkload {
    fn name(&self) -> String {
        "net".into()
    }

    fn facts(&self) -> Option<String> {
        Some(facts(&self.p))
    }

    /// Stream (sender, connection) `j` is segment `j mod N`'s; `bytes` are split to sum to the
    /// whole; udp's rate over all senders becomes the part of it this segment's senders send.
    fn segment(&mut self, segment: crate::model::Segment) -> Result<(), String> {
        self.p = segmented(&self.p, segment)?;
        Ok(())
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
        Ok(report.to_result().with_summary(&report.summary()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Segment;

    #[test]
    fn segments_split_the_streams_the_bytes_and_the_udp_rate_to_sum_to_the_whole() {
        let whole = Prepared {
            target: "127.0.0.1:5201".parse().unwrap(),
            mode: NetMode::Udp,
            streams: 5,
            direction: super::super::config::Direction::Upload,
            size: 1400,
            rate: 1e9,
            bytes: Some(10_000_001),
            buffer: None,
            zerocopy: false,
        };
        let parts: Vec<Prepared> = (0..2).map(|i| segmented(&whole, Segment::new(i, 2).unwrap()).unwrap()).collect();
        assert_eq!(parts.iter().map(|p| p.streams).collect::<Vec<_>>(), [3, 2]);
        assert_eq!(parts.iter().map(|p| p.bytes.unwrap()).sum::<u64>(), 10_000_001);
        assert!((parts.iter().map(|p| p.rate).sum::<f64>() - 1e9).abs() < 1e-3);
        // Each sender sends at the whole load's per-sender rate.
        assert!((parts[0].rate / 3.0 - whole.rate / 5.0).abs() < 1e-6);
        let err = segmented(&whole, Segment::new(5, 6).unwrap()).unwrap_err();
        assert!(err.contains("5 streams cannot be split into 6 segments"), "{err}");
    }
}
