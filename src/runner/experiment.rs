//! An experiment ready to execute: the trials in execution order with their workloads built, the
//! repetition policy, variant hooks and thresholds. Built from a plan by `from_plan`.

use crate::plan::{Phases, Repetitions, ResolvedTarget, Threshold, VariantHooks};
use crate::workload::{Primary, Workload};
use std::collections::BTreeMap;

/// One trial, ready to run.
pub struct PreparedTrial {
    pub id: usize,
    pub point: usize,
    pub repetition: u32,
    pub params_json: String,
    /// The value of the `variant` matrix parameter, when the plan has hooks for it.
    pub variant: Option<String>,
    pub target: Option<ResolvedTarget>,
    pub workload: Box<dyn Workload>,
    /// The plan's `[[probes]]` at this trial's point.
    pub probes: Vec<crate::probe::ProbeSpec>,
    /// The plan's `[hosts]` at this trial's point.
    pub hosts: Vec<crate::plan::HostSpec>,
}

/// A matrix point.
#[derive(Clone, Debug)]
pub struct PointInfo {
    pub id: usize,
    pub label: String,
    pub params_json: String,
    /// Its workload's headline figures: an adaptive policy without a `metric` follows the primary
    /// throughput (or the primary latency when there is none).
    pub primary: Primary,
}

/// Builds extra trials for adaptive repetitions: (point, repetition, trial id) → trial.
pub type Extender = Box<dyn Fn(usize, u32, usize) -> anyhow::Result<PreparedTrial>>;

pub struct Experiment {
    pub name: String,
    pub plan_file: String,
    /// The plan's text as the run keeps it: its secrets replaced by `[redacted]`
    /// (`plan::Secrets::redacted_source`).
    pub plan_source: String,
    /// Whether secrets were taken out of `plan_source` (then the store cannot rerun it).
    pub had_secrets: bool,
    /// Takes the plan's secrets out of everything the run writes or prints.
    pub redactor: crate::util::redact::Redactor,
    pub seed: u64,
    pub phases: Phases,
    pub points: Vec<PointInfo>,
    pub trials: Vec<PreparedTrial>,
    pub repetitions: Repetitions,
    pub keep_target: bool,
    pub hooks: BTreeMap<String, VariantHooks>,
    pub thresholds: Vec<Threshold>,
    pub extend: Option<Extender>,
    /// What the plan could not do here (points skipped, e.g. more CPUs than the machine has): said
    /// when the run starts, at its end, and kept in the store for the report.
    pub notes: Vec<String>,
    /// Which hosts each trial samples (`[monitor] hosts`).
    pub monitor_hosts: crate::plan::MonitorHosts,
    /// `[profile]`: the profiles taken of the target during each trial's load phase.
    pub profile: Option<crate::plan::ProfileSpec>,
    /// `perflab run --segment`: the slice of the load this run is, marked in its store.
    pub segment: Option<crate::store::SegmentMark>,
    /// `[workload] from`: every trial split over these machines and merged, marked in its store
    /// as a merged run is (the report's first line says so).
    pub split: Option<crate::store::MergedMark>,
}
