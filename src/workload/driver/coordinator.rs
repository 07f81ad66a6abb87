//! The coordinator: starts the worker threads, calls `on_load_start` when the warm-up ends, merges
//! each second's intervals of all workers into the live series, and returns each worker's result
//! with its thread's CPU and wall time.

use super::clock;
use super::interval::{Message, Tick};
use crate::util::cut::Cut;
use crate::util::Cancel;
use crate::workload::result::latency_histogram;
use hdrhistogram::Histogram;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

thread_local! {
    /// Who else is told each second of a load driven on this thread ([`watching`]).
    static WATCH: RefCell<Option<Watcher>> = const { RefCell::new(None) };
}

/// Told each second of the series (the tick and its merged latency histogram).
pub type Watcher = Box<dyn FnMut(&Tick, &Histogram<u64>)>;

/// Run `body` with `watch` told every second of the series that a load driven on this thread
/// makes, besides its caller's own hooks: the runner's live feed, without each workload passing it
/// through. The watcher before is put back when `body` returns (or unwinds).
pub fn watching<R>(watch: Watcher, body: impl FnOnce() -> R) -> R {
    struct Restore(Option<Watcher>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = self.0.take();
            let _ = WATCH.try_with(|w| *w.borrow_mut() = prev);
        }
    }
    let _restore = Restore(WATCH.with(|w| w.replace(Some(watch))));
    body()
}

/// The tick to the caller's hook, then to the watcher of this thread, if any.
fn tell(hooks: &mut Hooks<'_>, t: &Tick, h: &Histogram<u64>) {
    (hooks.on_tick)(t, h);
    WATCH.with(|w| {
        if let Some(f) = w.borrow_mut().as_mut() {
            f(t, h);
        }
    });
}

/// When the run started, when its measured phase starts and when it ends.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub start: Instant,
    /// Operations whose intended time is at or after this instant are measured (warm-up before it).
    pub measure_from: Instant,
    /// The end of the measured phase, when the run has one: [`END_GRACE`] after it, the calls still
    /// waiting on their peer are cut (see [`drive`]).
    pub end: Option<Instant>,
}

impl Timing {
    /// A run starting now, measured after `warmup`, with no end of its own.
    pub fn starting_now(warmup: Duration) -> Timing {
        let start = Instant::now();
        Timing {
            start,
            measure_from: start + warmup,
            end: None,
        }
    }

    /// This run, its measured phase lasting `duration`.
    pub fn lasting(self, duration: Duration) -> Timing {
        Timing {
            end: Some(crate::util::duration::deadline(self.measure_from, duration)),
            ..self
        }
    }
}

/// How long after the end of the measured phase a worker may still wait on its peer (the last call
/// of a slow server, a count the server sends at the end) before its sockets are cut.
pub const END_GRACE: Duration = Duration::from_secs(1);

/// One worker thread's result, its thread's CPU time and its wall time.
pub struct Finished<S> {
    pub stats: S,
    pub cpu: Duration,
    pub wall: Duration,
}

/// What [`drive`] returns: every worker's result in worker order, the per-second series, how long
/// the measured phase lasted, the whole run's wall time and the process's CPU time over the run.
pub struct Driven<S> {
    pub workers: Vec<Finished<S>>,
    pub series: Vec<Tick>,
    pub measured: Duration,
    pub wall: Duration,
    pub cpu: Duration,
}

/// Hooks the caller gives [`drive`]: the cutover and each second of the series.
pub struct Hooks<'a> {
    pub on_load_start: &'a mut dyn FnMut(),
    pub on_tick: &'a mut dyn FnMut(&Tick, &Histogram<u64>),
}

impl Hooks<'_> {
    /// Run `f` with hooks told of the cutover only (a plan's trial: the series comes back in
    /// the result).
    pub fn cutover_only<R>(on_load_start: &mut dyn FnMut(), f: impl FnOnce(Hooks<'_>) -> R) -> R {
        let mut no_tick = |_: &Tick, _: &Histogram<u64>| {};
        f(Hooks {
            on_load_start,
            on_tick: &mut no_tick,
        })
    }
}

/// Run `threads` workers (thread names `<name>-worker-<id>`): `worker(id, tx)` runs one worker's
/// loop, sends an [`Interval`](super::interval::Interval) per measured second on `tx`, and returns
/// its result when `stop` is set or its work is done. `stop` is set when `cancel` is.
///
/// Each worker thread enters one [`Cut`]: the sockets it makes through
/// [`Watched`](crate::util::cut::Watched) are shut down [`CANCEL_GRACE`](crate::util::cut::CANCEL_GRACE)
/// after `cancel`, or [`END_GRACE`] after the end of the measured phase, so that a worker blocked on
/// a peer that never answers (or never reads) returns, whatever the peer does.
pub fn drive<S, E, F>(
    name: &str,
    threads: usize,
    timing: Timing,
    stop: &AtomicBool,
    cancel: &Cancel,
    hooks: Hooks<'_>,
    worker: F,
) -> anyhow::Result<Driven<S>>
where
    S: Send + 'static,
    E: std::fmt::Display + Send + 'static,
    F: Fn(usize, mpsc::Sender<Message>) -> Result<S, E> + Send + Sync + 'static,
{
    let cpu0 = clock::process_cpu();
    let (tx, rx) = mpsc::channel::<Message>();
    let worker = Arc::new(worker);
    let cut = Cut::new();
    let armed = cut.arm(cancel, timing.end.map(|e| e + END_GRACE));
    let mut handles = Vec::new();
    for id in 0..threads {
        let (tx, worker, cut) = (tx.clone(), worker.clone(), cut.clone());
        handles.push(std::thread::Builder::new().name(format!("{name}-worker-{id}")).spawn(move || {
            let _cut = cut.enter();
            let t0 = Instant::now();
            let r = worker(id, tx.clone());
            let (cpu, wall) = (clock::thread_cpu(), t0.elapsed());
            let _ = tx.send(Message::Finished);
            r.map(|stats| Finished { stats, cpu, wall })
        })?);
    }
    drop(tx);
    let (series, ended) = collect(threads, timing, stop, cancel, hooks, &rx);
    let mut workers = Vec::new();
    for h in handles {
        match h.join() {
            Ok(Ok(f)) => workers.push(f),
            Ok(Err(e)) => return Err(anyhow::anyhow!("a worker failed: {e}")),
            Err(_) => return Err(anyhow::anyhow!("a worker panicked")),
        }
    }
    drop(armed);
    Ok(Driven {
        workers,
        series,
        measured: ended.saturating_duration_since(timing.measure_from),
        wall: ended.duration_since(timing.start),
        cpu: clock::process_cpu().saturating_sub(cpu0),
    })
}

