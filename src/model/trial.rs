//! What a trial is and how it went: the part of a trial the runner writes (`store::TrialRecord`)
//! and the store reads back (`store::StoredTrial`) alike.

use super::failure::TrialFailure;
use super::phase::PhaseSpan;

/// One trial's identity, outcome, times, limits and target output: the `trial` and `phase` rows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrialInfo {
    /// The trial's index in execution order.
    pub id: usize,
    /// Its matrix point.
    pub point: usize,
    pub repetition: u32,
    pub params_json: String,
    /// The workload's name (`http`, `exec:fio`).
    pub workload: String,
    /// None for a trial that went well.
    pub failure: Option<TrialFailure>,
    pub started_unix: f64,
    pub ended_unix: f64,
    /// How the limits were applied (`cgroup-v2`, `affinity`), and what was read back to prove it.
    pub limit_mechanism: Option<String>,
    pub limit_proof: Option<String>,
    pub stdout_tail: Option<String>,
    pub stderr_tail: Option<String>,
    /// The measured phases, in order, in seconds since the trial started.
    pub phases: Vec<PhaseSpan>,
}

impl TrialInfo {
    /// A trial that has not run yet: no failure, no phases, ended when it started.
    pub fn new(id: usize, point: usize, repetition: u32, params_json: String, workload: String, started_unix: f64) -> TrialInfo {
        TrialInfo {
            id,
            point,
            repetition,
            params_json,
            workload,
            started_unix,
            ended_unix: started_unix,
            ..TrialInfo::default()
        }
    }

    pub fn ok(&self) -> bool {
        self.failure.is_none()
    }
}
