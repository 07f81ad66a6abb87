//! Workloads: what a trial runs against the system under test.
//!
//! Every workload (the HTTP load generator, the built-ins, `exec` with its tool adapters) implements
//! [`Workload`] and returns a [`WorkloadResult`]: named metrics with units and a direction, latency
//! histograms (merged exactly, never averaged), per-second series, error counts and any raw output
//! that could not be parsed. Every metric says what it is ([`MetricKind`]) and every workload names its
//! headline figures ([`Primary`]).
//!
//! Which workload a plan's `[workload] type` builds is decided by [`registry`], the one list of
//! workload kinds (its keys, how it is built and checked before the run).

pub mod cpu;
pub mod disk;
pub mod driver;
pub mod exec;
pub use crate::model::figures;
pub mod http;
pub mod load_cli;
pub mod mem;
pub mod names;
pub mod net;
pub mod oltp;
pub mod primary;
pub mod registry;
pub mod result;

pub use names::Produces;
// The result model is `crate::model`'s; re-exported here, where the workloads have always found it.
pub use crate::model::{Better, Metric, MetricKind, NamedHistogram, Primary, PrimaryMetrics, SeriesPoint, WorkloadResult};

use crate::util::Cancel;
use std::time::Duration;

/// How long the workload runs in a trial. `warmup` runs first and is not counted; `load` is measured.
#[derive(Clone, Copy, Debug)]
pub struct RunSpec {
    pub warmup: Duration,
    pub load: Duration,
}

/// What a workload's [`setup`](Workload::setup) is told about the run.
#[derive(Clone, Copy, Debug, Default)]
pub struct SetupCtx<'a> {
    /// The run directory (None outside a plan run), for files a workload keeps across trials.
    pub run_dir: Option<&'a std::path::Path>,
}

/// What the segments of a load split over machines (`[workload] from`) share: work done once, by
/// segment 0's machine, for all of them ([`Workload::shared`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shared {
    /// Before the trial's common start ([`Workload::prepare_shared`]).
    pub prepare: bool,
    /// After every segment ended ([`Workload::cleanup_shared`]).
    pub cleanup: bool,
}

/// A need a workload found unmet before the run (a tool not on PATH, a file missing), and the
/// `[workload]` key it is about, so that the message points at the plan.
#[derive(Debug)]
pub struct Unmet {
    pub key: Option<&'static str>,
    pub error: anyhow::Error,
}

/// One kind of load. The runner drives it in-process.
pub trait Workload: Send {
    /// A short name for tables and the store (`http`, `exec:fio`, ...).
    fn name(&self) -> String;

    /// What the dry run says of it besides its keys, on one line: the facts derived from its
    /// settings that the keys do not say (`open model at 200 req/s (poisson arrivals)`, a disk
    /// file's total bytes, the adapter that reads a command's output). `perflab run --dry-run`
    /// writes it before the keys the plan sets ([`registry::describe`]).
    fn facts(&self) -> Option<String> {
        None
    }

    /// The rate an open-model load asks, operations per second (none for a closed model): the
    /// live views show it beside what each second achieved.
    fn asked_rate(&self) -> Option<f64> {
        None
    }

    /// Its headline throughput and latency metrics.
    fn primary(&self) -> Primary;

    /// The names its metrics can have, so that a threshold or an adaptive `metric` naming another
    /// is refused before the run; [`Produces::Any`] when they are not known in advance.
    fn metrics(&self) -> Produces {
        Produces::Any
    }

    /// What it needs before the run (tools on PATH, files, privileges), checked once per trial
    /// before anything starts.
    fn preflight(&self) -> Result<(), Unmet> {
        Ok(())
    }

    /// Get ready before the trial's baseline (the `oltp` workload creates and loads its tables
    /// here): not timed, not measured; an error fails the trial before its load.
    fn setup(&mut self, ctx: &SetupCtx, cancel: &Cancel) -> anyhow::Result<()> {
        let _ = (ctx, cancel);
        Ok(())
    }

    /// Take only `segment`'s slice of the load, for a load split over several machines (see
    /// [`crate::model::segment`]): the open model's arrivals `k` with `k mod N = i` of the one
    /// global schedule, the closed model's connections (or workers) `j mod N = i`, the same share
    /// of a count of operations. Called once, before the run. A kind that cannot be split says why
    /// in one line (the default: `exec` runs a tool whose load perflab does not drive).
    fn segment(&mut self, segment: crate::model::Segment) -> Result<(), String> {
        Err(format!(
            "the `{}` workload cannot be split into segments ({segment}): perflab splits the loads it drives itself (http, oltp, net, disk, cpu, mem bandwidth)",
            self.name()
        ))
    }

    /// What the segments of this load share when `[workload] from` splits it over machines: work
    /// one machine does once for all of them (nothing by default; the `oltp` tables).
    fn shared(&self) -> Shared {
        Shared::default()
    }

    /// Take `segment`'s slice for `[workload] from`, which does the [`shared`](Self::shared) work
    /// once on one machine: the slice leaves it out. By default, [`segment`](Self::segment)'s.
    fn segment_shared(&mut self, segment: crate::model::Segment) -> Result<(), String> {
        self.segment(segment)
    }

    /// The shared work before the segments' common start, on the whole load (not a slice): what
    /// was done, in one line. `progress`: a line on stderr as it goes.
    fn prepare_shared(&mut self, ctx: &SetupCtx, progress: bool, cancel: &Cancel) -> anyhow::Result<String> {
        let _ = (ctx, progress, cancel);
        Ok(String::new())
    }

    /// The shared work once every segment ended, on the whole load: what was done, in one line.
    fn cleanup_shared(&mut self, cancel: &Cancel) -> anyhow::Result<String> {
        let _ = cancel;
        Ok(String::new())
    }

    /// Run warm-up then load. Must return (with whatever was measured) soon after `cancel` is set.
    /// `on_load_start` is called once, at the instant the measured load phase begins, so that the
    /// runner can tag monitor samples with the right phase.
    fn run(&mut self, spec: RunSpec, cancel: &Cancel, on_load_start: &mut dyn FnMut()) -> anyhow::Result<WorkloadResult>;
}
