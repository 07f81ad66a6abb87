//! What a `net` run measured, per mode: as a human summary, JSON (`perflab.load.net/1`,
//! docs/load.md), a plan trial's metrics, and the failure line when a connection failed.

use super::config::Prepared;
use super::sock::NetError;
use super::stream::StreamStats;
use super::udp::UdpStats;
use crate::workload::driver::coordinator::Driven;
use crate::workload::driver::interval::Tick;
use crate::workload::driver::ops::OpStats;
use crate::workload::result::quantile;
use std::collections::BTreeMap;
use std::time::Duration;

pub const SCHEMA: &str = "perflab.load.net/1";

/// rr and crr: the driver's counts and the round trips' errors by class.
pub struct Rr {
    pub stats: OpStats,
    pub connections: u64,
    pub errors: BTreeMap<&'static str, u64>,
    pub error: Option<NetError>,
}

pub enum Body {
    Stream(Vec<StreamStats>),
    Udp(Vec<UdpStats>),
    Rr(Rr),
}

pub struct NetReport {
    pub p: Prepared,
    pub warmup: Duration,
    pub body: Body,
    pub series: Vec<Tick>,
    pub measured: Duration,
    pub wall: Duration,
    pub cpu: Duration,
    pub interrupted: bool,
}

pub(super) fn gbps(bytes: u64, s: f64) -> f64 {
    bytes as f64 * 8.0 / s.max(1e-9) / 1e9
}

/// UDP over all senders.
#[derive(Clone, Copy, Debug, Default)]
pub struct UdpTotals {
    pub sent: u64,
    pub sent_bytes: u64,
    pub received: u64,
    pub received_bytes: u64,
    pub lost: u64,
    pub out_of_order: u64,
    pub jitter_ms: f64,
    pub send_errors: u64,
    /// Dropped on purpose by the server's testing aid (`--net-drop-every`), counted in `lost`.
    pub dropped_by_aid: u64,
}

impl NetReport {
    pub fn new(p: &Prepared, warmup: Duration, body: Body, d: Driven<()>, interrupted: bool) -> NetReport {
        NetReport {
            p: p.clone(),
            warmup,
            body,
            series: d.series,
            measured: d.measured,
            wall: d.wall,
            cpu: d.cpu,
            interrupted,
        }
    }

    pub(super) fn secs(&self) -> f64 {
        self.measured.as_secs_f64().max(1e-9)
    }

    /// The client process's CPU over the run, % of one CPU.
    pub fn cpu_pct(&self) -> f64 {
        self.cpu.as_secs_f64() / self.wall.as_secs_f64().max(1e-9) * 100.0
    }

    /// The errors by class.
    pub fn errors(&self) -> BTreeMap<&'static str, u64> {
        let mut m = BTreeMap::new();
        let mut add = |e: &Option<NetError>| {
            if let Some(e) = e {
                *m.entry(e.class.name()).or_insert(0) += 1;
            }
        };
        match &self.body {
            Body::Stream(v) => v.iter().for_each(|s| add(&s.error)),
            Body::Udp(v) => v.iter().for_each(|s| add(&s.error)),
            Body::Rr(r) => return r.errors.clone(),
        }
        m
    }

    /// Why the run failed, in one line naming the error's class, if it did.
    pub fn failure(&self) -> Option<String> {
        let first = match &self.body {
            Body::Stream(v) => v.iter().find_map(|s| s.error.clone()),
            Body::Udp(v) => v.iter().find_map(|s| s.error.clone()),
            Body::Rr(r) => r.error.clone(),
        };
        if let Some(e) = first {
            return Some(format!("net {}: {}", self.p.mode.name(), e.line()));
        }
        if let (Body::Stream(v), Some(want), false) = (&self.body, self.p.bytes, self.interrupted) {
            let moved: u64 = v.iter().map(|s| s.bytes).sum();
            if moved != want {
                return Some(format!(
                    "net stream: timeout: moved {moved} of the {want} bytes asked before the time ran out"
                ));
            }
        }
        None
    }

    /// Bytes moved in the measured phase, (upload, download).
    pub fn stream_bytes(&self) -> (u64, u64) {
        let Body::Stream(v) = &self.body else { return (0, 0) };
        v.iter()
            .fold((0, 0), |(u, d), s| if s.upload { (u + s.bytes, d) } else { (u, d + s.bytes) })
    }

    /// The server's count of the uploads' bytes (warm-up included), when every upload has one.
    pub fn server_bytes(&self) -> Option<u64> {
        let Body::Stream(v) = &self.body else { return None };
        let ups: Vec<&StreamStats> = v.iter().filter(|s| s.upload).collect();
        (!ups.is_empty()).then_some(())?;
        ups.iter().map(|s| s.server_bytes).sum()
    }

    /// Every byte this process moved (warm-up included), for the CPU per byte.
    fn all_bytes(&self) -> u64 {
        match &self.body {
            Body::Stream(v) => v.iter().map(|s| s.bytes + s.warmup_bytes).sum(),
            Body::Udp(v) => v.iter().map(|s| s.sent_bytes).sum(),
            Body::Rr(_) => 0,
        }
    }

    /// Client CPU seconds per GB moved (1e9 bytes).
    pub fn cpu_s_per_gb(&self) -> f64 {
        let b = self.all_bytes();
        if b == 0 {
            return f64::NAN;
        }
        self.cpu.as_secs_f64() / (b as f64 / 1e9)
    }

    /// rr, crr: client CPU µs per round trip.
    pub fn cpu_us_per_transaction(&self) -> f64 {
        match &self.body {
            Body::Rr(r) if r.stats.ops > 0 => self.cpu.as_secs_f64() * 1e6 / r.stats.ops as f64,
            _ => f64::NAN,
        }
    }

    pub fn udp(&self) -> UdpTotals {
        let Body::Udp(v) = &self.body else { return UdpTotals::default() };
        let mut t = UdpTotals::default();
        let mut jit = Vec::new();
        for s in v {
            t.sent += s.sent;
            t.sent_bytes += s.sent_bytes;
            t.send_errors += s.send_errors;
            if let Some(r) = &s.server {
                t.received += r.received;
                t.received_bytes += r.bytes;
                t.out_of_order += r.out_of_order;
                t.dropped_by_aid += r.dropped_by_aid;
                jit.push(r.jitter_ns as f64 / 1e6);
            }
        }
        t.lost = t.sent.saturating_sub(t.received);
        t.jitter_ms = if jit.is_empty() {
            f64::NAN
        } else {
            jit.iter().sum::<f64>() / jit.len() as f64
        };
        t
    }

    pub(super) fn rr_us(r: &Rr, q: f64) -> f64 {
        quantile(&r.stats.latency, q, 1.0)
    }

    pub fn headline(&self) -> String {
        let s = self.secs();
        match &self.body {
            Body::Stream(_) => {
                let (u, d) = self.stream_bytes();
                format!("{:.2} Gbit/s", gbps(u + d, s))
            }
            Body::Udp(_) => {
                let t = self.udp();
                format!("received {:.3} Gbit/s, loss {:.2} %", gbps(t.received_bytes, s), loss_pct(&t))
            }
            Body::Rr(r) => format!("{:.0} transactions/s", r.stats.ops as f64 / s),
        }
    }

    /// The summary (from the document).
    pub fn summary(&self) -> String {
        self.document().summary()
    }
}

pub(super) fn loss_pct(t: &UdpTotals) -> f64 {
    if t.sent == 0 {
        return f64::NAN;
    }
    t.lost as f64 / t.sent as f64 * 100.0
}
