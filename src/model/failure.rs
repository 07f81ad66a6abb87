//! Why a trial failed, as the runner finds it, the store keeps it (`trial.failure`, the text, and
//! `trial.failure_kind`, the variant) and the report reads it back.

use super::phase::Phase;

/// Why a trial failed. The text (`Display`) is what the store keeps in `trial.failure` and what
/// the run prints; [`TrialFailure::kind`] is kept beside it, so that the store reads back the same
/// variant ([`TrialFailure::from_stored`]).
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
    TargetDied { how: String, phase: Phase },
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

type Detail = fn(String) -> TrialFailure;

/// The variants that are a fixed prefix and a detail: (kind, prefix, variant). Those with an empty
/// prefix come last: a text is read as one of them only when no other prefix fits.
const PREFIXED: [(&str, &str, Detail); 10] = [
    ("target_did_not_start", "target did not start: ", TrialFailure::TargetDidNotStart),
    ("target_not_ready", "target not ready: ", TrialFailure::TargetNotReady),
    ("kept_target_exited", "kept target ", TrialFailure::KeptTargetExited),
    ("target_stop", "stopping the target failed: ", TrialFailure::TargetStop),
    (
        "monitor_did_not_start",
        "monitor could not start: ",
        TrialFailure::MonitorDidNotStart,
    ),
    ("monitor", "monitor failed: ", TrialFailure::Monitor),
    ("probes_did_not_start", "probes could not start: ", TrialFailure::ProbesDidNotStart),
    ("workload_error", "workload failed: ", TrialFailure::WorkloadError),
    ("setup", "", TrialFailure::Setup),
    ("workload", "", TrialFailure::Workload),
];

impl TrialFailure {
    /// The variant's name as the store keeps it (`trial.failure_kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            TrialFailure::Setup(_) => "setup",
            TrialFailure::TargetDidNotStart(_) => "target_did_not_start",
            TrialFailure::TargetNotReady(_) => "target_not_ready",
            TrialFailure::TargetDied { .. } => "target_died",
            TrialFailure::KeptTargetExited(_) => "kept_target_exited",
            TrialFailure::TargetStop(_) => "target_stop",
            TrialFailure::MonitorDidNotStart(_) => "monitor_did_not_start",
            TrialFailure::Monitor(_) => "monitor",
            TrialFailure::ProbesDidNotStart(_) => "probes_did_not_start",
            TrialFailure::Workload(_) => "workload",
            TrialFailure::WorkloadError(_) => "workload_error",
            TrialFailure::Interrupted => "interrupted",
        }
    }

    /// The failure a store row holds: its text (`trial.failure`) and, from schema 4, its kind. Without
    /// a kind (an older store) the kind is told from the text; a text that fits no variant of its
    /// kind, or no variant at all, is a `Workload` failure in those words. Either way the failure
    /// reads as the text that was stored.
    pub fn from_stored(kind: Option<&str>, text: &str) -> TrialFailure {
        match kind {
            Some(k) => Self::of_kind(k, text),
            None => Self::infer(text),
        }
        .filter(|f| f.to_string() == text)
        .unwrap_or_else(|| TrialFailure::Workload(text.to_string()))
    }

    /// The kind an older store's text implies (what `trial.failure_kind` is filled with on upgrade).
    pub fn infer_kind(text: &str) -> &'static str {
        TrialFailure::from_stored(None, text).kind()
    }

    fn of_kind(kind: &str, text: &str) -> Option<TrialFailure> {
        match kind {
            "interrupted" => (text == "interrupted").then_some(TrialFailure::Interrupted),
            "target_died" => Self::died(text),
            _ => {
                let (_, prefix, make) = PREFIXED.iter().find(|(k, _, _)| *k == kind)?;
                Some(make(text.strip_prefix(prefix)?.to_string()))
            }
        }
    }

    fn infer(text: &str) -> Option<TrialFailure> {
        if text == "interrupted" {
            return Some(TrialFailure::Interrupted);
        }
        let prefixed = PREFIXED
            .iter()
            .filter(|(_, prefix, _)| !prefix.is_empty())
            .find_map(|(_, prefix, make)| text.strip_prefix(prefix).map(|d| make(d.to_string())));
        prefixed.or_else(|| Self::died(text))
    }

    /// `target {how} during the {phase} phase`.
    fn died(text: &str) -> Option<TrialFailure> {
        let inner = text.strip_prefix("target ")?.strip_suffix(" phase")?;
        let (how, phase) = inner.rsplit_once(" during the ")?;
        Some(TrialFailure::TargetDied {
            how: how.to_string(),
            phase: Phase::parse(phase)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Phase, TrialFailure};

    fn every_variant() -> Vec<TrialFailure> {
        let d = || "exited with status 1: target not ready: x".to_string();
        vec![
            TrialFailure::Setup(d()),
            TrialFailure::TargetDidNotStart(d()),
            TrialFailure::TargetNotReady(d()),
            TrialFailure::TargetDied {
                how: "exited with status 1".into(),
                phase: Phase::Load,
            },
            TrialFailure::KeptTargetExited(d()),
            TrialFailure::TargetStop(d()),
            TrialFailure::MonitorDidNotStart(d()),
            TrialFailure::Monitor(d()),
            TrialFailure::ProbesDidNotStart(d()),
            TrialFailure::Workload(d()),
            TrialFailure::WorkloadError(d()),
            TrialFailure::Interrupted,
        ]
    }

    #[test]
    fn trial_failures_read_as_before() {
        let died = TrialFailure::TargetDied {
            how: "exited with status 1".into(),
            phase: Phase::Load,
        };
        assert_eq!(died.to_string(), "target exited with status 1 during the load phase");
        assert_eq!(TrialFailure::Interrupted.to_string(), "interrupted");
        assert_eq!(
            TrialFailure::TargetNotReady("timed out".into()).to_string(),
            "target not ready: timed out"
        );
    }

    #[test]
    fn every_variant_comes_back_from_its_kind_and_text() {
        let all = every_variant();
        let mut kinds: Vec<&str> = all.iter().map(|f| f.kind()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(kinds.len(), all.len(), "two variants share a kind");
        for f in all {
            assert_eq!(TrialFailure::from_stored(Some(f.kind()), &f.to_string()), f);
        }
    }

    #[test]
    fn an_older_store_s_text_gives_its_kind_and_always_its_words() {
        for f in every_variant() {
            let text = f.to_string();
            let read = TrialFailure::from_stored(None, &text);
            assert_eq!(read.to_string(), text);
            // Setup and Workload failures are the bare text: without a kind they read as Workload.
            if !matches!(f, TrialFailure::Setup(_)) {
                assert_eq!(read, f, "{text}");
            }
        }
        assert_eq!(TrialFailure::infer_kind("target not ready: timed out"), "target_not_ready");
        assert_eq!(TrialFailure::infer_kind("exit status 3"), "workload");
        // A kind whose text does not fit keeps the words.
        let odd = TrialFailure::from_stored(Some("target_not_ready"), "something else");
        assert_eq!(odd, TrialFailure::Workload("something else".into()));
        let unknown = TrialFailure::from_stored(Some("from_the_future"), "x");
        assert_eq!(unknown.to_string(), "x");
    }
}
