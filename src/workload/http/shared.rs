//! What the workers of one run share (the run's settings, the `-n` budget, the stop flag), the
//! per-second interval they report, the statistics each one keeps and the engine merges, and the
//! open model's send schedule that both engines (mio and tokio) follow.

use super::config::Prepared;
use super::conn::ErrorClass;
use crate::workload::result::latency_histogram;
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What all workers share.
pub struct Shared {
    pub cfg: Prepared,
    pub start: Instant,
    /// Requests whose intended time is at or after this instant are measured (warm-up before it).
    pub measure_from: Instant,
    pub deadline: Option<Instant>,
    /// Measured requests claimed so far (for `requests = n`).
    pub issued: AtomicU64,
    pub stop: AtomicBool,
}

impl Shared {
    /// Claims one of the `-n` measured requests: false once all are claimed (always true without `-n`).
    pub fn claim(&self) -> bool {
        self.cfg.requests.is_none_or(|n| self.issued.fetch_add(1, Ordering::Relaxed) < n)
    }
}

pub use crate::workload::driver::clock::us;
pub use crate::workload::driver::interval::{flush, Interval, Message};
pub use crate::workload::driver::schedule::{Schedule, LATE_TOLERANCE, QUEUE_CAP};

/// A worker's totals.
pub struct Stats {
    pub latency: Histogram<u64>,
    pub service: Histogram<u64>,
    pub connect: Histogram<u64>,
    /// HTTPS: the TLS handshake after the TCP connect.
    pub tls_handshake: Histogram<u64>,
    pub ttfb: Histogram<u64>,
    pub responses: u64,
    pub status: Vec<u64>,
    pub errors: [u64; ErrorClass::COUNT],
    pub first_error: [Option<String>; ErrorClass::COUNT],
    pub body_bytes: u64,
    pub late: u64,
    pub dropped: u64,
    pub scheduled: u64,
    pub inflight_at_stop: u64,
    pub reconnects: u64,
    pub connections_opened: u64,
    /// Busy polling: wall time spent in polls that found nothing and the yields after them.
    pub spin: Duration,
}

impl Default for Stats {
    fn default() -> Stats {
        Stats::new()
    }
}

impl Stats {
    pub fn new() -> Stats {
        Stats {
            latency: latency_histogram(),
            service: latency_histogram(),
            connect: latency_histogram(),
            tls_handshake: latency_histogram(),
            ttfb: latency_histogram(),
            responses: 0,
            status: vec![0; 600],
            errors: [0; ErrorClass::COUNT],
            first_error: Default::default(),
            body_bytes: 0,
            late: 0,
            dropped: 0,
            scheduled: 0,
            inflight_at_stop: 0,
            reconnects: 0,
            connections_opened: 0,
            spin: Duration::ZERO,
        }
    }

    /// Count one failed request of `class`; the first message of each class is kept for the report.
    pub fn count_error(&mut self, class: ErrorClass, msg: &str) {
        let k = class as usize;
        self.errors[k] += 1;
        if self.first_error[k].is_none() {
            self.first_error[k] = Some(msg.to_string());
        }
    }

    /// Add another worker's totals (histograms merge exactly).
    pub fn merge(&mut self, o: &Stats) {
        let _ = self.latency.add(&o.latency);
        let _ = self.service.add(&o.service);
        let _ = self.connect.add(&o.connect);
        let _ = self.tls_handshake.add(&o.tls_handshake);
        let _ = self.ttfb.add(&o.ttfb);
        self.responses += o.responses;
        self.status.iter_mut().zip(&o.status).for_each(|(a, b)| *a += b);
        for i in 0..ErrorClass::COUNT {
            self.errors[i] += o.errors[i];
            if self.first_error[i].is_none() {
                self.first_error[i] = o.first_error[i].clone();
            }
        }
        self.body_bytes += o.body_bytes;
        self.late += o.late;
        self.dropped += o.dropped;
        self.scheduled += o.scheduled;
        self.inflight_at_stop += o.inflight_at_stop;
        self.reconnects += o.reconnects;
        self.connections_opened += o.connections_opened;
        self.spin += o.spin;
    }
}

/// Worker `id`'s open-model schedule (the driver's), None in the closed model (no rate).
pub fn schedule(cfg: &Prepared, id: usize) -> Option<Schedule> {
    Some(Schedule::segmented(cfg.rate?, cfg.threads, cfg.arrival, cfg.seed, id, cfg.segment))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::http::config::{prepare, HttpConfig};

    fn cfg(rate: Option<f64>) -> Prepared {
        let mut c = HttpConfig::new("http://127.0.0.1:9/");
        c.rate = rate;
        c.threads = Some(4);
        c.connections = 4;
        c.duration = Some("1s".into());
        prepare(&c).expect("valid config")
    }

    #[test]
    fn the_closed_model_has_no_schedule_and_the_open_one_shares_the_rate_over_the_threads() {
        assert!(schedule(&cfg(None), 0).is_none());
        let mut s = schedule(&cfg(Some(400.0)), 1).expect("open model");
        let t0 = Instant::now();
        assert_eq!(s.first(t0) - t0, Duration::from_micros(2500));
        assert_eq!(s.gap(), Duration::from_millis(10));
    }

    #[test]
    fn a_segment_takes_its_share_of_connections_and_requests_and_its_arrivals() {
        let seg = |i, n| crate::model::Segment::new(i, n).unwrap();
        let mut c = HttpConfig::new("http://127.0.0.1:9/");
        c.connections = 10;
        c.threads = Some(4);
        c.requests = Some(1001);
        let p = prepare(&c).expect("valid config");
        let parts: Vec<Prepared> = (0..3).map(|i| p.segmented(seg(i, 3)).expect("splits")).collect();
        // Closed model: connections 0, 3, 6, 9 | 1, 4, 7 | 2, 5, 8; requests 334 + 334 + 333.
        assert_eq!(parts.iter().map(|q| q.connections).collect::<Vec<_>>(), [4, 3, 3]);
        assert_eq!(parts.iter().map(|q| q.threads).collect::<Vec<_>>(), [4, 3, 3]);
        assert_eq!(parts.iter().map(|q| q.requests.unwrap()).sum::<u64>(), 1001);
        assert!(p
            .segmented(seg(10, 11))
            .unwrap_err()
            .contains("10 connections cannot be split into 11"));
        c.connections = 100;
        c.requests = Some(5);
        assert!(prepare(&c)
            .unwrap()
            .segmented(seg(5, 6))
            .unwrap_err()
            .contains("5 requests cannot be split into 6"));
        // Open model: every segment keeps its connections and threads, the schedule takes the slice.
        let mut open = cfg(Some(400.0));
        open = open.segmented(seg(1, 2)).expect("splits");
        assert_eq!((open.connections, open.threads), (4, 4));
        let t0 = Instant::now();
        let mut s = schedule(&open, 0).expect("open model");
        // Arrival 1 of the global 2.5 ms grid, then every 2 × 4 arrivals.
        assert_eq!(s.first(t0) - t0, Duration::from_micros(2500));
        assert_eq!(s.gap(), Duration::from_millis(20));
    }
}
