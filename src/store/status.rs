//! The typed states a store records as text, the same text as ever, so older stores still open: a
//! run's status (`run.status`) and a trial's phases (`phase.name`). Why a trial failed is
//! `model::TrialFailure`, kept as its text (`trial.failure`) and its kind (`trial.failure_kind`).

use crate::model::Phase;
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

impl ToSql for Phase {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.name()))
    }
}

impl FromSql for Phase {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Phase> {
        let text = value.as_str()?;
        Phase::parse(text).ok_or_else(|| FromSqlError::Other(format!("unknown phase `{text}`").into()))
    }
}

#[cfg(test)]
mod tests {
    use super::RunStatus;

    #[test]
    fn run_status_text_round_trips_and_keeps_the_stored_words() {
        for s in RunStatus::ALL {
            assert_eq!(RunStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(RunStatus::Complete.as_str(), "complete");
        assert_eq!(RunStatus::parse("completed"), None);
    }
}
