//! An OLTP run: one [`OltpOp`] per thread (connection) on the load driver, closed model or a rate.

use super::backend::Database;
use super::config::Settings;
use super::op::OltpOp;
use super::report::OltpReport;
use crate::util::Cancel;
use crate::workload::driver::coordinator::Hooks;
use crate::workload::driver::ops::{self, Spec};
use crate::workload::driver::schedule::Arrival;
use std::sync::Arc;
use std::time::Duration;

/// Run the transactions: `warmup` (not measured), then `duration` or `transactions`, whichever ends
/// first. The tables must be prepared.
pub fn run(
    s: &Arc<Settings>,
    db: &Arc<dyn Database>,
    warmup: Duration,
    duration: Duration,
    cancel: &Cancel,
    hooks: Hooks<'_>,
) -> anyhow::Result<OltpReport> {
    let spec = Spec {
        workers: s.threads,
        rate: s.rate,
        arrival: Arrival::Constant,
        seed: s.seed,
        warmup,
        duration,
        ops: s.transactions,
        segment: s.segment,
    };
    let (settings, database) = (s.clone(), db.clone());
    let run = ops::run(
        "oltp",
        &spec,
        move |id, until| Ok(OltpOp::new(database.clone(), settings.clone(), id, until)),
        cancel,
        hooks,
    )?;
    Ok(OltpReport::new(s, &db.describe(), run, cancel.is_cancelled()))
}
