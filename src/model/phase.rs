//! The phases of a trial, one enum for the runner that enters them, the store that keeps them, the
//! analysis that summarizes each and the report that draws them; and [`PhaseSpan`], one phase's
//! time within its trial.

use serde::{Deserialize, Serialize};

/// One phase of a trial, in the order a trial goes through them. `Setup` (starting the target,
/// the workload's setup) is never stored or reported: the kept phases are [`Phase::MEASURED`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Setup = 0,
    Baseline = 1,
    Warmup = 2,
    Load = 3,
    Recovery = 4,
}

impl Phase {
    /// Every phase, in order (`Phase::ALL[p as usize] == p`).
    pub const ALL: [Phase; 5] = [Phase::Setup, Phase::Baseline, Phase::Warmup, Phase::Load, Phase::Recovery];

    /// The phases a trial keeps: the store's `phase` rows, the samples' tags, the report's bands.
    pub const MEASURED: [Phase; 4] = [Phase::Baseline, Phase::Warmup, Phase::Load, Phase::Recovery];

    /// Its name in the store, the report and the JSON documents.
    pub const fn name(self) -> &'static str {
        match self {
            Phase::Setup => "setup",
            Phase::Baseline => "baseline",
            Phase::Warmup => "warmup",
            Phase::Load => "load",
            Phase::Recovery => "recovery",
        }
    }

    /// The phase a stored name stands for; None for a name this version does not know.
    pub fn parse(name: &str) -> Option<Phase> {
        Phase::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One phase of one trial: when it started and ended, in seconds since the trial started. It is
/// written in JSON as `[name, start_s, end_s]` (`report.json`'s `timeline_phases`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhaseSpan {
    pub phase: Phase,
    pub start_s: f64,
    pub end_s: f64,
}

impl PhaseSpan {
    pub fn new(phase: Phase, start_s: f64, end_s: f64) -> PhaseSpan {
        PhaseSpan { phase, start_s, end_s }
    }

    /// The phase's name (`load`).
    pub fn name(&self) -> &'static str {
        self.phase.name()
    }

    /// When the load phase of a trial with these phases ended (the latest end of a `load` span).
    pub fn load_end(spans: &[PhaseSpan]) -> Option<f64> {
        spans.iter().filter(|p| p.phase == Phase::Load).map(|p| p.end_s).reduce(f64::max)
    }
}

impl Serialize for PhaseSpan {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (self.phase, self.start_s, self.end_s).serialize(s)
    }
}

impl<'de> Deserialize<'de> for PhaseSpan {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<PhaseSpan, D::Error> {
        let (phase, start_s, end_s) = <(Phase, f64, f64)>::deserialize(d)?;
        Ok(PhaseSpan { phase, start_s, end_s })
    }
}

#[cfg(test)]
mod tests {
    use super::{Phase, PhaseSpan};

    #[test]
    fn phases_keep_their_stored_names_and_order() {
        for (i, p) in Phase::ALL.into_iter().enumerate() {
            assert_eq!(p as usize, i);
            assert_eq!(Phase::parse(p.name()), Some(p));
            assert_eq!(p.to_string(), p.name());
        }
        let names: Vec<&str> = Phase::MEASURED.iter().map(|p| p.name()).collect();
        assert_eq!(names, ["baseline", "warmup", "load", "recovery"]);
        assert_eq!(Phase::parse("idle"), None);
    }

    #[test]
    fn a_span_is_written_as_the_triple_reports_have_always_had() {
        let span = PhaseSpan::new(Phase::Load, 1.5, 3.0);
        let json = serde_json::to_string(&span).unwrap();
        assert_eq!(json, r#"["load",1.5,3.0]"#);
        assert_eq!(serde_json::from_str::<PhaseSpan>(&json).unwrap(), span);
        let spans = [PhaseSpan::new(Phase::Baseline, 0.0, 1.5), span];
        assert_eq!(PhaseSpan::load_end(&spans), Some(3.0));
        assert_eq!(PhaseSpan::load_end(&spans[..1]), None);
    }
}
