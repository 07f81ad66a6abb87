//! The agent's `segment`: one slice of a plan's workload (`[workload] from`) run in-process on a
//! thread of its own, begun at the controller's common start (on this agent's clock), its figures
//! (metrics, histograms, series, errors) sent back as the request's reply for the controller to
//! merge. Closing the channel stops it (the workload's own Ctrl-C path), and the agent waits for
//! it before it exits. The work the segments share (`workload_prepare`, `workload_cleanup`: the
//! oltp tables) runs the same way, on a thread of its own, answered when done.

use super::{Clock, Out};
use crate::model::Segment;
use crate::remote::protocol::{encode_histogram, LoadgenSeconds, SegmentDone};
use crate::runner::from_shared::{NoFile, Step};
use crate::util::Cancel;
use crate::workload::{RunSpec, SetupCtx};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What a `segment` request asks.
pub struct Ask {
    pub kind: String,
    pub table: String,
    pub segment: (u32, u32),
    pub start_at_unix: f64,
    pub tolerance_s: f64,
    pub warmup_s: f64,
    pub load_s: f64,
    /// The controller does the shared work (`segment_shared`): the slice leaves it out.
    pub shared: bool,
}

/// One segment running: its stop and its thread.
type One = (Cancel, JoinHandle<()>);

/// The segments (and shared work) running now.
#[derive(Clone, Default)]
pub struct Running(Arc<Mutex<Vec<One>>>);

impl Running {
    fn add(&self, cancel: Cancel, t: JoinHandle<()>) {
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        all.retain(|(_, t)| !t.is_finished());
        all.push((cancel, t));
    }

    /// Stop every segment and wait for its thread (a workload returns soon after its cancel).
    pub fn stop_all(&self) {
        let all = std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()));
        for (c, _) in &all {
            c.cancel();
        }
        for (_, t) in all {
            let _ = t.join();
        }
    }
}

/// Run the slice on a thread and reply to request `id` when it ends.
pub fn spawn(id: u64, ask: Ask, clock: Clock, out: Out, running: &Running) {
    let cancel = Cancel::new();
    let c = cancel.clone();
    let t = std::thread::spawn(move || {
        let r = run(&ask, &clock, &c).and_then(|r| Ok(serde_json::to_value(r)?));
        out.reply(id, r);
    });
    running.add(cancel, t);
}

/// Do a split load's shared work `step` on a thread (the whole workload built from `table`) and
/// reply to request `id` with [`SharedDone`](crate::remote::protocol::SharedDone) when it is done.
pub fn spawn_shared(id: u64, step: Step, kind: String, table: String, out: Out, running: &Running) {
    let cancel = Cancel::new();
    let c = cancel.clone();
    let t = std::thread::spawn(move || {
        let r = toml::from_str::<toml::Table>(&table)
            .map_err(|e| anyhow::anyhow!("the workload's table does not parse: {e}"))
            .and_then(|table| crate::runner::from_shared::here(step, &kind, &table, &SetupCtx::default(), false, &c))
            .and_then(|d| Ok(serde_json::to_value(d)?));
        out.reply(id, r);
    });
    running.add(cancel, t);
}

fn secs(s: f64) -> Duration {
    Duration::try_from_secs_f64(s.max(0.0)).unwrap_or_default()
}

fn run(ask: &Ask, clock: &Clock, cancel: &Cancel) -> anyhow::Result<SegmentDone> {
    let table: toml::Table = toml::from_str(&ask.table).map_err(|e| anyhow::anyhow!("the workload's table does not parse: {e}"))?;
    let segment = Segment::new(ask.segment.0, ask.segment.1).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut w = crate::workload::registry::build(&ask.kind, &table, &NoFile)?;
    let sliced = if ask.shared {
        w.segment_shared(segment)
    } else {
        w.segment(segment)
    };
    sliced.map_err(|e| anyhow::anyhow!("segment {segment}: {e}"))?;
    w.setup(&SetupCtx::default(), cancel)?;
    // Wait for the start in steps that still see the channel close; the last stretch at once.
    loop {
        let left = ask.start_at_unix - clock.now();
        if cancel.is_cancelled() {
            anyhow::bail!("segment {segment}: stopped before its start");
        }
        if left <= 0.0 {
            break;
        }
        std::thread::sleep(secs(left.min(0.05)));
    }
    let started = clock.now();
    let late = started - ask.start_at_unix;
    if late > ask.tolerance_s {
        anyhow::bail!(
            "began {late:.3} s after the trial's common start, more than the {:.3} s allowed: nothing was run",
            ask.tolerance_s
        );
    }
    let mut load_at = None;
    let spec = RunSpec {
        warmup: secs(ask.warmup_s),
        load: secs(ask.load_s),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let mut sampler = None;
    let r = w.run(spec, cancel, &mut || {
        load_at = Some(clock.now() - started);
        let stop = stop.clone();
        sampler = Some(std::thread::spawn(move || own_cpu_each_second(&stop)));
    });
    stop.store(true, Ordering::Relaxed);
    let loadgen = sampler.and_then(|t| t.join().ok()).map(|seconds| LoadgenSeconds {
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        seconds,
    });
    let r = r?;
    let histograms = r
        .histograms
        .iter()
        .map(|h| Ok((h.name.clone(), encode_histogram(&h.hist)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(SegmentDone {
        late_s: late,
        started_unix: started,
        load_start_s: load_at,
        ended_unix: clock.now(),
        metrics: r.metrics,
        histograms,
        series: r.series,
        errors: r.errors,
        raw: r.raw,
        failure: r.failure,
        loadgen,
    })
}

/// This process's CPU (% of one core) and thread count each whole second until `stop` (at most a
/// day of seconds): the segment's load generator as the monitor samples the controller's.
fn own_cpu_each_second(stop: &AtomicBool) -> Vec<(f64, f64)> {
    let cpu = crate::workload::driver::clock::process_cpu;
    let mut out = Vec::new();
    let (mut t0, mut c0) = (Instant::now(), cpu());
    while !stop.load(Ordering::Relaxed) && out.len() < 24 * 3600 {
        std::thread::sleep(Duration::from_millis(100));
        let now = Instant::now();
        let wall = now.duration_since(t0).as_secs_f64();
        if wall >= 1.0 {
            let c = cpu();
            out.push(((c - c0).as_secs_f64() / wall * 100.0, threads() as f64));
            (t0, c0) = (now, c);
        }
    }
    out
}

/// This process's threads (`Threads:` of /proc/self/status; 1 when unreadable).
fn threads() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Threads:")?.trim().parse().ok()))
        .unwrap_or(1)
}
