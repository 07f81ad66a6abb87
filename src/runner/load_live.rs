//! `perflab load KIND ... --live`: the load run as a one-trial plan through the runner
//! (`one_trial.rs`, as `perflab http --live`), then the kind's own summary (kept with the stored
//! trial) and the command's exit codes (src/workload/load_cli.rs).

use super::one_trial::OneTrial;
use crate::error::usage;
use crate::store::StoredTrial;
use crate::workload::load_cli::LiveLoad;

/// Run `perflab load KIND ... --live`; the exit code (0, 1, 130 as without `--live`; 2 for bad input).
pub fn run(l: LiveLoad) -> anyhow::Result<i32> {
    let f = &l.flags;
    if f.json {
        return Err(usage(
            "--json cannot be used with --live: the run's figures are written as JSON into its run directory (report.json)",
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
    super::one_trial::run(trial, &|t| failed(l.kind, t))
}

/// `perflab load`'s exit code 1: an operation failed (`errors`, a `*_failed` count, an error class),
/// or nothing was measured (the kind's headline throughput is missing or 0).
fn failed(kind: &str, t: &StoredTrial) -> bool {
    let failures = t
        .metrics
        .iter()
        .any(|m| (m.name == "errors" || m.name.ends_with("_failed")) && m.value > 0.0);
    let headline = crate::model::figures::of(kind)
        .and_then(|f| f.headline(t.metrics.iter().map(|m| m.name.as_str())))
        .and_then(|h| t.metric(&h));
    failures || t.errors.iter().any(|(_, n)| *n > 0) || headline.is_none_or(|v| v == 0.0)
}
