//! What the workers of one run share (the run's settings, the `-n` budget, the stop flag), the
//! per-second interval they report, the statistics each one keeps and the engine merges, and the
//! open model's send schedule that both engines (mio and tokio) follow.

use super::config::{Arrival, Prepared};
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

/// Late means sent more than this after the intended time.
pub const LATE_TOLERANCE: Duration = Duration::from_millis(1);

/// The most intended sends a worker keeps waiting for a free connection (open model); later ones
/// are counted as dropped, so a rate the target cannot follow never grows memory without bound.
pub const QUEUE_CAP: usize = 1 << 20;

/// One second of one worker's measured responses.
pub struct Interval {
    pub sec: u32,
    pub latency: Histogram<u64>,
    pub responses: u64,
    pub errors: u64,
}

pub enum Message {
    Interval(Interval),
    Finished,
}

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

/// A duration in whole microseconds, at least 1: the unit the latency histograms record (they start
/// at 1 µs, so a response faster than that counts as 1 µs).
pub(super) fn us(d: Duration) -> u64 {
    (d.as_micros() as u64).max(1)
}

/// One worker's open-model schedule: the intended send times when `rate` requests per second are
/// spread over `threads` workers. Each worker sends at `rate / threads`; its first send is offset by
/// `id / threads` of a gap so that the workers' sends interleave evenly. With Poisson arrivals the gaps
/// are exponentially distributed with the same mean, drawn from a generator seeded by the run's seed
/// and the worker's id, so the same seed gives the same schedule.
pub struct Schedule {
    /// The mean gap between two of this worker's sends, seconds.
    gap_s: f64,
    offset: Duration,
    arrival: Arrival,
    rng: u64,
}

impl Schedule {
    /// The schedule of worker `id`; None in the closed model (no rate).
    pub fn new(cfg: &Prepared, id: usize) -> Option<Schedule> {
        let rate = cfg.rate?;
        let workers = cfg.threads as f64;
        let gap_s = workers / rate;
        Some(Schedule {
            gap_s,
            offset: crate::util::duration::saturating_from_secs(gap_s * id as f64 / workers),
            arrival: cfg.arrival,
            rng: cfg.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(id as u64 + 1),
        })
    }

    /// The first intended send time of this worker, for a run that starts at `start`.
    pub fn first(&self, start: Instant) -> Instant {
        crate::util::duration::deadline(start, self.offset)
    }

    /// The gap from one intended send to the next.
    pub fn gap(&mut self) -> Duration {
        let gap = match self.arrival {
            Arrival::Constant => self.gap_s,
            // Inverse transform: -ln(U) for U uniform in (0, 1) is exponential with mean 1.
            Arrival::Poisson => -self.gap_s * uniform(&mut self.rng).ln(),
        };
        crate::util::duration::saturating_from_secs(gap)
    }
}

/// xorshift64*: small, fast and reproducible from its state. Returns a number in (0, 1) (never 0,
/// so its logarithm is finite) and advances `state`.
fn uniform(state: &mut u64) -> f64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    let v = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
    ((v >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::http::config::{prepare, HttpConfig};

    fn cfg(rate: Option<f64>, arrival: &str, seed: u64) -> Prepared {
        let mut c = HttpConfig::new("http://127.0.0.1:9/");
        c.rate = rate;
        c.arrival = rate.map(|_| arrival.into());
        c.seed = Some(seed);
        c.threads = Some(4);
        c.connections = 4;
        c.duration = Some("1s".into());
        prepare(&c).expect("valid config")
    }

    #[test]
    fn closed_model_has_no_schedule() {
        assert!(Schedule::new(&cfg(None, "constant", 1), 0).is_none());
    }

    #[test]
    fn constant_gaps_are_threads_over_rate_and_workers_interleave() {
        // 4 workers at 400/s in all: each sends every 10 ms, worker i offset by i * 2.5 ms.
        let c = cfg(Some(400.0), "constant", 1);
        let t0 = Instant::now();
        for id in 0..4 {
            let mut s = Schedule::new(&c, id).expect("open model");
            assert_eq!(s.first(t0) - t0, Duration::from_micros(2500 * id as u64));
            assert_eq!(s.gap(), Duration::from_millis(10));
            assert_eq!(s.gap(), Duration::from_millis(10));
        }
    }

    #[test]
    fn poisson_gaps_have_the_mean_gap_and_depend_only_on_seed_and_worker() {
        let c = cfg(Some(400.0), "poisson", 7);
        let draw = |c: &Prepared, id| {
            let mut s = Schedule::new(c, id).expect("open model");
            (0..20_000).map(|_| s.gap().as_secs_f64()).collect::<Vec<_>>()
        };
        let a = draw(&c, 0);
        assert_eq!(a, draw(&c, 0), "same seed and worker, same gaps");
        assert_ne!(a, draw(&c, 1), "another worker draws other gaps");
        assert_ne!(a, draw(&cfg(Some(400.0), "poisson", 8), 0), "another seed draws other gaps");
        let mean = a.iter().sum::<f64>() / a.len() as f64;
        // Exponential with mean 10 ms: the standard error of 20 000 draws is 0.07 ms.
        assert!((mean - 0.010).abs() < 0.0005, "mean gap {mean}");
        let sd = (a.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / a.len() as f64).sqrt();
        assert!((sd - 0.010).abs() < 0.001, "an exponential's sd equals its mean: {sd}");
        assert!(a.iter().all(|g| g.is_finite() && *g >= 0.0));
    }
}
