//! `perflab load KIND ... --live`: the load run as a one-trial plan through the runner
//! (`one_trial.rs`, as `perflab http --live`), then the trial's figures as the store keeps them, and
//! the command's exit codes (src/workload/load_cli.rs).

use super::one_trial::{OneTrial, Summary};
use crate::error::usage;
use crate::model::figures::Show;
use crate::model::Phase;
use crate::report::fmt::param;
use crate::store::{RunStatus, StoredTrial};
use crate::workload::load_cli::LiveLoad;
use std::fmt::Write;

/// Run `perflab load KIND ... --live`; the exit code (0, 1, 130 as without `--live`; 2 for bad input).
pub fn run(l: LiveLoad) -> anyhow::Result<i32> {
    let f = &l.flags;
    if f.json {
        return Err(usage(
            "--json cannot be used with --live: the run is stored in its run directory (perflab report DIR --format json)",
        ));
    }
    // The same bounds as without --live (-d at least 1 ms).
    f.durations()?;
    let label = format!("perflab load {}", l.kind);
    let trial = OneTrial {
        label: &label,
        kind: l.kind,
        workload: l.workload.clone(),
        load: &f.duration,
        warmup: f.warmup.as_deref(),
        live: f.live.as_deref().unwrap_or(crate::live::watch::DEFAULT_ADDR),
        runs_dir: &f.runs_dir,
        quiet: f.quiet,
    };
    super::one_trial::run(trial, &LoadSummary(l.kind))
}

/// A load kind's summary from its stored trial: its key figures (labelled as the report labels
/// them), then every figure stored, each with its unit.
struct LoadSummary(&'static str);

impl Summary for LoadSummary {
    fn summary(&self, t: &StoredTrial, status: RunStatus) -> String {
        let mut s = String::new();
        let measured = t
            .phases
            .iter()
            .find(|p| p.phase == Phase::Load)
            .map_or(0.0, |p| p.end_s - p.start_s);
        let interrupted = if status == RunStatus::Interrupted { " (interrupted)" } else { "" };
        let _ = writeln!(s, "{} load, one trial: {measured:.1} s measured{interrupted}", self.0);
        // The key figures in the report's order, then the error classes, then every figure.
        let key = crate::model::figures::of(self.0).map_or(&[][..], |f| f.key);
        for k in key {
            for m in &t.metrics {
                let Some((label, part)) = k.label_for(&m.name) else {
                    continue;
                };
                // Of a pattern's instances (oltp's error classes), the ones that are not zero.
                if k.show == Show::NonZero && m.value == 0.0 {
                    continue;
                }
                let label = part.map_or(label.to_string(), |p| format!("{label} ({p})"));
                s.push_str(&line(&format!("{label}:"), m.value, &m.unit));
            }
        }
        for (class, n) in t.errors.iter().filter(|(_, n)| *n > 0) {
            let _ = writeln!(s, "  {:<30} {n}", format!("errors ({class}):"));
        }
        let _ = writeln!(s, "Every figure stored:");
        for m in &t.metrics {
            s.push_str(&line(&m.name, m.value, &m.unit));
        }
        s
    }

    /// An operation failed (`errors`, a `*_failed` count, an error class), or nothing was measured
    /// (the headline throughput is missing or 0).
    fn failed(&self, t: &StoredTrial) -> bool {
        let failures = t
            .metrics
            .iter()
            .any(|m| (m.name == "errors" || m.name.ends_with("_failed")) && m.value > 0.0);
        let headline = crate::model::figures::of(self.0)
            .and_then(|f| f.headline(t.metrics.iter().map(|m| m.name.as_str())))
            .and_then(|h| t.metric(&h));
        failures || t.errors.iter().any(|(_, n)| *n > 0) || headline.is_none_or(|v| v == 0.0)
    }
}

/// `  name    value unit`: a whole number without decimals, another to 4 significant digits
/// (`report::fmt::param`, as the report shows a value).
fn line(name: &str, value: f64, unit: &str) -> String {
    format!("  {name:<30} {} {unit}", param(value)).trim_end().to_string() + "\n"
}
