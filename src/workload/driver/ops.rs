//! The driver's own worker loop, for workloads whose operation is a synchronous call: each worker
//! thread calls its [`Operation`] back to back (closed model) or at its intended times (open model),
//! times every measured call into its latency histogram, and sends one interval a second.

use super::clock::us;
use super::coordinator::{drive, Finished, Hooks, Timing};
use super::interval::{flush, Interval, Message, Tick};
use super::schedule::{Arrival, Schedule, LATE_TOLERANCE, QUEUE_CAP};
use crate::util::Cancel;
use crate::workload::result::{latency_histogram, quantile_metrics};
use crate::workload::{Better, Metric, NamedHistogram, SeriesPoint, WorkloadResult};
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One workload's operation, owned by one worker thread.
pub trait Operation: Send {
    /// Run one operation; an `Err` is counted as a failed operation (its first message kept).
    fn call(&mut self) -> Result<(), String>;

    /// [`call`](Self::call), told whether the driver counts this call (`measured`: it belongs to
    /// the measured phase), for an operation that keeps its own counts of the measured phase (the
    /// `oltp` statements and error classes). The driver calls this one.
    fn call_measured(&mut self, measured: bool) -> Result<(), String> {
        let _ = measured;
        self.call()
    }

    /// Between two operations of the closed model, not timed: a workload that paces itself (the
    /// `cpu` duty cycle) waits here. `now` is the clock after the last call; `measured`: the load
    /// phase has begun.
    fn between(&mut self, _now: Instant, _measured: bool) {}

    /// Nothing to do for now (the `mem` touch mode holding its region): the worker naps instead of
    /// calling, until this turns false or the run ends.
    fn idle(&self) -> bool {
        false
    }
}

/// The end of the run as an operation sees it, so that a long operation can stop early.
#[derive(Clone)]
pub struct Until(Arc<Ctx>);

impl Until {
    /// The measured phase is over or the run was stopped.
    pub fn reached(&self) -> bool {
        self.0.stop.load(Ordering::Relaxed) || Instant::now() >= self.0.deadline
    }
}

/// How the driver runs the operations.
#[derive(Clone, Debug)]
pub struct Spec {
    pub workers: usize,
    /// Open model: operations per second over all workers; None: the closed model.
    pub rate: Option<f64>,
    pub arrival: Arrival,
    pub seed: u64,
    pub warmup: Duration,
    /// The measured phase's length.
    pub duration: Duration,
    /// Stop after this many measured operations (over all workers).
    pub ops: Option<u64>,
    /// The open model's slice of the global schedule this run sends (the whole load but for
    /// `perflab run --segment`); the closed model's workers and `ops` are the kind's to split.
    pub segment: crate::model::Segment,
}

impl Spec {
    /// The closed model: `workers` workers, each doing its next operation as soon as the last
    /// ends, for `duration` after `warmup`.
    pub fn closed(workers: usize, warmup: Duration, duration: Duration) -> Spec {
        Spec {
            workers,
            rate: None,
            arrival: Arrival::Constant,
            seed: 1,
            warmup,
            duration,
            ops: None,
            segment: crate::model::Segment::WHOLE,
        }
    }
}

/// The end of an op-driven kind's result (cpu, mem), the same for each: its operations and
/// errors, the quantiles of its operations' latency (the histogram kept whole as `op`), finite
/// metrics only, and its operations per second as the series.
pub struct OpTail<'a> {
    pub ops: u64,
    pub errors: u64,
    pub latency: &'a Histogram<u64>,
    pub series: &'a [Tick],
}

impl OpTail<'_> {
    /// Append to `r`: `quantiles` as `(name, q)` in `unit` (the histogram's values divided by `per`).
    pub fn finish(self, r: &mut WorkloadResult, quantiles: &[(&str, f64)], unit: &str, per: f64) {
        let m = &mut r.metrics;
        m.push(Metric::new("ops", "", self.ops as f64, Better::Neither));
        m.push(Metric::new("errors", "", self.errors as f64, Better::Lower));
        m.extend(quantile_metrics(self.latency, quantiles.iter().copied(), unit, per));
        if !self.latency.is_empty() {
            r.histograms.push(NamedHistogram {
                name: "op".into(),
                hist: self.latency.clone(),
            });
        }
        r.metrics.retain(|m| m.value.is_finite());
        for t in self.series {
            r.series.push(SeriesPoint {
                t_s: t.t_s,
                name: "ops_per_s".into(),
                value: t.requests_per_s,
            });
        }
    }
}

