//! The `mem` run on the load driver's closed model: one [`MemOp`] per worker.

use super::config::Mode;
use super::op::MemOp;
use super::report::MemReport;
use crate::util::Cancel;
use crate::workload::driver::coordinator::Hooks;
use crate::workload::driver::ops::{self, Spec};
use std::time::Duration;

/// Run the mem load: `warmup` (not measured), then `duration`.
pub fn run(mode: &Mode, warmup: Duration, duration: Duration, cancel: &Cancel, hooks: Hooks<'_>) -> anyhow::Result<MemReport> {
    let spec = Spec::closed(mode.workers(), warmup, duration);
    let m = mode.clone();
    let run = ops::run("mem", &spec, move |id, until| MemOp::new(&m, id, until), cancel, hooks)?;
    Ok(MemReport::new(mode, run, cancel.is_cancelled()))
}
