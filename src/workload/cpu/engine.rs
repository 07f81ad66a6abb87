//! The `cpu` run: one [`CpuOp`] per worker on the load driver's closed model.

use super::config::Prepared;
use super::op::CpuOp;
use super::report::CpuReport;
use crate::util::Cancel;
use crate::workload::driver::coordinator::Hooks;
use crate::workload::driver::ops::{self, Spec};
use std::time::Duration;

/// Run the cpu load: `warmup` (not measured), then `duration`.
pub fn run(p: &Prepared, warmup: Duration, duration: Duration, cancel: &Cancel, hooks: Hooks<'_>) -> anyhow::Result<CpuReport> {
    let spec = Spec::closed(p.workers, warmup, duration);
    let prepared = p.clone();
    let run = ops::run("cpu", &spec, move |id, _| Ok(CpuOp::new(&prepared, id)), cancel, hooks)?;
    Ok(CpuReport::new(p, run, cancel.is_cancelled()))
}
