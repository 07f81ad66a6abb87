//! What the tasks of one async worker share: the request slots' `Job`s, the accounting and the
//! in-flight cap ([`Ctx`]). A leaf of the async engine: the connection tasks (`async_conn`, `h2`)
//! and the engine (`async_engine`) use it; it uses neither.

use super::conn::ErrorClass;
use super::shared::us;
use super::worker::{Interval, Message, Shared, Stats, LATE_TOLERANCE};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Notify, Semaphore, SemaphorePermit};

/// One request about to be sent.
pub struct Job {
    pub intended: Instant,
    pub sent: Instant,
    /// Inside the measured phase (its intended time is at or after the warm-up's end).
    pub measured: bool,
}

/// What a worker's tasks share (one thread, so `RefCell`).
pub struct Ctx {
    pub sh: Arc<Shared>,
    pub(super) st: RefCell<State>,
    pub(super) permits: Semaphore,
    pub(super) work: Notify,
    pub(super) tx: Sender<Message>,
}

pub(super) struct State {
    pub(super) stats: Stats,
    /// The second under way (its `sec` counts the measured seconds sent).
    pub(super) interval: Interval,
    /// Open model: intended send times not yet sent.
    pub(super) queue: VecDeque<Instant>,
    /// No more requests will be started.
    pub(super) exhausted: bool,
    /// Measured requests sent and not yet ended.
    pub(super) inflight: u64,
}

impl Ctx {
    /// The run is over for new requests.
    pub fn finished(&self) -> bool {
        let s = self.st.borrow();
        s.exhausted && (self.sh.cfg.rate.is_none() || s.queue.is_empty())
    }

    pub(super) fn exhaust(&self) {
        self.st.borrow_mut().exhausted = true;
        self.work.notify_waiters();
    }

    /// The next request to send, with its in-flight permit; `None` when the run has no more.
    // The borrow is dropped before each await (clippy cannot see an explicit `drop`).
    #[allow(clippy::await_holding_refcell_ref)]
    pub async fn next_job(&self) -> Option<(Job, SemaphorePermit<'_>)> {
        let permit = self.permits.acquire().await.ok()?;
        let open = self.sh.cfg.rate.is_some();
        loop {
            if self.sh.stop.load(Ordering::Relaxed) {
                return None;
            }
            let now = Instant::now();
            let mut s = self.st.borrow_mut();
            let intended = if open {
                match s.queue.pop_front() {
                    Some(t) => t,
                    None if s.exhausted => return None,
                    None => {
                        drop(s);
                        self.work.notified().await;
                        continue;
                    }
                }
            } else {
                if s.exhausted {
                    return None;
                }
                if now >= self.sh.measure_from && !self.sh.claim() {
                    drop(s);
                    self.exhaust();
                    return None;
                }
                now
            };
            let measured = intended >= self.sh.measure_from;
            if measured {
                s.inflight += 1;
                if now.duration_since(intended) > LATE_TOLERANCE {
                    s.stats.late += 1;
                }
            }
            return Some((
                Job {
                    intended,
                    sent: now,
                    measured,
                },
                permit,
            ));
        }
    }

    /// Return a job that was never sent (its connection died first): it is taken again later.
    pub fn give_back(&self, job: Job) {
        let s = &mut *self.st.borrow_mut();
        if job.measured {
            s.inflight -= 1;
            if job.sent.duration_since(job.intended) > LATE_TOLERANCE {
                s.stats.late -= 1;
            }
        }
        if self.sh.cfg.rate.is_some() {
            s.queue.push_front(job.intended);
        } else if job.measured && self.sh.cfg.requests.is_some() {
            self.sh.issued.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// The first byte (HTTP/1.1) or the response head (HTTP/2) of `job` arrived.
    pub fn first_byte(&self, job: &Job) {
        if job.measured {
            let _ = self.st.borrow_mut().stats.ttfb.record(us(job.sent.elapsed()));
        }
    }

    /// A whole response to `job` arrived.
    pub fn done(&self, job: &Job, status: u16, body_bytes: u64) {
        if !job.measured {
            return;
        }
        let now = Instant::now();
        let s = &mut *self.st.borrow_mut();
        s.inflight -= 1;
        let lat = us(now - job.intended);
        let _ = s.stats.latency.record(lat);
        let _ = s.stats.service.record(us(now - job.sent));
        let _ = s.interval.latency.record(lat);
        s.interval.responses += 1;
        s.stats.responses += 1;
        s.stats.status[(status as usize).min(599)] += 1;
        s.stats.body_bytes += body_bytes;
    }

    /// `job` failed.
    pub fn fail(&self, job: &Job, class: ErrorClass, msg: &str) {
        if job.measured {
            self.st.borrow_mut().inflight -= 1;
            self.count_error(class, msg);
        }
    }

    fn count_error(&self, class: ErrorClass, msg: &str) {
        let s = &mut *self.st.borrow_mut();
        s.stats.count_error(class, msg);
        s.interval.errors += 1;
    }

    /// A failed connect (or TLS handshake) is a failed request, as on the mio path: the closed model
    /// claims one of the requests for it, the open model takes the oldest waiting send.
    pub fn connect_failed(&self, class: ErrorClass, msg: &str) {
        let now = Instant::now();
        let measured = if self.sh.cfg.rate.is_some() {
            self.st.borrow_mut().queue.pop_front().is_some_and(|t| t >= self.sh.measure_from)
        } else if now >= self.sh.measure_from && !self.st.borrow().exhausted {
            let claimed = self.sh.claim();
            if !claimed {
                self.exhaust();
            }
            claimed
        } else {
            false
        };
        if measured {
            self.count_error(class, msg);
        }
    }

    /// A connection was opened: its TCP connect took `connect`, its TLS handshake `tls`.
    pub fn opened(&self, connect: Duration, tls: Option<Duration>) {
        let s = &mut *self.st.borrow_mut();
        s.stats.connections_opened += 1;
        if Instant::now() >= self.sh.measure_from {
            let _ = s.stats.connect.record(us(connect));
            if let Some(t) = tls {
                let _ = s.stats.tls_handshake.record(us(t));
            }
        }
    }

    pub fn reconnected(&self) {
        self.st.borrow_mut().stats.reconnects += 1;
    }

    /// Send each finished second of measurement to the coordinator.
    pub(super) fn flush_interval(&self, now: Instant, last: bool) {
        let s = &mut *self.st.borrow_mut();
        super::shared::flush(&mut s.interval, self.sh.measure_from, now, last, &self.tx);
    }
}
