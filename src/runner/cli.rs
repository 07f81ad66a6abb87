//! The `perflab run` and `perflab demo` command lines.

use super::execute::{execute, RunOptions, RunOutcome};
use crate::store::RunStatus;
use crate::util::Cancel;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The plan file (TOML); see docs/plan.md. With --resume it can be left out: the run's own copy
    /// of its plan is used
    #[arg(required_unless_present = "resume")]
    pub plan: Option<PathBuf>,
    /// List the trials in execution order with the estimated duration, and run nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Continue an interrupted run directory: run only the trials it lacks (with its own plan, or
    /// the plan file given, which must be the same plan)
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// With --resume: run the trials that failed again (each failure is replaced by the new outcome)
    #[arg(long, requires = "resume")]
    pub retry_failed: bool,
    /// Where run directories are created
    #[arg(long, value_name = "DIR", default_value = "runs")]
    pub runs_dir: PathBuf,
    /// No progress bar and no per-trial lines (the final summary is still printed)
    #[arg(long, short)]
    pub quiet: bool,
    /// Print the outcome as one JSON document on stdout (implies --quiet)
    #[arg(long)]
    pub json: bool,
    /// Stop the run at the first failed trial
    #[arg(long)]
    pub fail_fast: bool,
    /// Serve the live page, its events and /metrics while the run runs (default 127.0.0.1 and a
    /// free port, printed at the start; another address than loopback needs the token printed then)
    #[arg(long, value_name = "ADDR:PORT", num_args = 0..=1, require_equals = true, default_missing_value = crate::live::watch::DEFAULT_ADDR)]
    pub live: Option<String>,
    /// Show the run in the terminal (its trials, the current trial's per-second throughput and
    /// latency, the machine's CPU and memory) instead of the progress bar: `q` or Ctrl-C stops the
    /// run as Ctrl-C does, `+`/`-` change the history window. Needs stdout to be a terminal; not
    /// with --quiet or --json
    #[arg(long)]
    pub tui: bool,
    /// Copy this perflab to the plan's `[hosts]` first (per-version cache, SHA-256 checked)
    #[arg(long)]
    pub install_agent: bool,
    /// Run only slice i of N of every trial's load (`0/4`), for a load split over N machines and
    /// added up by `perflab merge`; `auto` reads i and N from Slurm or a Kubernetes Indexed Job
    #[arg(long, value_name = "i/N|auto")]
    pub segment: Option<String>,
    /// With --segment: begin at this wall-clock time (Unix seconds or RFC 3339), the same for
    /// every segment
    #[arg(long, value_name = "T0", requires = "segment")]
    pub start_at: Option<String>,
    /// With --start-at: a segment that begins later than this after T0 runs nothing (exit code 4)
    #[arg(long, value_name = "DURATION", default_value = "500ms", requires = "start_at")]
    pub start_tolerance: String,
}

#[derive(clap::Args, Debug)]
pub struct DemoArgs {
    /// Port for the demo's target (0 = pick a free one)
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Where the run directory is created
    #[arg(long, value_name = "DIR", default_value = "runs")]
    pub runs_dir: PathBuf,
    /// No progress bar
    #[arg(long, short)]
    pub quiet: bool,
    /// Print the embedded plan and exit
    #[arg(long)]
    pub print_plan: bool,
}

pub fn run(args: RunArgs) -> anyhow::Result<i32> {
    check_runs_dir(&args.runs_dir)?;
    if let Some(a) = &args.live {
        crate::live::watch::parse_addr(a)?;
    }
    if args.tui && !args.dry_run {
        if args.quiet || args.json {
            return Err(crate::error::usage(
                "--tui cannot be used with --quiet or --json: it draws the run on the terminal",
            ));
        }
        crate::live::tui::check_terminal()?;
    }
    let cancel = if args.dry_run {
        None
    } else {
        Some(prepare_run(args.resume.as_deref())?)
    };
    let (source, label) = match (&args.plan, &args.resume) {
        (Some(path), _) => (crate::plan::read(path)?, path.display().to_string()),
        (None, Some(dir)) => stored_plan(dir)?,
        (None, None) => return Err(crate::error::usage("give a plan file (or --resume DIR)")),
    };
    let mut plan = crate::plan::parse_str(&source, &label)?;
    plan.check_ports()?;
    // From here on, nothing printed (errors included) may show one of the plan's secrets.
    let redactor = plan.secrets.redactor().clone();
    use_this_perflab(&mut plan);
    run_plan(&plan, &label, args, cancel).map_err(|e| redactor.error(e))
}