/// One worker's counts (or all of them merged), of the measured phase. A failed operation is
/// counted in `errors` only: `ops`, `latency` and the series' `responses` are the operations that
/// succeeded (a failure has no response time, and is no throughput).
#[derive(Clone, Debug)]
pub struct OpStats {
    pub latency: Histogram<u64>,
    pub ops: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    /// Open model: measured operations started more than [`LATE_TOLERANCE`] after their time.
    pub late: u64,
    /// Open model: intended operations skipped because the worker was too far behind.
    pub dropped: u64,
    pub scheduled: u64,
}

impl OpStats {
    pub fn new() -> OpStats {
        OpStats {
            latency: latency_histogram(),
            ops: 0,
            errors: 0,
            first_error: None,
            late: 0,
            dropped: 0,
            scheduled: 0,
        }
    }

    /// Add another worker's counts (histograms merge exactly).
    pub fn merge(&mut self, o: &OpStats) {
        let _ = self.latency.add(&o.latency);
        self.ops += o.ops;
        self.errors += o.errors;
        self.late += o.late;
        self.dropped += o.dropped;
        self.scheduled += o.scheduled;
        if self.first_error.is_none() {
            self.first_error = o.first_error.clone();
        }
    }
}

impl Default for OpStats {
    fn default() -> OpStats {
        OpStats::new()
    }
}

/// What a worker hands back: its operation (with whatever it measured itself) and its counts.
pub struct Worked<O> {
    pub op: O,
    pub stats: OpStats,
}

/// A finished run: each worker's result with its thread's CPU and wall time, the merged counts, the
/// per-second series, the measured phase's length, the run's wall time and the process's CPU time.
pub struct Run<O> {
    pub workers: Vec<Finished<Worked<O>>>,
    pub total: OpStats,
    pub series: Vec<Tick>,
    pub measured: Duration,
    pub wall: Duration,
    pub cpu: Duration,
}

struct Ctx {
    spec: Spec,
    timing: Timing,
    deadline: Instant,
    stop: AtomicBool,
    issued: AtomicU64,
}

impl Ctx {
    fn claim(&self) -> bool {
        self.spec.ops.is_none_or(|n| self.issued.fetch_add(1, Ordering::Relaxed) < n)
    }
}

