//! The events a run publishes (docs/live.md): serialized as JSON with their `kind`, one row each
//! in the store's event log.

use serde::{Deserialize, Serialize};

/// One trial of the plan, as the run starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedTrial {
    pub trial: usize,
    pub point: usize,
    pub repetition: u32,
}

/// One point of the plan's matrix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedPoint {
    pub point: usize,
    pub label: String,
    /// Its parameters as JSON (`{"concurrency": 10}`).
    pub params: serde_json::Value,
}

/// A workload's headline figure at the end of a trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub name: String,
    pub value: f64,
    pub unit: String,
}

/// What the run publishes, in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// The run starts (or resumes): the plan's trials still to run and its points.
    RunStart {
        plan: String,
        dir: String,
        /// Trials this run (or this resumption) will run, in order (adaptive rounds add more).
        trials: Vec<PlannedTrial>,
        points: Vec<PlannedPoint>,
        /// Trials stored before (a resumed run).
        done: Vec<usize>,
        /// The phases' lengths, seconds.
        baseline_s: f64,
        warmup_s: f64,
        load_s: f64,
        recovery_s: f64,
        /// The monitor's sampling interval, seconds.
        interval_s: f64,
    },
    /// A trial starts.
    TrialStart {
        trial: usize,
        point: usize,
        repetition: u32,
        label: String,
    },
    /// The trial enters a phase (`setup`, `baseline`, `warmup`, `load`, `recovery`), `t_s` seconds
    /// after the trial started.
    Phase { trial: usize, phase: String, t_s: f64 },
    /// One second of the workload's measured load (the load generator's own per-second series:
    /// workloads on perflab's load driver publish it; an `exec` tool does not). `t_s` counts from
    /// the start of the load phase; the last second may be shorter (`span_s`).
    Second {
        trial: usize,
        t_s: f64,
        span_s: f64,
        responses: u64,
        errors: u64,
        per_s: f64,
        p50_ms: Option<f64>,
        p99_ms: Option<f64>,
        p999_ms: Option<f64>,
    },
    /// One sample of the monitor: this machine's system figures, perflab's own process (`loadgen`)
    /// and the target's tree, named as in the store (docs/metrics.md); `t_s` since the trial
    /// started. Kept in the log until the trial is stored (then they are in its packed samples).
    Sample {
        trial: usize,
        phase: String,
        t_s: f64,
        values: Vec<(String, f64)>,
    },
    /// A trial ended and is stored: whether it succeeded, why not, its headline figures and its
    /// phases' spans (seconds since it started).
    TrialEnd {
        trial: usize,
        ok: bool,
        failure: Option<String>,
        figures: Vec<Figure>,
        phases: Vec<(String, f64, f64)>,
    },
    /// Adaptive repetitions: a point's confidence interval after a round, against its target.
    Ci {
        point: usize,
        metric: Option<String>,
        half_width_pct: Option<f64>,
        target_pct: f64,
        repetitions: u32,
        /// Why its repetitions stopped (none: another round runs).
        stopped: Option<String>,
    },
    /// The feed could not keep up: this many events were dropped (never the runner waiting).
    Skipped { count: u64 },
    /// The run ended: its status, the trials, the thresholds that broke.
    RunEnd {
        status: String,
        trials_ok: usize,
        trials_failed: usize,
        thresholds_failed: Vec<String>,
        failure: Option<String>,
    },
}

impl Event {
    /// The event's `kind` (the store's column).
    pub fn kind(&self) -> &'static str {
        match self {
            Event::RunStart { .. } => "run_start",
            Event::TrialStart { .. } => "trial_start",
            Event::Phase { .. } => "phase",
            Event::Second { .. } => "second",
            Event::Sample { .. } => "sample",
            Event::TrialEnd { .. } => "trial_end",
            Event::Ci { .. } => "ci",
            Event::Skipped { .. } => "skipped",
            Event::RunEnd { .. } => "run_end",
        }
    }

    /// The trial it is about.
    pub fn trial(&self) -> Option<usize> {
        match self {
            Event::TrialStart { trial, .. }
            | Event::Phase { trial, .. }
            | Event::Second { trial, .. }
            | Event::Sample { trial, .. }
            | Event::TrialEnd { trial, .. } => Some(*trial),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_json_with_its_kind() {
        let e = Event::Phase {
            trial: 3,
            phase: "load".into(),
            t_s: 1.5,
        };
        let j = serde_json::to_string(&e).unwrap();
        assert_eq!(j, r#"{"kind":"phase","trial":3,"phase":"load","t_s":1.5}"#);
        assert_eq!(serde_json::from_str::<Event>(&j).unwrap(), e);
        assert_eq!(e.kind(), "phase");
        assert_eq!(e.trial(), Some(3));
    }
}
