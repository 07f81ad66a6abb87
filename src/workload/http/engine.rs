//! The http run on the load driver: the driver starts the workers (one epoll or tokio loop per
//! thread), calls `on_load_start` when the warm-up ends and merges each second's histograms into the
//! live series; this file merges the workers' totals exactly at the end and diagnoses the client.

use super::config::Prepared;
use super::diagnosis;
use super::report::{HttpReport, Tick};
use super::worker::{self, Shared, Stats};
use crate::util::Cancel;
use crate::workload::driver::coordinator::{drive, Hooks, Timing};
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::Duration;

/// Run the load: `warmup` first (not measured), then until `requests` or `duration` (or Ctrl-C).
pub fn run(
    cfg: &Prepared,
    warmup: Duration,
    cancel: &Cancel,
    on_load_start: &mut dyn FnMut(),
    on_tick: &mut dyn FnMut(&Tick, &Histogram<u64>),
) -> anyhow::Result<HttpReport> {
    let timing = Timing::starting_now(warmup);
    let sh = Arc::new(Shared {
        cfg: cfg.clone(),
        start: timing.start,
        measure_from: timing.measure_from,
        deadline: cfg.duration.map(|d| timing.measure_from + d),
        issued: AtomicU64::new(0),
        stop: AtomicBool::new(false),
    });
    let threads = cfg.threads;
    let hooks = Hooks { on_load_start, on_tick };
    let shared = sh.clone();
    let driven = drive("http", threads, timing, &sh.stop, cancel, hooks, move |id, tx| {
        let sh = shared.clone();
        // Connections and the in-flight cap are shared out as evenly as possible.
        let n = sh.cfg.connections / threads + usize::from(id < sh.cfg.connections % threads);
        let cap = (sh.cfg.max_inflight / threads + usize::from(id < sh.cfg.max_inflight % threads)).max(1);
        if sh.cfg.tls.is_some() || sh.cfg.protocol != super::config::Protocol::Http1 {
            super::async_engine::run(sh, id, n, cap, tx)
        } else if sh.cfg.uring {
            super::uring::run(sh, id, n, cap, tx)
        } else {
            worker::run(sh, id, n, cap, tx)
        }
    })?;
    let mut total = Stats::new();
    let mut busy = Vec::new();
    for w in &driven.workers {
        total.merge(&w.stats);
        // Busy polling: the time spent polling for nothing is not work.
        busy.push(w.cpu.saturating_sub(w.stats.spin).as_secs_f64() / w.wall.as_secs_f64().max(1e-9));
    }
    let mut report = HttpReport::new(cfg, total, driven.series, driven.measured, driven.cpu, cancel.is_cancelled());
    report.wall = driven.wall;
    report.thread_busy = busy;
    report.warnings = diagnosis::diagnose(cfg, &report);
    Ok(report)
}