fn run_plan(plan: &crate::plan::Plan, label: &str, args: RunArgs, cancel: Option<Cancel>) -> anyhow::Result<i32> {
    let redactor = plan.secrets.redactor();
    let trials = crate::plan::expand(plan);
    // Every trial's workload is built before anything starts (and before a dry run lists them),
    // so a bad [workload] value is reported at its line either way.
    let mut exp = super::from_plan::build(plan, &trials, label)?;
    let start = segmented(&mut exp, &args)?;
    let Some(cancel) = cancel else {
        print!(
            "{}",
            redactor.apply(&crate::plan::dry_run_listing_with(plan, &trials, &described(plan, &trials, &exp)))
        );
        let ph = &plan.phases;
        if let Some(w) = crate::store::projection::sampling_warning(ph.total(), ph.interval, trials.len()) {
            println!("{w}");
        }
        let program = plan.points.iter().find_map(|p| p.target.as_ref()?.command.program());
        for line in super::profiles::dry_run_lines(plan.profile.as_ref(), program.as_deref()) {
            println!("{}", redactor.apply(&line));
        }
        return Ok(0);
    };
    if cancel.is_cancelled() {
        // Ctrl-C before anything started: nothing to stop, nothing stored.
        return Ok(130);
    }
    let quiet = args.quiet || args.json;
    let hosts = super::hosts::check(plan, args.install_agent, quiet)?;
    if let (Some(mark), Some((t0, tolerance))) = (exp.segment.as_mut(), start) {
        let segment = mark.segment().unwrap_or(crate::model::Segment::WHOLE);
        match super::segment::wait_for_start(segment, t0, tolerance, &cancel)? {
            Some(late) => mark.late_s = Some(late),
            None => return Ok(130),
        }
    }
    let opts = RunOptions {
        runs_dir: args.runs_dir,
        resume: args.resume,
        retry_failed: args.retry_failed,
        quiet,
        fail_fast: args.fail_fast,
        live: args.live.as_deref().map(crate::live::watch::bind).transpose()?,
        tui: args.tui,
    };
    let outcome = execute(exp, &opts, &cancel)?;
    if !hosts.is_empty() {
        let stored = crate::store::Store::open(&outcome.dir).and_then(|mut s| s.write_hosts(&serde_json::to_value(&hosts)?));
        if let Err(e) = stored {
            eprintln!(
                "perflab: warning: the hosts' facts could not be stored: {}",
                crate::error::one_line(&e)
            );
        }
    }
    let report = report_at_end(&outcome);
    let reports = report.as_ref().map(|r| r.0.as_slice()).unwrap_or_default();
    if args.json {
        println!("{}", redactor.apply(&outcome_json(&outcome, reports, report.as_ref().err())));
    } else {
        // The report's summary (with each failed trial's reason), then what the run did.
        if let Ok((_, summary)) = &report {
            println!("{}", redactor.apply(summary));
        }
        // A plan with secrets is stored without them, so resuming needs the plan file again.
        let plan_again = plan.secrets.had_secrets().then_some(label);
        print_outcome(&outcome, plan_again, redactor);
        reports.iter().for_each(|p| println!("report: {}", p.display()));
    }
    Ok(exit_code(&outcome, &report))
}

/// `--segment`, `--start-at`: slice the experiment and mark it; the common start and its tolerance.
fn segmented(exp: &mut super::experiment::Experiment, args: &RunArgs) -> anyhow::Result<Option<(f64, std::time::Duration)>> {
    let Some(arg) = &args.segment else { return Ok(None) };
    if args.resume.is_some() {
        return Err(crate::error::usage(
            "--segment cannot be used with --resume: run the segment again from its plan",
        ));
    }
    let segment = super::segment::resolve(arg).map_err(crate::error::usage)?;
    let start_at = args
        .start_at
        .as_deref()
        .map(super::segment::parse_start_at)
        .transpose()
        .map_err(crate::error::usage)?;
    let tolerance =
        crate::util::duration::parse(&args.start_tolerance).map_err(|e| crate::error::usage(format!("--start-tolerance: {e}")))?;
    super::segment::apply(exp, segment)?;
    exp.segment = Some(super::segment::mark(exp, segment, start_at, tolerance));
    Ok(start_at.map(|t| (t, tolerance)))
}

/// The run's exit code; a report that could not be written makes it at least 1.
fn exit_code<T>(outcome: &RunOutcome, report: &Result<T, String>) -> i32 {
    with_report(outcome.exit_code(), report)
}

/// A run's exit code `code`, made at least 1 by a report that could not be written.
pub(super) fn with_report<T>(code: i32, report: &Result<T, String>) -> i32 {
    match (code, report) {
        (0, Err(_)) => 1,
        (code, _) => code,
    }
}

