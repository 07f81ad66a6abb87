//! The engine for HTTPS, h2 and h2c: one tokio current-thread runtime per worker thread, with the
//! same closed and open models, the same accounting (`Stats`, one `Interval` a second) and the same
//! rules as the mio HTTP/1.1 path in `worker.rs`, which stays the fast path for plain HTTP/1.1.
//!
//! Each connection is a task ([`super::async_conn`]); a request slot takes a `Job` from [`Ctx`]: the
//! closed model claims one of the `requests`, the open model takes the oldest intended send time
//! from the schedule. A semaphore holds the in-flight cap.

use super::config::Protocol;
use super::conn::ErrorClass;
use super::shared::{us, Schedule};
use super::worker::{Interval, Message, Shared, Stats, LATE_TOLERANCE};
use crate::workload::result::latency_histogram;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
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
    st: RefCell<State>,
    permits: Semaphore,
    work: Notify,
    tx: Sender<Message>,
}

struct State {
    stats: Stats,
    interval: Interval,
    sec: u32,
    /// Open model: intended send times not yet sent.
    queue: VecDeque<Instant>,
    /// No more requests will be started.
    exhausted: bool,
    /// Measured requests sent and not yet ended.
    inflight: u64,
}

impl Ctx {
    /// The run is over for new requests.
    pub fn finished(&self) -> bool {
        let s = self.st.borrow();
        s.exhausted && (self.sh.cfg.rate.is_none() || s.queue.is_empty())
    }

    fn exhaust(&self) {
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
    fn flush_interval(&self, now: Instant, last: bool) {
        if now < self.sh.measure_from {
            return;
        }
        let elapsed = now.duration_since(self.sh.measure_from).as_secs() as u32;
        let s = &mut *self.st.borrow_mut();
        while s.sec < elapsed || last {
            let next = Interval {
                sec: s.sec + 1,
                latency: latency_histogram(),
                responses: 0,
                errors: 0,
            };
            let done = std::mem::replace(&mut s.interval, next);
            let _ = self.tx.send(Message::Interval(done));
            s.sec += 1;
            if last {
                break;
            }
        }
    }
}

/// Run one worker with `n` connections until the run ends.
pub fn run(sh: Arc<Shared>, id: usize, n: usize, max_inflight: usize, tx: Sender<Message>) -> std::io::Result<Stats> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let ctx = Rc::new(Ctx {
        st: RefCell::new(State {
            stats: Stats::new(),
            interval: Interval {
                sec: 0,
                latency: latency_histogram(),
                responses: 0,
                errors: 0,
            },
            sec: 0,
            queue: VecDeque::new(),
            exhausted: false,
            inflight: 0,
        }),
        permits: Semaphore::new(max_inflight),
        work: Notify::new(),
        tx,
        sh,
    });
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, drive(ctx.clone(), id, n));
    drop(local);
    drop(rt);
    let end = Instant::now();
    let mut s = ctx.st.borrow_mut();
    s.stats.inflight_at_stop += s.inflight;
    let measure_from = ctx.sh.measure_from;
    s.stats.dropped += s.queue.iter().filter(|t| **t >= measure_from).count() as u64;
    drop(s);
    ctx.flush_interval(end, true);
    let stats = std::mem::take(&mut ctx.st.borrow_mut().stats);
    Ok(stats)
}

async fn drive(ctx: Rc<Ctx>, id: usize, n: usize) {
    tokio::task::spawn_local(ticker(ctx.clone()));
    if ctx.sh.cfg.rate.is_some() {
        tokio::task::spawn_local(schedule(ctx.clone(), id));
    }
    let conns: Vec<_> = (0..n)
        .map(|_| {
            let c = ctx.clone();
            tokio::task::spawn_local(async move {
                match c.sh.cfg.protocol {
                    Protocol::Http1 => super::async_conn::http1(&c).await,
                    Protocol::H2 | Protocol::H2c => super::h2::run(c.clone()).await,
                }
            })
        })
        .collect();
    let all = async {
        for h in conns {
            let _ = h.await;
        }
    };
    let stop = async {
        loop {
            tokio::time::sleep(Duration::from_millis(20)).await;
            if ctx.sh.stop.load(Ordering::Relaxed) {
                ctx.work.notify_waiters();
                return;
            }
        }
    };
    let deadline = async {
        match ctx.sh.deadline {
            Some(d) => tokio::time::sleep_until(d.into()).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = all => {}
        _ = stop => {}
        _ = deadline => {}
    }
}

/// One `Interval` a second to the coordinator.
async fn ticker(ctx: Rc<Ctx>) {
    loop {
        let sec = ctx.st.borrow().sec;
        tokio::time::sleep_until((ctx.sh.measure_from + Duration::from_secs(sec as u64 + 1)).into()).await;
        ctx.flush_interval(Instant::now(), false);
    }
}

/// Open model: put each intended send time on the queue when it comes.
async fn schedule(ctx: Rc<Ctx>, id: usize) {
    let Some(mut schedule) = Schedule::new(&ctx.sh.cfg, id) else {
        return;
    };
    let mut next = schedule.first(ctx.sh.start);
    loop {
        if ctx.sh.deadline.is_some_and(|d| next >= d) {
            break;
        }
        // tokio's timers have a 1 ms grain: sleep the last part on the thread, as the mio path does.
        let coarse = next.checked_sub(Duration::from_millis(1)).unwrap_or(next);
        tokio::time::sleep_until(coarse.into()).await;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        }
        if next >= ctx.sh.measure_from {
            if !ctx.sh.claim() {
                break;
            }
            ctx.st.borrow_mut().stats.scheduled += 1;
        }
        {
            let mut st = ctx.st.borrow_mut();
            if st.queue.len() < super::shared::QUEUE_CAP {
                st.queue.push_back(next);
            } else if next >= ctx.sh.measure_from {
                st.stats.dropped += 1;
            }
        }
        ctx.work.notify_one();
        next += schedule.gap();
    }
    ctx.exhaust();
}
