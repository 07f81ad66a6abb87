//! The `mem` run on the load driver's closed model: one [`MemOp`] per worker.

use super::config::Mode;
use super::op::MemOp;
use super::report::MemReport;
use crate::util::Cancel;
use crate::workload::driver::coordinator::Hooks;
use crate::workload::driver::ops::{self, Spec};
use crate::workload::driver::schedule::Arrival;
use std::time::Duration;

/// Run the mem load: `warmup` (not measured), then `duration`.
pub fn run(mode: &Mode, warmup: Duration, duration: Duration, cancel: &Cancel, hooks: Hooks<'_>) -> anyhow::Result<MemReport> {
    let spec = Spec {
        workers: mode.workers(),
        rate: None,
        arrival: Arrival::Constant,
        seed: 1,
        warmup,
        duration,
        ops: None,
        segment: crate::model::Segment::WHOLE,
    };
    let m = mode.clone();
    let run = ops::run("mem", &spec, move |id, until| MemOp::new(&m, id, until), cancel, hooks)?;
    Ok(MemReport::new(mode, run, cancel.is_cancelled()))
}