/// Before a real run: take Ctrl-C (a second one only hurries the cleanup, see
/// [`Cancel::on_signals_hurrying`]), then clean up after runs whose perflab is gone, on this
/// machine and in the `--resume` directory (their targets may hold the ports this run needs); one
/// line each.
/// `--runs-dir` names a directory, or a place where one can be made.
pub(super) fn check_runs_dir(dir: &Path) -> anyhow::Result<()> {
    let mut existing = dir;
    while !existing.exists() {
        match existing.parent() {
            Some(p) if !p.as_os_str().is_empty() => existing = p,
            _ => return Ok(()),
        }
    }
    if !existing.is_dir() {
        return Err(crate::error::usage(format!(
            "--runs-dir {}: {} is not a directory",
            dir.display(),
            existing.display()
        )));
    }
    Ok(())
}

pub(super) fn prepare_run(resume: Option<&Path>) -> anyhow::Result<Cancel> {
    let cancel = Cancel::on_signals_hurrying()?;
    for line in super::reclaim::sweep() {
        eprintln!("perflab: {line}");
    }
    if let Some(dir) = resume {
        if let Some(r) = super::reclaim::reclaim_dir(dir)? {
            eprintln!("perflab: {}", r.line());
        }
    }
    Ok(cancel)
}

pub fn demo(args: DemoArgs) -> anyhow::Result<i32> {
    let plan_text = demo_plan(args.port)?;
    if args.print_plan {
        print!("{plan_text}");
        return Ok(0);
    }
    check_runs_dir(&args.runs_dir)?;
    let cancel = prepare_run(None)?;
    let plan = crate::plan::parse_str(&plan_text, "demo.toml")?;
    plan.check_ports()?;
    let trials = crate::plan::expand(&plan);
    eprintln!(
        "perflab demo: {} trials of plan {} (perflab serve, pool of 5 workers vs a thread per \
         connection), about {}; the report's path is printed at the end",
        trials.len(),
        plan.name,
        crate::util::duration::format(estimate(&plan, trials.len()))
    );
    let exp = super::from_plan::build(&plan, &trials, "demo.toml")?;
    let opts = RunOptions {
        runs_dir: args.runs_dir,
        resume: None,
        retry_failed: false,
        quiet: args.quiet,
        fail_fast: false,
        live: None,
        tui: false,
    };
    let outcome = execute(exp, &opts, &cancel)?;
    print_outcome(&outcome, None, plan.secrets.redactor());
    let report = if outcome.status != RunStatus::Interrupted {
        write_report(&outcome.dir)
    } else {
        Ok((Vec::new(), String::new()))
    };
    if let Ok((files, summary)) = &report {
        println!("{}", plan.secrets.redactor().apply(summary));
        files.iter().for_each(|p| println!("report: {}", p.display()));
    }
    Ok(exit_code(&outcome, &report))
}

/// The plan an interrupted run was started with, from its store, labelled as the copy beside it
/// (`DIR/plan.toml`, the same text) for messages. A plan whose secrets were taken out of the store
/// (`Store::plan_redacted`) cannot be run from there: its requests would carry `[redacted]`.
fn stored_plan(dir: &Path) -> anyhow::Result<(String, String)> {
    let store = crate::store::Store::open(dir)?;
    let source = store.run()?.plan_source;
    if store.plan_redacted()? {
        return Err(crate::error::usage(format!(
            "the plan kept in {} had its secrets (credentials, variables marked secret) removed; \
             give the plan file too: perflab run --resume {} PLAN",
            dir.display(),
            dir.display()
        )));
    }
    Ok((source, dir.join("plan.toml").display().to_string()))
}

/// Per point, what its workload runs and its primary figures (from its first trial): the keys its
/// table sets, and what its workload derives from them.
fn described(
    plan: &crate::plan::Plan,
    trials: &[crate::plan::Trial],
    exp: &super::experiment::Experiment,
) -> std::collections::BTreeMap<usize, String> {
    let mut out = std::collections::BTreeMap::new();
    for (t, built) in trials.iter().zip(&exp.trials) {
        out.entry(t.point).or_insert_with(|| {
            let kind = &plan.workload.kind;
            crate::workload::registry::describe(kind, &t.workload, built.workload.as_ref(), plan.secrets.redactor())
        });
    }
    out
}

