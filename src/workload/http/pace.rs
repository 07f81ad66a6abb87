//! What a worker of either engine (epoll in `worker.rs`, io_uring in `uring.rs`) keeps besides its
//! connections: the open model's schedule and queue of intended send times, its figures, and the
//! per-second intervals it sends to the coordinator. The engines differ in how they move bytes;
//! when a request is due, how a failure counts and what a second holds are decided here, once.

use super::conn::ErrorClass;
use super::response::Parser;
use super::shared::{us, Interval, Message, Schedule, Shared, Stats};
use std::collections::VecDeque;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) struct Pace {
    pub sh: Arc<Shared>,
    pub stats: Stats,
    /// Open model: intended send times not yet sent.
    pub queue: VecDeque<Instant>,
    pub next_arrival: Option<Instant>,
    schedule: Option<Schedule>,
    /// No request is left to claim (`-n` reached, or the open model's schedule ended).
    pub exhausted: bool,
    /// Open model: the service time differs from the latency, so it has its own histogram.
    pub open: bool,
    /// The second under way (its `sec` counts the measured seconds sent).
    pub interval: Interval,
    tx: Sender<Message>,
}

impl Pace {
    pub fn new(sh: Arc<Shared>, id: usize, tx: Sender<Message>) -> Pace {
        let schedule = super::shared::schedule(&sh.cfg, id);
        Pace {
            stats: Stats::new(),
            queue: VecDeque::new(),
            next_arrival: schedule.as_ref().map(|s| s.first(sh.start)),
            schedule,
            exhausted: false,
            open: sh.cfg.rate.is_some(),
            interval: Interval::new(0),
            tx,
            sh,
        }
    }

    /// How long the loop may wait: until the next send, the deadline or the next second, at most
    /// 50 ms.
    pub fn timeout(&self, now: Instant) -> Duration {
        let mut t = Duration::from_millis(50);
        if let Some(a) = self.next_arrival {
            t = t.min(a.saturating_duration_since(now));
        }
        if let Some(d) = self.sh.deadline {
            t = t.min(d.saturating_duration_since(now));
        }
        if now >= self.sh.measure_from {
            let next = self.sh.measure_from + Duration::from_secs(self.interval.sec as u64 + 1);
            t = t.min(next.saturating_duration_since(now));
        } else {
            t = t.min(self.sh.measure_from - now);
        }
        t
    }

    /// Send each finished second of measurement to the coordinator.
    pub fn flush_interval(&mut self, now: Instant, last: bool) {
        super::shared::flush(&mut self.interval, self.sh.measure_from, now, last, &self.tx);
    }

    /// Open model: the intended send times that have come.
    pub fn arrivals(&mut self, now: Instant) {
        while let Some(t) = self.next_arrival {
            if t > now || self.sh.deadline.is_some_and(|d| t >= d) {
                break;
            }
            if t >= self.sh.measure_from {
                if !self.sh.claim() {
                    self.next_arrival = None;
                    self.exhausted = true;
                    break;
                }
                self.stats.scheduled += 1;
            }
            if self.queue.len() < super::shared::QUEUE_CAP {
                self.queue.push_back(t);
            } else if t >= self.sh.measure_from {
                self.stats.dropped += 1;
            }
            self.next_arrival = self.schedule.as_mut().map(|s| t + s.gap());
        }
    }

    /// A failed connect is a failed request: the closed model claims a slot for it, the open model
    /// takes the oldest waiting request.
    pub fn connect_failed(&mut self, class: ErrorClass, msg: &str) {
        let now = Instant::now();
        let measured = if self.sh.cfg.rate.is_some() {
            match self.queue.pop_front() {
                Some(t) => t >= self.sh.measure_from,
                None => false,
            }
        } else if now >= self.sh.measure_from && !self.exhausted {
            let claimed = self.sh.claim();
            self.exhausted |= !claimed;
            claimed
        } else {
            false
        };
        if measured {
            self.count_error(class, msg);
        }
    }

    /// A measured request intended at `intended`, sent at `sent`, answered whole at `now`.
    #[inline]
    pub fn answered(&mut self, now: Instant, intended: Instant, sent: Instant, parser: &Parser) {
        let st = &mut self.stats;
        let lat = us(now.saturating_duration_since(intended));
        let _ = st.latency.record(lat);
        if self.open {
            let _ = st.service.record(us(now.saturating_duration_since(sent)));
        }
        let _ = self.interval.latency.record(lat);
        self.interval.responses += 1;
        st.responses += 1;
        st.status[(parser.status as usize).min(599)] += 1;
        st.body_bytes += parser.body_bytes;
    }

    pub fn count_error(&mut self, class: ErrorClass, msg: &str) {
        self.stats.count_error(class, msg);
        self.interval.errors += 1;
    }

    /// The loop ended at `end` with `inflight` measured requests unanswered: count them and the
    /// requests still queued, and send the last interval.
    pub fn finish(&mut self, end: Instant, inflight: u64) {
        self.stats.inflight_at_stop += inflight;
        self.stats.dropped += self.queue.iter().filter(|t| **t >= self.sh.measure_from).count() as u64;
        if !self.open {
            // Closed model: each request is sent when it is due, so its service time is its latency.
            self.stats.service = self.stats.latency.clone();
        }
        self.flush_interval(end, true);
    }
}