/// The coordinator's loop: until every worker has finished, merge the intervals of each second.
fn collect(
    threads: usize,
    timing: Timing,
    stop: &AtomicBool,
    cancel: &Cancel,
    mut hooks: Hooks<'_>,
    rx: &mpsc::Receiver<Message>,
) -> (Vec<Tick>, Instant) {
    let measure_from = timing.measure_from;
    let mut started = Instant::now() >= measure_from;
    if started {
        (hooks.on_load_start)();
    }
    let mut pending: BTreeMap<u32, (usize, Histogram<u64>, u64, u64)> = BTreeMap::new();
    let mut series = Vec::new();
    let mut finished = 0;
    while finished < threads {
        let now = Instant::now();
        if !started && now >= measure_from {
            started = true;
            (hooks.on_load_start)();
        }
        if cancel.is_cancelled() {
            stop.store(true, Ordering::Relaxed);
        }
        let wait = if started {
            Duration::from_millis(100)
        } else {
            (measure_from - now).min(Duration::from_millis(100))
        };
        match rx.recv_timeout(wait) {
            Ok(Message::Finished) => finished += 1,
            Ok(Message::Interval(iv)) => {
                let e = pending.entry(iv.sec).or_insert_with(|| (0, latency_histogram(), 0, 0));
                e.0 += 1;
                let _ = e.1.add(&iv.latency);
                e.2 += iv.responses;
                e.3 += iv.errors;
                if e.0 == threads {
                    if let Some((_, h, n, errs)) = pending.remove(&iv.sec) {
                        // Its span from now, not from before the wait: a second is whole once
                        // every worker has sent it (the stale instant made it ~0.9 s).
                        let t = tick(iv.sec, &h, n, errs, Instant::now().duration_since(measure_from));
                        tell(&mut hooks, &t, &h);
                        series.push(t);
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let ended = Instant::now();
    // The last, partial second.
    for (sec, (_, h, n, errs)) in pending {
        let t = tick(sec, &h, n, errs, ended.duration_since(measure_from));
        tell(&mut hooks, &t, &h);
        series.push(t);
    }
    (series, ended)
}

fn tick(sec: u32, h: &Histogram<u64>, n: u64, errors: u64, elapsed: Duration) -> Tick {
    // A second is whole unless it is the last one.
    let span = (elapsed.as_secs_f64() - f64::from(sec)).clamp(1e-3, 1.0);
    Tick {
        t_s: f64::from(sec),
        span_s: span,
        responses: n,
        errors,
        requests_per_s: n as f64 / span,
        p50_ms: if n > 0 {
            crate::workload::result::quantile(h, 0.5, 1000.0)
        } else {
            f64::NAN
        },
        p99_ms: if n > 0 {
            crate::workload::result::quantile(h, 0.99, 1000.0)
        } else {
            f64::NAN
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::driver::interval::Interval;

    #[test]
    fn a_whole_second_s_tick_spans_a_whole_second() {
        // The measured phase began 0.95 s ago: the coordinator's first look at the clock is
        // before second 0 ends, the worker's interval of it comes after.
        let measure_from = Instant::now() - Duration::from_millis(950);
        let timing = Timing {
            start: measure_from,
            measure_from,
            end: None,
        };
        let (tx, rx) = mpsc::channel();
        let worker = std::thread::spawn(move || {
            let over = measure_from + Duration::from_millis(1010);
            std::thread::sleep(over.saturating_duration_since(Instant::now()));
            let mut iv = Interval::new(0);
            iv.responses = 400;
            tx.send(Message::Interval(iv)).expect("send");
            tx.send(Message::Finished).expect("send");
        });
        let stop = AtomicBool::new(false);
        let (mut start, mut on_tick) = (|| {}, |_: &Tick, _: &Histogram<u64>| {});
        let hooks = Hooks {
            on_load_start: &mut start,
            on_tick: &mut on_tick,
        };
        let (series, _) = collect(1, timing, &stop, &Cancel::new(), hooks, &rx);
        worker.join().expect("worker");
        assert_eq!(series.len(), 1);
        assert_eq!(series[0].span_s, 1.0, "{:?}", series[0]);
        assert_eq!(series[0].requests_per_s, 400.0);
    }
}
