//! `perflab http URL ... --live`: the load run as a one-trial plan through the runner (as `perflab
//! run --live` runs a plan: the live server, the store, the run directory), then the command's
//! summary (the one the workload kept with the stored trial) and its exit codes
//! (src/workload/http/cli.rs).

use super::one_trial::OneTrial;
use crate::error::usage;
use crate::store::StoredTrial;
use crate::workload::http::cli::HttpArgs;

/// Run `perflab http ... --live`; the exit code (0, 1, 130 as without `--live`; 2 for bad input).
pub fn run(a: HttpArgs) -> anyhow::Result<i32> {
    let live = a.live.as_deref().unwrap_or(crate::live::watch::DEFAULT_ADDR);
    crate::live::watch::parse_addr(live)?;
    super::cli::check_runs_dir(&a.runs_dir)?;
    if a.json {
        return Err(usage(
            "--json cannot be used with --live: the run's figures are written as JSON into its run directory (report.json)",
        ));
    }
    if a.hdr_log.is_some() {
        return Err(usage(
            "--hdr-log cannot be used with --live: the run's histograms are kept in its store",
        ));
    }
    if a.engine.is_some() {
        return Err(usage("--engine cannot be used with --live"));
    }
    let Some(duration) = a.settings.duration.clone() else {
        return Err(usage("--live needs -d DURATION: the run's load phase"));
    };
    super::one_trial::check(live, &a.runs_dir, &duration, a.warmup.as_deref())?;
    // Bad input (the URL, a body file) is said before anything starts.
    crate::workload::http::prepare(&a.settings)?;
    let mut settings = a.settings.clone();
    if settings.requests.is_none() {
        // The load phase is the duration.
        settings.duration = None;
    }
    let trial = OneTrial {
        label: "perflab http",
        kind: "http",
        workload: toml::Table::try_from(&settings)?,
        load: &duration,
        warmup: a.warmup.as_deref(),
        live,
        runs_dir: &a.runs_dir,
        quiet: a.quiet,
    };
    super::one_trial::run(trial, &failed)
}

/// `perflab http`'s exit code 1: a request ended in a transport error, or none was answered.
fn failed(t: &StoredTrial) -> bool {
    t.metric("errors").unwrap_or(0.0) > 0.0 || t.metric("requests").unwrap_or(0.0) == 0.0
}
