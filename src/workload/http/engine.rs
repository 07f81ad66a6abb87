//! The coordinator: starts the workers, calls `on_load_start` when the warm-up ends, merges each
//! second's histograms into the live series, and merges the workers' totals exactly at the end.

use super::config::Prepared;
use super::diagnosis;
use super::report::{HttpReport, Tick};
use super::worker::{self, Message, Shared, Stats};
use crate::util::Cancel;
use crate::workload::result::latency_histogram;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Run the load: `warmup` first (not measured), then until `requests` or `duration` (or Ctrl-C).
pub fn run(
    cfg: &Prepared,
    warmup: Duration,
    cancel: &Cancel,
    on_load_start: &mut dyn FnMut(),
    on_tick: &mut dyn FnMut(&Tick, &Histogram<u64>),
) -> anyhow::Result<HttpReport> {
    let cpu0 = diagnosis::process_cpu();
    let start = Instant::now();
    let measure_from = start + warmup;
    let sh = Arc::new(Shared {
        cfg: cfg.clone(),
        start,
        measure_from,
        deadline: cfg.duration.map(|d| measure_from + d),
        issued: AtomicU64::new(0),
        stop: AtomicBool::new(false),
    });
    let (tx, rx) = mpsc::channel::<Message>();
    let threads = cfg.threads;
    let mut handles = Vec::new();
    for id in 0..threads {
        // Connections and the in-flight cap are shared out as evenly as possible.
        let n = cfg.connections / threads + usize::from(id < cfg.connections % threads);
        let cap = (cfg.max_inflight / threads + usize::from(id < cfg.max_inflight % threads)).max(1);
        let (sh, tx) = (sh.clone(), tx.clone());
        handles.push(std::thread::Builder::new().name(format!("http-worker-{id}")).spawn(move || {
            let t0 = Instant::now();
            let r = if sh.cfg.tls.is_some() || sh.cfg.protocol != super::config::Protocol::Http1 {
                super::async_engine::run(sh, id, n, cap, tx.clone())
            } else {
                worker::run(sh, id, n, cap, tx.clone())
            };
            let (cpu, wall) = (diagnosis::thread_cpu(), t0.elapsed().as_secs_f64().max(1e-9));
            let _ = tx.send(Message::Finished);
            // Busy polling: the time spent polling for nothing is not work.
            r.map(|s| {
                let busy = cpu.saturating_sub(s.spin).as_secs_f64() / wall;
                (s, busy)
            })
        })?);
    }
    drop(tx);
    let mut started = warmup.is_zero();
    if started {
        on_load_start();
    }
    let mut pending: BTreeMap<u32, (usize, Histogram<u64>, u64, u64)> = BTreeMap::new();
    let mut series = Vec::new();
    let mut finished = 0;
    while finished < threads {
        let now = Instant::now();
        if !started && now >= measure_from {
            started = true;
            on_load_start();
        }
        if cancel.is_cancelled() {
            sh.stop.store(true, Ordering::Relaxed);
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
                        let t = tick(iv.sec, &h, n, errs, now.duration_since(measure_from));
                        on_tick(&t, &h);
                        series.push(t);
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let ended = Instant::now();
    let mut total = Stats::new();
    let mut busy = Vec::new();
    for h in handles {
        match h.join() {
            Ok(Ok((s, b))) => {
                total.merge(&s);
                busy.push(b);
            }
            Ok(Err(e)) => return Err(anyhow::anyhow!("a worker failed: {e}")),
            Err(_) => return Err(anyhow::anyhow!("a worker panicked")),
        }
    }
    // The last, partial second.
    for (sec, (_, h, n, errs)) in pending {
        let t = tick(sec, &h, n, errs, ended.duration_since(measure_from));
        on_tick(&t, &h);
        series.push(t);
    }
    let measured = ended.saturating_duration_since(measure_from);
    let cpu = diagnosis::process_cpu().saturating_sub(cpu0);
    let mut report = HttpReport::new(cfg, total, series, measured, cpu, cancel.is_cancelled());
    report.wall = ended.duration_since(start);
    report.thread_busy = busy;
    report.warnings = diagnosis::diagnose(cfg, &report);
    Ok(report)
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
        p99_ms: if n > 0 {
            h.value_at_quantile(0.99) as f64 / 1000.0
        } else {
            f64::NAN
        },
    }
}
