//! The engine for HTTPS, h2 and h2c: one tokio current-thread runtime per worker thread, with the
//! same closed and open models, the same accounting (`Stats`, one `Interval` a second) and the same
//! rules as the mio HTTP/1.1 path in `worker.rs`, which stays the fast path for plain HTTP/1.1.
//!
//! Each connection is a task (`async_conn`, `h2`); a request slot takes a `Job` from `Ctx` (`async_ctx`): the
//! closed model claims one of the `requests`, the open model takes the oldest intended send time
//! from the schedule. A semaphore holds the in-flight cap.

use super::async_ctx::{Ctx, State};
use super::config::Protocol;
use super::worker::{Interval, Message, Shared, Stats};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Notify, Semaphore};

/// Run one worker with `n` connections until the run ends.
pub fn run(sh: Arc<Shared>, id: usize, n: usize, max_inflight: usize, tx: Sender<Message>) -> std::io::Result<Stats> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let ctx = Rc::new(Ctx {
        st: RefCell::new(State {
            stats: Stats::new(),
            interval: Interval::new(0),
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
        let sec = ctx.st.borrow().interval.sec;
        tokio::time::sleep_until((ctx.sh.measure_from + Duration::from_secs(sec as u64 + 1)).into()).await;
        ctx.flush_interval(Instant::now(), false);
    }
}

/// Open model: put each intended send time on the queue when it comes.
async fn schedule(ctx: Rc<Ctx>, id: usize) {
    let Some(mut schedule) = super::shared::schedule(&ctx.sh.cfg, id) else {
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
