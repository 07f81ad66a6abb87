//! The `net` run: the mode's workers on the load driver. stream and udp run their own loop per
//! thread under `driver::coordinator::drive` (a connection or a sender each, one interval a second
//! counting bytes); rr and crr are a driver `Operation` (one round trip) under `driver::ops::run`.

use super::config::{NetMode, Prepared};
use super::report::{Body, NetReport, Rr};
use super::rr::RrOp;
use super::{stream, udp};
use crate::util::Cancel;
use crate::workload::driver::coordinator::{drive, Driven, Hooks, Timing};
use crate::workload::driver::ops::{self, Spec};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::Duration;

/// Run the net load: `warmup` (not measured; none with `bytes`: the whole transfer is measured),
/// then `duration` (or until `bytes` have moved).
pub fn run(p: &Prepared, warmup: Duration, duration: Duration, cancel: &Cancel, hooks: Hooks<'_>) -> anyhow::Result<NetReport> {
    let warmup = if p.bytes.is_some() { Duration::ZERO } else { warmup };
    let timing = Timing::starting_now(warmup).lasting(duration);
    let deadline = timing.measure_from + duration;
    let stop = Arc::new(AtomicBool::new(false));
    let (body, driven) = match p.mode {
        NetMode::Stream => {
            let sh = Arc::new(stream::Shared {
                p: p.clone(),
                measure_from: timing.measure_from,
                deadline,
                stop: stop.clone(),
                budget: p.bytes.map(AtomicU64::new),
            });
            let d = drive("net", stream::workers(p), timing, &stop, cancel, hooks, move |id, tx| {
                Ok::<_, String>(stream::run_stream(&sh, id, &tx))
            })?;
            let ended = d.workers.iter().filter_map(|f| f.stats.ended).max();
            measured_until(split(d, Body::Stream), timing, ended)
        }
        NetMode::Udp => {
            let sh = Arc::new(udp::Shared {
                p: p.clone(),
                measure_from: timing.measure_from,
                deadline,
                stop: stop.clone(),
            });
            let d = drive("net", p.streams, timing, &stop, cancel, hooks, move |id, tx| {
                Ok::<_, String>(udp::run_sender(&sh, id, &tx))
            })?;
            let ended = d.workers.iter().filter_map(|f| f.stats.ended).max();
            measured_until(split(d, Body::Udp), timing, ended)
        }
        NetMode::Rr | NetMode::Crr => {
            let spec = Spec::closed(p.streams, warmup, duration);
            let pp = p.clone();
            let run = ops::run("net", &spec, move |_, _| Ok(RrOp::new(&pp)), cancel, hooks)?;
            let mut connections = 0;
            let mut errors = std::collections::BTreeMap::new();
            let mut first = None;
            for w in &run.workers {
                connections += w.stats.op.connections;
                for (k, v) in &w.stats.op.errors {
                    *errors.entry(*k).or_insert(0) += v;
                }
                if first.is_none() {
                    first.clone_from(&w.stats.op.error);
                }
            }
            let body = Body::Rr(Rr {
                stats: run.total,
                connections,
                errors,
                error: first,
            });
            let driven = Driven {
                workers: Vec::<crate::workload::driver::coordinator::Finished<()>>::new(),
                series: run.series,
                measured: run.measured,
                wall: run.wall,
                cpu: run.cpu,
            };
            (body, driven)
        }
    };
    Ok(NetReport::new(p, warmup, body, driven, cancel.is_cancelled()))
}

/// The measured phase ends when the last worker stopped sending or receiving (not when the
/// server's counts came back).
fn measured_until((body, mut d): (Body, Driven<()>), timing: Timing, ended: Option<std::time::Instant>) -> (Body, Driven<()>) {
    if let Some(e) = ended {
        d.measured = e.saturating_duration_since(timing.measure_from);
    }
    (body, d)
}

fn split<S>(d: Driven<S>, body: fn(Vec<S>) -> Body) -> (Body, Driven<()>) {
    let stats = d.workers.into_iter().map(|f| f.stats).collect();
    (
        body(stats),
        Driven {
            workers: Vec::new(),
            series: d.series,
            measured: d.measured,
            wall: d.wall,
            cpu: d.cpu,
        },
    )
}
