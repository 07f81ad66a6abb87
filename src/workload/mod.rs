//! Workloads: what a trial runs against the system under test.
//!
//! Every workload (the HTTP load generator, the built-ins, `exec` with its tool adapters) implements
//! [`Workload`] and returns a [`WorkloadResult`]: named metrics with units and a direction, latency
//! histograms (merged exactly, never averaged), per-second series, error counts and any raw output
//! that could not be parsed.

pub mod builtin;
pub mod exec;
pub mod http;
pub mod result;

pub use result::{Better, Metric, MetricKind, NamedHistogram, SeriesPoint, WorkloadResult};

use crate::util::Cancel;
use std::time::Duration;

/// How long the workload runs in a trial. `warmup` runs first and is not counted; `load` is measured.
#[derive(Clone, Copy, Debug)]
pub struct RunSpec {
    pub warmup: Duration,
    pub load: Duration,
}

/// One kind of load. The runner drives it in-process.
pub trait Workload: Send {
    /// A short name for tables and the store (`http`, `exec:fio`, ...).
    fn name(&self) -> String;

    /// Run warm-up then load. Must return (with whatever was measured) soon after `cancel` is set.
    /// `on_load_start` is called once, at the instant the measured load phase begins, so that the
    /// runner can tag monitor samples with the right phase.
    fn run(&mut self, spec: RunSpec, cancel: &Cancel, on_load_start: &mut dyn FnMut()) -> anyhow::Result<WorkloadResult>;
}