/// A target whose program is `perflab` (e.g. `perflab serve` in examples/) runs this very binary
/// when no `perflab` is on PATH, so the examples work from `cargo run --release -- run ...`.
fn use_this_perflab(plan: &mut crate::plan::Plan) {
    let Ok(me) = std::env::current_exe() else {
        return;
    };
    // A remote target's `perflab` is the agent's own binary on its host (this one's path means
    // nothing there): the agent sees to it.
    for t in plan
        .points
        .iter_mut()
        .filter_map(|p| p.target.as_mut())
        .filter(|t| t.host.is_none())
    {
        if let crate::util::command::CommandLine::Argv(argv) = &mut t.command {
            let path = t.env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.as_str());
            if argv.first().is_some_and(|a| a == "perflab")
                && crate::workload::exec::preflight::find_program("perflab", t.cwd.as_deref(), path).is_none()
            {
                argv[0] = me.display().to_string();
            }
        }
    }
}

/// The embedded demo plan with perflab's own path and a port filled in.
pub fn demo_plan(port: u16) -> anyhow::Result<String> {
    let exe = std::env::current_exe()?;
    let port = if port == 0 {
        std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port()
    } else {
        port
    };
    Ok(include_str!("demo.toml")
        .replace("{{PERFLAB}}", &exe.display().to_string())
        .replace("{{PORT}}", &port.to_string()))
}

fn estimate(plan: &crate::plan::Plan, trials: usize) -> std::time::Duration {
    let p = &plan.phases;
    let per_trial = p.total().saturating_add(std::time::Duration::from_millis(300));
    per_trial
        .checked_mul(u32::try_from(trials).unwrap_or(u32::MAX))
        .unwrap_or(std::time::Duration::MAX)
}

/// `plan_again`: the plan file a `--resume` must be given (when the run's own copy cannot serve).
/// Every line goes through `redactor`.
fn print_outcome(o: &RunOutcome, plan_again: Option<&str>, redactor: &crate::util::redact::Redactor) {
    let say = |line: String| println!("{}", redactor.apply(&line));
    for n in &o.notes {
        say(format!("note: {n}"));
    }
    if o.status == RunStatus::Skipped {
        println!("nothing was run: every trial's variant was skipped");
        return;
    }
    let mut line = format!("run {}: {} trial(s) ok, {} failed", o.status, o.trials_ok, o.trials_failed);
    if !o.thresholds_failed.is_empty() {
        line.push_str(&format!(", {} threshold(s) broken", o.thresholds_failed.len()));
    }
    println!("{line}");
    if let Some(f) = &o.failure {
        say(format!("  ✗ {f}"));
    }
    for t in &o.thresholds_failed {
        say(format!("  ✗ threshold {t}"));
    }
    println!("stored in {}", o.dir.display());
    if o.status == RunStatus::Interrupted || o.failure.is_some() {
        let plan = plan_again.map(|p| format!(" {p}")).unwrap_or_default();
        println!("resume with: perflab run --resume {}{plan}", shell_path(&o.dir));
    }
}

fn shell_path(p: &Path) -> String {
    p.display().to_string()
}

/// At the end of a run (its live page still served, so that `/report` serves what this writes):
/// its report and the report's summary, unless it was interrupted or every trial was skipped (none
/// then). A failure is said on stderr, as by [`write_report`].
pub(super) fn report_at_end(outcome: &RunOutcome) -> Result<(Vec<PathBuf>, String), String> {
    if matches!(outcome.status, RunStatus::Interrupted | RunStatus::Skipped) {
        Ok((Vec::new(), String::new()))
    } else {
        write_report(&outcome.dir)
    }
}

/// The run's report (Markdown, HTML, JSON, CSV). A failure is said on stderr (the run's data is
/// stored; `perflab report DIR` writes the report again) and returned.
fn write_report(dir: &Path) -> Result<(Vec<PathBuf>, String), String> {
    super::release_freed_memory();
    let written = crate::report::write_report(dir).map(|p| (p.files.into_iter().map(|(_, f)| f).collect(), p.summary));
    written.map_err(|e| {
        let why = crate::error::one_line(&e);
        eprintln!(
            "perflab: the report could not be written: {why} (the run is stored; write it again with: perflab report {})",
            dir.display()
        );
        why
    })
}

fn outcome_json(o: &RunOutcome, reports: &[PathBuf], report_error: Option<&String>) -> String {
    serde_json::json!({
        "schema": "perflab.run/1",
        "dir": o.dir.display().to_string(),
        "status": o.status.as_str(),
        "trials_ok": o.trials_ok,
        "trials_failed": o.trials_failed,
        "thresholds_failed": o.thresholds_failed,
        "notes": o.notes,
        "failure": o.failure,
        "report_error": report_error,
        "exit_code": exit_code(o, &report_error.map_or(Ok(()), |e| Err(e.clone()))),
        "reports": reports.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
    })
    .to_string()
}
