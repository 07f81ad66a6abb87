//! A command's load (`perflab http|load ... --live`) as a plan of one trial: the command's settings
//! become the plan's `[workload]`, its duration the load phase, and the plan runs through the runner
//! as `perflab run --live` runs one (the live server, the store, the run directory, the report at
//! the end). Then the command prints its summary as it does without `--live`: the workload kept
//! its own summary with the trial (its raw output), so the text printed is the stored one.

use super::execute::{execute, RunOptions};
use crate::error::usage;
use crate::store::{RunStatus, StoredTrial};
use std::path::Path;

/// One command's load, as the plan of one trial it makes.
pub struct OneTrial<'a> {
    /// The command, as messages about the plan name it (`perflab http`).
    pub label: &'a str,
    /// The plan's name and its `[workload]` `type` (`http`, `cpu`, ...).
    pub kind: &'a str,
    /// The command's settings as the `[workload]` table, without `type`.
    pub workload: toml::Table,
    /// The load phase (`-d`).
    pub load: &'a str,
    /// The warm-up phase (`--warmup`; none when not given).
    pub warmup: Option<&'a str>,
    /// `--live`'s address.
    pub live: &'a str,
    pub runs_dir: &'a Path,
    pub quiet: bool,
}

/// `--live`'s address, `--runs-dir` and the phases, checked before anything starts (bad input: a
/// usage error naming the option).
pub fn check(live: &str, runs_dir: &Path, load: &str, warmup: Option<&str>) -> anyhow::Result<()> {
    crate::live::watch::parse_addr(live)?;
    super::cli::check_runs_dir(runs_dir)?;
    crate::util::duration::parse(load).map_err(|e| usage(format!("--duration: {e}")))?;
    if let Some(w) = warmup {
        crate::util::duration::parse(w).map_err(|e| usage(format!("--warmup: {e}")))?;
    }
    Ok(())
}

/// Run the trial with the live server, write the run's report as `perflab run` does (none when
/// interrupted), print the command's summary kept with the stored trial (or why there is none),
/// `stored in DIR` and the report's paths; the exit code: 130 when interrupted, 1 when the trial
/// failed, `failed` says its load did (an error, nothing measured) or the report could not be
/// written, 0 otherwise.
pub fn run(t: OneTrial, failed: &dyn Fn(&StoredTrial) -> bool) -> anyhow::Result<i32> {
    check(t.live, t.runs_dir, t.load, t.warmup)?;
    let plan_text = plan(&t)?;
    let plan = crate::plan::parse_str(&plan_text, t.label)?;
    let redactor = plan.secrets.redactor().clone();
    let cancel = super::cli::prepare_run(None)?;
    if cancel.is_cancelled() {
        return Ok(130);
    }
    let trials = crate::plan::expand(&plan);
    let exp = super::from_plan::build(&plan, &trials, t.label)?;
    let opts = RunOptions {
        runs_dir: t.runs_dir.to_path_buf(),
        resume: None,
        retry_failed: false,
        quiet: t.quiet,
        fail_fast: false,
        live: Some(crate::live::watch::bind(t.live)?),
        tui: false,
    };
    let outcome = execute(exp, &opts, &cancel).map_err(|e| redactor.error(e))?;
    // As `perflab run` writes it, while the live page still serves it at `/report`.
    let report = super::cli::report_at_end(&outcome);
    let store = crate::store::Store::open(&outcome.dir)?;
    let stored = store.trials()?;
    let trial = stored.iter().find(|t| t.failure.is_none());
    match trial {
        // The workload's own summary (the database session's line is the report's, not the
        // command's).
        Some(t) => store
            .raw_output(t.id)?
            .iter()
            .filter(|l| !l.starts_with(crate::model::result::DB_SESSION_LINE))
            .for_each(|l| println!("{}", redactor.apply(l))),
        None => println!(
            "{}",
            redactor.apply(&match (stored.first().and_then(|t| t.failure.as_ref()), outcome.status) {
                (Some(f), _) => format!("the trial failed: {f}"),
                (None, RunStatus::Interrupted) => "interrupted: the trial under way was not stored".into(),
                (None, s) => format!("run {s}: no trial stored"),
            })
        ),
    }
    println!("stored in {}", outcome.dir.display());
    if let Ok((files, _)) = &report {
        files.iter().for_each(|p| println!("report: {}", p.display()));
    }
    let code = if outcome.status == RunStatus::Interrupted {
        130
    } else if trial.is_none_or(failed) || outcome.exit_code() != 0 {
        1
    } else {
        0
    };
    // (The live page stops when `outcome` goes, after the report's paths are printed.)
    Ok(super::cli::with_report(code, &report))
}

/// The plan of one trial: the settings as its `[workload]`, the phases from `-d` and `--warmup`.
fn plan(t: &OneTrial) -> anyhow::Result<String> {
    let mut workload = t.workload.clone();
    workload.insert("type".into(), t.kind.into());
    let mut phases = toml::Table::new();
    for (k, v) in [
        ("baseline", "0s"),
        ("warmup", t.warmup.unwrap_or("0s")),
        ("load", t.load),
        ("recovery", "0s"),
        ("interval", "1s"),
    ] {
        phases.insert(k.into(), v.into());
    }
    let mut doc = toml::Table::new();
    doc.insert("name".into(), t.kind.into());
    doc.insert("workload".into(), workload.into());
    doc.insert("phases".into(), phases.into());
    Ok(toml::to_string(&doc)?)
}