/// Run `spec.workers` workers, worker `id` calling the operation `make(id, until)` builds (on its
/// own thread), warm-up first, then the measured phase, until its end, the `ops` budget or `cancel`.
pub fn run<O, M>(name: &str, spec: &Spec, make: M, cancel: &Cancel, hooks: Hooks<'_>) -> anyhow::Result<Run<O>>
where
    O: Operation + 'static,
    M: Fn(usize, Until) -> anyhow::Result<O> + Send + Sync + 'static,
{
    let timing = Timing::starting_now(spec.warmup).lasting(spec.duration);
    let ctx = Arc::new(Ctx {
        spec: spec.clone(),
        timing,
        deadline: timing.measure_from + spec.duration,
        stop: AtomicBool::new(false),
        issued: AtomicU64::new(0),
    });
    let c = ctx.clone();
    let driven = drive(name, spec.workers, timing, &ctx.stop, cancel, hooks, move |id, tx| {
        let op = make(id, Until(c.clone())).map_err(|e| format!("{e:#}"))?;
        Ok::<_, String>(work(&c, id, op, tx))
    })?;
    let mut total = OpStats::new();
    for w in &driven.workers {
        total.merge(&w.stats.stats);
    }
    Ok(Run {
        workers: driven.workers,
        total,
        series: driven.series,
        measured: driven.measured,
        wall: driven.wall,
        cpu: driven.cpu,
    })
}

/// One worker's loop.
fn work<O: Operation>(ctx: &Ctx, id: usize, mut op: O, tx: Sender<Message>) -> Worked<O> {
    let s = &ctx.spec;
    let mut schedule = s.rate.map(|r| Schedule::segmented(r, s.workers, s.arrival, s.seed, id, s.segment));
    let mut next = schedule.as_ref().map(|sc| sc.first(ctx.timing.start));
    let mut stats = OpStats::new();
    let mut iv = Interval::new(0);
    let mut now = Instant::now();
    loop {
        if ctx.stop.load(Ordering::Relaxed) || now >= ctx.deadline {
            break;
        }
        flush(&mut iv, ctx.timing.measure_from, now, false, &tx);
        if op.idle() {
            std::thread::sleep(ctx.deadline.saturating_duration_since(now).min(Duration::from_millis(50)));
            now = Instant::now();
            continue;
        }
        let intended = match (next, schedule.as_mut()) {
            (Some(t), Some(sc)) => {
                if t > now {
                    // Wake at the intended time, or sooner to flush a second or see a stop.
                    std::thread::sleep((t - now).min(Duration::from_millis(50)));
                    now = Instant::now();
                    continue;
                }
                let mut t = t;
                let mut g = sc.gap();
                // Far behind: skip what cannot be caught up rather than queue it without bound.
                while now.saturating_duration_since(t) > g * QUEUE_CAP as u32 {
                    if t >= ctx.timing.measure_from {
                        stats.dropped += 1;
                    }
                    t += g;
                    g = sc.gap();
                }
                next = Some(t + g);
                t
            }
            _ => {
                op.between(now, now >= ctx.timing.measure_from);
                now = Instant::now();
                if ctx.stop.load(Ordering::Relaxed) || now >= ctx.deadline {
                    break;
                }
                now
            }
        };
        let measured = intended >= ctx.timing.measure_from;
        if measured && !ctx.claim() {
            break;
        }
        let sent = Instant::now();
        if measured && schedule.is_some() {
            stats.scheduled += 1;
            if sent.duration_since(intended) > LATE_TOLERANCE {
                stats.late += 1;
            }
        }
        let r = op.call_measured(measured);
        now = Instant::now();
        if measured {
            match r {
                Ok(()) => {
                    let lat = us(now.saturating_duration_since(intended));
                    let _ = stats.latency.record(lat);
                    let _ = iv.latency.record(lat);
                    iv.responses += 1;
                    stats.ops += 1;
                }
                Err(e) => {
                    stats.errors += 1;
                    iv.errors += 1;
                    stats.first_error.get_or_insert(e);
                }
            }
        }
    }
    flush(&mut iv, ctx.timing.measure_from, Instant::now(), true, &tx);
    Worked { op, stats }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Count {
        calls: u64,
        fail_every: u64,
    }

    impl Operation for Count {
        fn call(&mut self) -> Result<(), String> {
            self.calls += 1;
            std::thread::sleep(Duration::from_micros(200));
            if self.fail_every > 0 && self.calls.is_multiple_of(self.fail_every) {
                return Err(format!("call {} failed", self.calls));
            }
            Ok(())
        }
    }

    fn spec(workers: usize, rate: Option<f64>, ops: Option<u64>) -> Spec {
        Spec {
            workers,
            rate,
            arrival: Arrival::Constant,
            seed: 1,
            warmup: Duration::from_millis(100),
            duration: Duration::from_millis(1500),
            ops,
            segment: crate::model::Segment::WHOLE,
        }
    }

    fn run_count(s: &Spec, fail_every: u64) -> (Run<Count>, u32) {
        let mut started = 0;
        let mut on_load_start = || started += 1;
        let mut on_tick = |_: &Tick, _: &Histogram<u64>| {};
        let hooks = Hooks {
            on_load_start: &mut on_load_start,
            on_tick: &mut on_tick,
        };
        let mk = move |_, _| Ok(Count { calls: 0, fail_every });
        let r = run("test", s, mk, &Cancel::new(), hooks).expect("run");
        (r, started)
    }

    #[test]
    fn the_closed_model_stops_at_the_ops_budget_and_merges_every_worker_exactly() {
        let (r, started) = run_count(&spec(2, None, Some(300)), 10);
        assert_eq!(started, 1, "one cutover");
        assert_eq!(r.total.ops + r.total.errors, 300, "300 measured calls");
        assert_eq!(r.total.latency.len(), r.total.ops, "one latency per operation that succeeded");
        assert_eq!(r.workers.iter().map(|w| w.stats.stats.ops).sum::<u64>(), r.total.ops);
        // Warm-up calls ran but are not counted: each worker called more than it counted.
        assert!(r
            .workers
            .iter()
            .all(|w| w.stats.op.calls > w.stats.stats.ops + w.stats.stats.errors));
        assert!(r.total.errors >= 20, "every tenth call fails: {}", r.total.errors);
        assert!(r.total.first_error.as_deref().is_some_and(|e| e.ends_with("failed")));
        let in_series: u64 = r.series.iter().map(|t| t.responses).sum();
        assert_eq!(in_series, r.total.ops, "the series holds every operation that succeeded");
        let errors_in_series: u64 = r.series.iter().map(|t| t.errors).sum();
        assert_eq!(errors_in_series, r.total.errors, "and apart, every one that failed");
    }

    #[test]
    fn the_open_model_sends_at_the_rate() {
        // 200/s over 2 workers for 1.5 s: 300 intended operations, each 0.2 ms long, none dropped.
        let (r, _) = run_count(&spec(2, Some(200.0), None), 0);
        assert!((295..=302).contains(&r.total.scheduled), "scheduled {}", r.total.scheduled);
        assert_eq!(r.total.ops, r.total.scheduled);
        assert_eq!(r.total.dropped, 0);
        assert_eq!(r.total.errors, 0);
    }
}
