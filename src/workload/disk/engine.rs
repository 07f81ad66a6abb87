//! The `disk` run: lay the file out (not measured), pick the engine (io_uring, or synchronous I/O
//! where io_uring is not allowed), run the jobs on the load driver's threads, and remove the file.

use super::config::{EngineChoice, Prepared};
use super::job::{JobStats, Shared};
use super::report::{DiskReport, Engine};
use super::{file, sync, uring};
use crate::util::Cancel;
use crate::workload::driver::coordinator::{drive, Hooks, Timing};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::Duration;

/// The engine this run will use, and why when it is not the one asked.
pub fn choose(p: &Prepared) -> anyhow::Result<Engine> {
    match p.engine {
        EngineChoice::Sync => Ok(Engine::Sync { reason: None }),
        EngineChoice::IoUring => uring::probe(p.iodepth).map(|_| Engine::IoUring).map_err(|e| {
            anyhow::anyhow!(
                "engine = \"io_uring\": this process may not use io_uring ({e}); say engine = \"auto\" to fall back to synchronous I/O"
            )
        }),
        EngineChoice::Auto => Ok(match uring::probe(p.iodepth) {
            Ok(()) => Engine::IoUring,
            Err(e) => Engine::Sync {
                reason: Some(format!("io_uring not allowed here ({e})")),
            },
        }),
    }
}

/// Run the disk load: layout, `warmup` (not measured), then `duration` or the `ops` budget.
pub fn run(p: &Prepared, warmup: Duration, duration: Duration, cancel: &Cancel, hooks: Hooks<'_>) -> anyhow::Result<DiskReport> {
    let engine = choose(p)?;
    let laid = file::lay_out(p, cancel)?;
    if cancel.is_cancelled() {
        // Interrupted while laying out: nothing measured.
        return Ok(DiskReport {
            p: p.clone(),
            engine,
            threads: 0,
            stats: JobStats::new(),
            series: Vec::new(),
            measured: Duration::ZERO,
            cpu: Duration::ZERO,
            laid_out: laid.written,
            kept: p.keep,
            interrupted: true,
        });
    }
    let timing = Timing::starting_now(warmup);
    let sh = Arc::new(Shared {
        p: p.clone(),
        timing,
        deadline: timing.measure_from + duration,
        stop: AtomicBool::new(false),
        issued: AtomicU64::new(0),
    });
    let threads = match engine {
        Engine::IoUring => p.jobs,
        Engine::Sync { .. } => (p.jobs * p.iodepth).min(1024),
    };
    let s = sh.clone();
    let e = engine.clone();
    let driven = drive("disk", threads, timing, &sh.stop, cancel, hooks, move |id, tx| {
        let r = match e {
            Engine::IoUring => uring::job(&s, id, tx),
            Engine::Sync { .. } => sync::thread(&s, id, threads, tx),
        };
        r.map_err(|e| format!("{e:#}"))
    })?;
    let mut total = JobStats::new();
    for w in &driven.workers {
        total.merge(&w.stats);
    }
    Ok(DiskReport {
        p: p.clone(),
        engine,
        threads,
        stats: total,
        series: driven.series,
        measured: driven.measured,
        cpu: driven.cpu,
        laid_out: laid.written,
        kept: p.keep,
        interrupted: cancel.is_cancelled(),
    })
}
