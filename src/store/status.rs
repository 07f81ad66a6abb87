//! The typed states a store records: a run's status (`run.status`) and why a trial failed
//! (`trial.failure`). Both are kept as text, the same text as ever, so older stores still open.

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

/// Where a run is. `Skipped` is never stored: it is the outcome of a run that had nothing left to
/// run (every variant skipped by `skip_unless`), so it made no run directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunStatus {
    Running,
    Complete,
    Interrupted,
    Failed,
    Skipped,
}

impl RunStatus {
    pub const ALL: [RunStatus; 5] = [
        RunStatus::Running,
        RunStatus::Complete,
        RunStatus::Interrupted,
        RunStatus::Failed,
        RunStatus::Skipped,
    ];

    /// The text in the store and in `perflab run --json`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
            RunStatus::Skipped => "skipped",
        }
    }

    pub fn parse(s: &str) -> Option<RunStatus> {
        RunStatus::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ToSql for RunStatus {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.as_str()))
    }
}

impl FromSql for RunStatus {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<RunStatus> {
        let text = value.as_str()?;
        RunStatus::parse(text).ok_or_else(|| FromSqlError::Other(format!("unknown run status `{text}`").into()))
    }
}

/// Why a trial failed. The text (`Display`) is what the store keeps in `trial.failure` and what
/// the run prints.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TrialFailure {
    /// The variant's setup hook failed, so the trial did not run.
    #[error("{0}")]
    Setup(String),
    #[error("target did not start: {0}")]
    TargetDidNotStart(String),
    #[error("target not ready: {0}")]
    TargetNotReady(String),
    #[error("target {how} during the {phase} phase")]
    TargetDied { how: String, phase: String },
    /// A target kept across trials (`restart = "keep"`) exited during this trial.
    #[error("kept target {0}")]
    KeptTargetExited(String),
    #[error("stopping the target failed: {0}")]
    TargetStop(String),
    #[error("monitor could not start: {0}")]
    MonitorDidNotStart(String),
    #[error("monitor failed: {0}")]
    Monitor(String),
    /// The plan's `[[probes]]` could not start (a target that does not resolve, a socket refused).
    #[error("probes could not start: {0}")]
    ProbesDidNotStart(String),
    /// The workload ran and judged its own result a failure (in its own words: a non-zero exit,
    /// failed requests, a tool's error).
    #[error("{0}")]
    Workload(String),
    /// The workload could not run at all.
    #[error("workload failed: {0}")]
    WorkloadError(String),
    #[error("interrupted")]
    Interrupted,
}

#[cfg(test)]
mod tests {
    use super::{RunStatus, TrialFailure};

    #[test]
    fn run_status_text_round_trips_and_keeps_the_stored_words() {
        for s in RunStatus::ALL {
            assert_eq!(RunStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(RunStatus::Complete.as_str(), "complete");
        assert_eq!(RunStatus::parse("completed"), None);
    }

    #[test]
    fn trial_failures_read_as_before() {
        let died = TrialFailure::TargetDied {
            how: "exited with status 1".into(),
            phase: "load".into(),
        };
        assert_eq!(died.to_string(), "target exited with status 1 during the load phase");
        assert_eq!(TrialFailure::Interrupted.to_string(), "interrupted");
        assert_eq!(
            TrialFailure::TargetNotReady("timed out".into()).to_string(),
            "target not ready: timed out"
        );
    }
}
