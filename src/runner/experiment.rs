//! An experiment ready to execute: the trials in execution order with their workloads built, the
//! repetition policy, variant hooks and thresholds. Built from a plan by `from_plan`.

use super::phase::PhasePlan;
use super::target::TargetConfig;
use crate::workload::Workload;
use std::collections::BTreeMap;

/// One trial, ready to run.
pub struct PreparedTrial {
    pub id: usize,
    pub point: usize,
    pub repetition: u32,
    pub params_json: String,
    /// The value of the `variant` matrix parameter, when the plan has hooks for it.
    pub variant: Option<String>,
    pub target: Option<TargetConfig>,
    pub workload: Box<dyn Workload>,
}

/// A matrix point.
#[derive(Clone, Debug)]
pub struct PointInfo {
    pub id: usize,
    pub label: String,
    pub params_json: String,
}

/// How many repetitions each point gets.
#[derive(Clone, Debug, PartialEq)]
pub enum Repetitions {
    Fixed(u32),
    /// At least `min`, at most `max`, stopping once the 95 % CI half-width of `metric` is under
    /// `ci_pct` % of its mean.
    Adaptive {
        min: u32,
        max: u32,
        ci_pct: f64,
        metric: String,
    },
}

/// Shell commands run before a variant's trials and after them.
#[derive(Clone, Debug, Default)]
pub struct Hooks {
    pub setup: Vec<String>,
    pub teardown: Vec<String>,
    /// Preconditions checked once when the run starts; a failure skips the variant's trials.
    pub skip_unless: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    pub fn holds(self, observed: f64, limit: f64) -> bool {
        match self {
            Op::Lt => observed < limit,
            Op::Le => observed <= limit,
            Op::Gt => observed > limit,
            Op::Ge => observed >= limit,
        }
    }
}

/// A pass/fail rule on a summary metric of every matrix point.
#[derive(Clone, Debug)]
pub struct Threshold {
    pub expr: String,
    pub metric: String,
    pub op: Op,
    pub value: f64,
}

/// Builds extra trials for adaptive repetitions: (point, repetition, trial id) → trial.
pub type Extender = Box<dyn Fn(usize, u32, usize) -> anyhow::Result<PreparedTrial>>;

pub struct Experiment {
    pub name: String,
    pub plan_file: String,
    pub plan_source: String,
    pub seed: u64,
    pub phases: PhasePlan,
    pub points: Vec<PointInfo>,
    pub trials: Vec<PreparedTrial>,
    pub repetitions: Repetitions,
    pub keep_target: bool,
    pub hooks: BTreeMap<String, Hooks>,
    pub thresholds: Vec<Threshold>,
    pub extend: Option<Extender>,
    /// What the plan could not do here (points skipped, e.g. more CPUs than the machine has): said
    /// when the run starts, at its end, and kept in the store for the report.
    pub notes: Vec<String>,
}
