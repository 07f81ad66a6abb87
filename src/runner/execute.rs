//! Executing an experiment: every trial in order, stored one transaction at a time; adaptive
//! repetitions; variant hooks; kept targets; thresholds; Ctrl-C and `--resume`. Whatever ends the run (its last trial, Ctrl-C, a trial the store could not keep because the
//! disk is full), what it started is stopped, the variant's teardown runs and the status is stored
//! (`complete`, `interrupted`, or `failed` with the reason). Until then, the run's ledger records
//! what it started, for the next perflab should this one be killed.

use super::experiment::{Experiment, PreparedTrial};
use super::hooks::ActiveVariant;
use super::ledger::Ledger;
use super::progress::{figures, Progress};
use super::remote_monitor::HostSamples;
use super::resume::Resumed;
use super::seam::{Clock, Phased, TrialRunner, WallClock};
use super::sut::Sut;
use super::trial::TrialSpec;
use crate::live::Publisher;
use crate::model::{TrialFailure, TrialInfo};
use crate::plan::{Repetitions, ResolvedTarget};
use crate::store::{reserve, RunInfo, RunStatus, Store, StoredTrial};
use crate::util::time::compact_utc;
use crate::util::Cancel;
use crate::workload::{Primary, PrimaryMetrics};
use anyhow::Context;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

pub struct RunOptions {
    /// Where run directories go (`runs/`).
    pub runs_dir: PathBuf,
    /// Continue this run directory instead of starting a new one.
    pub resume: Option<PathBuf>,
    /// With `resume`: run the trials that failed again (their records are replaced).
    pub retry_failed: bool,
    pub quiet: bool,
    pub fail_fast: bool,
    /// `--live[=ADDR:PORT]`: serve the live page on this listener (until the [`RunOutcome`] is dropped).
    pub live: Option<std::net::TcpListener>,
    /// `--tui`: show the run in the terminal (instead of the progress bar) while it runs.
    pub tui: bool,
}

#[derive(Debug)]
pub struct RunOutcome {
    pub dir: PathBuf,
    pub status: RunStatus,
    pub trials_ok: usize,
    pub trials_failed: usize,
    pub thresholds_failed: Vec<String>,
    /// What the user should know about the run (variants skipped by `skip_unless`).
    pub notes: Vec<String>,
    /// Why the run failed as a whole (status `failed`), e.g. the disk filled up and a trial could
    /// not be stored; also kept in the store (`meta` key `failure`).
    pub failure: Option<String>,
    /// The live page's server (`--live`): serves until dropped (`/report` too, once written).
    pub live: Option<crate::live::server::Server>,
}

impl RunOutcome {
    /// 130 interrupted; 1 a threshold broke or a trial failed; 0 otherwise (also when every trial
    /// was skipped: status `skipped`, nothing stored, `dir` empty).
    pub fn exit_code(&self) -> i32 {
        if self.status == RunStatus::Interrupted {
            130
        } else if !self.thresholds_failed.is_empty() || self.trials_failed > 0 || self.status == RunStatus::Failed {
            1
        } else {
            0
        }
    }
}

fn safe_name(s: &str) -> String {
    let n: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    n.trim_matches('-').chars().take(60).collect::<String>()
}

fn open_store(exp: &Experiment, opts: &RunOptions, started: f64) -> anyhow::Result<(Store, Resumed)> {
    if let Some(dir) = &opts.resume {
        return super::resume::open(dir, exp, opts.retry_failed);
    }
    let mut dir = opts.runs_dir.join(format!("{}-{}", compact_utc(started), safe_name(&exp.name)));
    let mut k = 1;
    while dir.exists() {
        k += 1;
        dir = opts.runs_dir.join(format!("{}-{}-{k}", compact_utc(started), safe_name(&exp.name)));
    }
    let runs_dir_existed = opts.runs_dir.exists();
    match create_run(&dir, exp, started) {
        Ok(store) => Ok((store, Resumed::default())),
        Err(e) => {
            // Nothing half-made stays behind (the directory did not exist a moment ago).
            let _ = std::fs::remove_dir_all(&dir);
            if !runs_dir_existed {
                let _ = std::fs::remove_dir(&opts.runs_dir);
            }
            Err(e.context(format!("cannot start the run in {}", dir.display())))
        }
    }
}

/// The run directory: the store, the plan's copy, the run and its points, and the room kept for
/// the end of the run.
fn create_run(dir: &Path, exp: &Experiment, started: f64) -> anyhow::Result<Store> {
    let mut store = Store::create(dir)?;
    store.set_redactor(exp.redactor.clone());
    std::fs::write(dir.join("plan.toml"), &exp.plan_source).with_context(|| format!("cannot write {}", dir.join("plan.toml").display()))?;
    store.write_run(&RunInfo {
        plan_name: exp.name.clone(),
        plan_file: exp.plan_file.clone(),
        plan_source: exp.plan_source.clone(),
        seed: exp.seed,
        started_unix: started,
        planned_trials: exp.trials.len(),
    })?;
    if exp.had_secrets {
        store.mark_plan_redacted()?;
    }
    if let Some(m) = &exp.segment {
        store.write_segment(m)?;
    }
    exp.split.as_ref().map(|m| store.write_merged(m)).transpose()?;
    for p in &exp.points {
        store.write_point(p.id, &p.label, &p.params_json, 0, None)?;
    }
    reserve::take(dir)?;
    Ok(store)
}

/// A target kept across trials (restart = "keep"), restarted when its configuration changes.
struct Kept {
    config: ResolvedTarget,
    target: Sut,
}

fn summary_line(i: usize, n: usize, label: &str, rep: u32, rec: &crate::store::TrialRecord, primary: &Primary) -> String {
    // As the dry run names it.
    let label = if label.is_empty() { "(single point)" } else { label };
    match &rec.failure {
        Some(f) => format!("✗ trial {i}/{n} {label} #{rep}: failed: {f}"),
        None => {
            let figures = rec.result.as_ref().map(|r| figures(primary, &r.metrics)).unwrap_or_default();
            let sep = if figures.is_empty() { "" } else { ": " };
            format!("✓ trial {i}/{n} {label} #{rep}{sep}{figures}")
        }
    }
}

/// The workloads' headline figures, in trial order (each distinct declaration once).
fn declared_primaries(trials: &[PreparedTrial]) -> Vec<Primary> {
    let mut declared: Vec<Primary> = Vec::new();
    for p in trials.iter().map(|t| t.workload.primary()) {
        if !declared.contains(&p) {
            declared.push(p);
        }
    }
    declared
}

/// Drop the trials and points of variants whose `skip_unless` fails here; one note per variant.
fn skip_unmet_variants(exp: &mut Experiment) -> Vec<String> {
    let mut notes = Vec::new();
    for (name, why) in super::hooks::unmet_preconditions(&exp.hooks) {
        let gone: HashSet<usize> = exp
            .trials
            .iter()
            .filter(|t| t.variant.as_deref() == Some(name.as_str()))
            .map(|t| t.point)
            .collect();
        exp.trials.retain(|t| !gone.contains(&t.point));
        exp.points.retain(|p| !gone.contains(&p.id));
        notes.push(crate::model::skip::variant_note(&name, gone.len(), &why));
    }
    notes
}

/// Everything a run holds while its trials run: what is started is in `ledger` until stopped.
struct Session {
    store: Store,
    ledger: Ledger,
    variant: ActiveVariant,
    kept: Option<Kept>,
    progress: Progress,
    run_tag: String,
    labels: BTreeMap<usize, String>,
    done: HashSet<usize>,
    ran: usize,
    failed_fast: bool,
    stop_reasons: BTreeMap<usize, String>,
    /// The workloads' declared headline figures (`declared_primaries`).
    declared: Vec<Primary>,
    runner: Box<dyn TrialRunner>,
    clock: Rc<dyn Clock>,
    /// The live feed: the run's events, appended to its store as they happen.
    feed: crate::live::Feed,
}

pub fn execute(exp: Experiment, opts: &RunOptions, cancel: &Cancel) -> anyhow::Result<RunOutcome> {
    execute_with(exp, opts, cancel, Box::new(Phased), Rc::new(WallClock))
}

/// [`execute`] with the trials run by `runner` on `clock` (the seam the runner's tests use).
pub fn execute_with(
    mut exp: Experiment,
    opts: &RunOptions,
    cancel: &Cancel,
    runner: Box<dyn TrialRunner>,
    clock: Rc<dyn Clock>,
) -> anyhow::Result<RunOutcome> {
    let mut notes = std::mem::take(&mut exp.notes);
    notes.extend(skip_unmet_variants(&mut exp));
    if exp.trials.is_empty() && !notes.is_empty() && opts.resume.is_none() {
        return Ok(RunOutcome {
            dir: PathBuf::new(),
            status: RunStatus::Skipped,
            trials_ok: 0,
            trials_failed: 0,
            thresholds_failed: Vec::new(),
            notes,
            failure: None,
            live: None,
        });
    }
    let (mut store, resumed) = open_store(&exp, opts, clock.now_unix())?;
    let dir = store.dir().to_path_buf();
    let ledger = Ledger::open(&dir, &exp.redactor);
    let declared = declared_primaries(&exp.trials);
    let todo: Vec<PreparedTrial> = std::mem::take(&mut exp.trials)
        .into_iter()
        .filter(|t| !resumed.done.contains(&t.id))
        .collect();
    let feed = super::publish::start_feed(&dir, &exp, &todo, &resumed.done);
    // The live page: serves until the caller drops the outcome (after writing the report).
    let live = opts
        .live
        .as_ref()
        .map(|l| crate::live::watch::serve(l, &dir, Some(feed.publisher().clone())))
        .transpose()?;
    // The terminal view: ends (the terminal restored) when the run ends, whichever way.
    let tui = opts
        .tui
        .then(|| crate::live::tui::View::start(&dir, crate::live::tui::Quit::Interrupt, Some(feed.publisher().hold_flag())))
        .transpose()?;
    let progress = Progress::new(todo.len(), exp.phases.total(), opts.quiet || tui.is_some());
    let progress = if tui.is_some() { progress.silent() } else { progress };
    for n in &notes {
        progress.note(&exp.redactor.apply(&format!("note: {n}")));
    }
    if opts.resume.is_some() {
        resumed.announce(&progress, &dir, todo.len());
    }
    let stored_notes = store.add_notes(&notes);
    let mut s = Session {
        store,
        variant: ActiveVariant::new(ledger.clone()),
        ledger,
        kept: None,
        progress,
        run_tag: format!("{}-{}", std::process::id(), compact_utc(clock.now_unix())),
        labels: exp.points.iter().map(|p| (p.id, p.label.clone())).collect(),
        done: resumed.done,
        ran: 0,
        failed_fast: false,
        stop_reasons: BTreeMap::new(),
        declared,
        runner,
        clock,
        feed,
    };
    let ran = stored_notes.and_then(|()| s.run_trials(&mut exp, todo.into(), opts, cancel));
    if cancel.is_cancelled() {
        s.progress
            .note("interrupted: stopping what the run started and running the teardown (Ctrl-C again skips the grace periods)");
    }
    // Whatever happened, what the run started is stopped and the variant's teardown runs.
    let teardown = s.variant.teardown();
    if let Some(k) = s.kept.take() {
        let _ = k.target.stop();
    }
    s.progress.finish();
    if let Err(e) = &teardown {
        eprintln!("perflab: warning: {}", exp.redactor.apply(&format!("{e:#}")));
    }
    s.finish(exp, notes, cancel.is_cancelled(), ran.err().map(|e| crate::error::one_line(&e)))
        .map(|o| RunOutcome { live, ..o })
}

impl Session {
    /// Every trial in `queue`, then the adaptive rounds. An error (the store could not keep a
    /// trial) ends the run; the caller still stops everything.
    fn run_trials(
        &mut self,
        exp: &mut Experiment,
        mut queue: std::collections::VecDeque<PreparedTrial>,
        opts: &RunOptions,
        cancel: &Cancel,
    ) -> anyhow::Result<()> {
        let mut next_id = self.done.iter().copied().max().map_or(0, |m| m + 1);
        loop {
            while let Some(mut t) = queue.pop_front() {
                if !self.feed.publisher().ready_for_a_trial(cancel) || self.failed_fast {
                    break;
                }
                next_id = next_id.max(t.id + 1);
                let label = self.labels.get(&t.point).cloned().unwrap_or_default();
                self.progress.start_trial(&format!("{label} #{}", t.repetition));
                super::publish::trial_start(self.feed.publisher(), &t, &label);
                let (rec, hosts) = self.run_one(exp, &mut t, cancel);
                if cancel.is_cancelled() {
                    // An interrupted trial is not finished: it is not stored, and --resume runs it again.
                    break;
                }
                self.store
                    .write_trial(&rec)
                    .with_context(|| format!("cannot store trial {}", t.id))?;
                for h in &hosts {
                    self.store
                        .write_host_samples(rec.id, &h.host, &h.samples, &rec.phases)
                        .with_context(|| format!("cannot store trial {}'s samples of host `{}`", t.id, h.host))?;
                }
                let clocks: Vec<_> = hosts.iter().flat_map(|h| h.clocks.iter().cloned()).collect();
                if !clocks.is_empty() {
                    self.store
                        .write_clocks(rec.id, &clocks)
                        .with_context(|| format!("cannot store trial {}'s clock offsets", t.id))?;
                }
                // What the trial's threads (the monitor's, the workload's) freed goes back to the
                // system: glibc keeps it in their arenas otherwise, and the run's memory would
                // creep up trial after trial with the fragments of each.
                drop(hosts);
                super::publish::trial_end(self.feed.publisher(), &rec, &t.workload.primary());
                super::publish::thresholds(self.feed.publisher(), &self.store, &exp.thresholds, t.point);
                let rec = crate::store::TrialRecord {
                    samples: Vec::new(),
                    ..rec
                };
                super::release_freed_memory();
                self.ran += 1;
                let total = self.done.len() + self.ran + queue.len();
                let line = summary_line(self.done.len() + self.ran, total, &label, t.repetition, &rec, &t.workload.primary());
                self.progress.finish_trial(&exp.redactor.apply(&line));
                if rec.failure.is_some() && opts.fail_fast {
                    self.failed_fast = true;
                }
            }
            if cancel.is_cancelled() || self.failed_fast {
                return Ok(());
            }
            // Adaptive repetitions: another round for the points whose CI is still too wide.
            let trials = self.store.trials()?;
            let more = plan_more(exp, &trials, &mut self.stop_reasons, self.feed.publisher());
            if more.is_empty() {
                return Ok(());
            }
            let Some(extend) = &exp.extend else { return Ok(()) };
            for (point, rep) in more {
                queue.push_back(extend(point, rep, next_id)?);
                next_id += 1;
            }
            self.progress.set_total(self.ran + self.done.len() + queue.len());
        }
    }

    /// One trial: switch the variant, (re)start a kept target when its configuration changed, run it.
    fn run_one(&mut self, exp: &Experiment, t: &mut PreparedTrial, cancel: &Cancel) -> (crate::store::TrialRecord, Vec<HostSamples>) {
        let hooks = t.variant.as_ref().and_then(|v| exp.hooks.get(v).map(|h| (v.as_str(), h)));
        let setup_err = self.variant.switch(hooks, cancel).err();

        // A kept target: (re)start it when its configuration differs from the running one.
        let mut kept_err = None;
        let per_trial_target = if exp.keep_target { None } else { t.target.as_ref() };
        if exp.keep_target && setup_err.is_none() {
            if let Some(cfg) = &t.target {
                if self.kept.as_ref().map(|k| &k.config) != Some(cfg) {
                    if let Some(k) = self.kept.take() {
                        let _ = k.target.stop();
                    }
                    let name = format!("perflab-{}-k{}", self.run_tag, t.id);
                    match start_kept(cfg, &name, &self.ledger, cancel) {
                        Ok(rt) => {
                            self.kept = Some(Kept {
                                config: cfg.clone(),
                                target: rt,
                            })
                        }
                        Err(e) => kept_err = Some(TrialFailure::TargetNotReady(format!("{e:#}"))),
                    }
                }
            }
        }

        let spec = TrialSpec {
            id: t.id,
            point: t.point,
            repetition: t.repetition,
            params_json: t.params_json.clone(),
            run_tag: &self.run_tag,
            phases: exp.phases,
            target: per_trial_target,
            ledger: &self.ledger,
            probes: &t.probes,
            run_dir: Some(self.store.dir()),
            hosts: &t.hosts,
            monitor: &exp.monitor_hosts,
            profile: exp.profile.as_ref(),
            feed: self.feed.publisher(),
        };
        let (mut rec, hosts) = if let Some(e) = setup_err.map(|e| TrialFailure::Setup(format!("{e:#}"))).or(kept_err) {
            let info = TrialInfo {
                failure: Some(e),
                ..TrialInfo::new(
                    t.id,
                    t.point,
                    t.repetition,
                    t.params_json.clone(),
                    t.workload.name(),
                    self.clock.now_unix(),
                )
            };
            let rec = crate::store::TrialRecord::new(info);
            (rec, Vec::new())
        } else {
            let kept_target = self.kept.as_mut().map(|k| &mut k.target);
            self.runner.run(&spec, t.workload.as_mut(), kept_target, cancel, &mut self.progress)
        };
        if let Some(k) = self.kept.as_mut() {
            if let Some(how) = k.target.exited() {
                rec.failure.get_or_insert(TrialFailure::KeptTargetExited(how));
                rec.stderr_tail = Some(k.target.stderr_tail());
                if let Some(k) = self.kept.take() {
                    let _ = k.target.stop();
                }
            }
        }
        (rec, hosts)
    }

    /// The end of the run: points' repetitions, thresholds and the status, in one transaction
    /// (after the room kept for it is given back); the write-ahead log emptied; the ledger closed.
    fn finish(mut self, exp: Experiment, notes: Vec<String>, interrupted: bool, mut failure: Option<String>) -> anyhow::Result<RunOutcome> {
        let dir = self.store.dir().to_path_buf();
        reserve::release(&dir);
        let status = if failure.is_some() || self.failed_fast {
            RunStatus::Failed
        } else if interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Complete
        };
        let stop_reasons = std::mem::take(&mut self.stop_reasons);
        let declared = std::mem::take(&mut self.declared);
        let judged = self.store.in_transaction(|store| {
            if let Some(f) = &failure {
                store.set_failure(f)?;
            }
            let thresholds = final_writes(store, &exp, &declared, &stop_reasons, interrupted || failure.is_some())?;
            store.finish_run(status, self.clock.now_unix())?;
            Ok(thresholds)
        });
        let (thresholds_failed, stored) = match judged {
            Ok(t) => (t, true),
            Err(e) => {
                // No room even for that: at least the status and the reason.
                let why = failure.get_or_insert_with(|| crate::error::one_line(&e.context("cannot store the end of the run")));
                let why = why.clone();
                let stored = self
                    .store
                    .set_failure(&why)
                    .and_then(|()| self.store.finish_run(RunStatus::Failed, self.clock.now_unix()));
                if let Err(e) = &stored {
                    eprintln!("perflab: cannot store the run's status in {}: {e:#}", dir.display());
                }
                (Vec::new(), stored.is_ok())
            }
        };
        let status = if failure.is_some() { RunStatus::Failed } else { status };
        let trials = self.store.trials().unwrap_or_default();
        let trials_failed = trials.iter().filter(|t| !t.ok()).count();
        let counts = (trials.len() - trials_failed, trials_failed);
        super::publish::run_end(&mut self.feed, status, counts, &thresholds_failed, failure.as_deref());
        if let Err(e) = self.store.checkpoint() {
            eprintln!("perflab: warning: {}: {e:#}", dir.display());
        }
        if stored {
            self.ledger.close();
        }
        Ok(RunOutcome {
            dir,
            status,
            trials_ok: trials.len() - trials_failed,
            trials_failed,
            thresholds_failed,
            notes: notes.iter().map(|n| exp.redactor.apply(n)).collect(),
            failure: failure.map(|f| exp.redactor.apply(&f)),
            live: None,
        })
    }
}

/// Start a kept target and wait until it is ready (stopping it again when it is not).
fn start_kept(cfg: &ResolvedTarget, name: &str, ledger: &Ledger, cancel: &Cancel) -> anyhow::Result<Sut> {
    let mut rt = Sut::launch(cfg, name, ledger)?;
    match rt.wait_ready(&cfg.ready, cancel) {
        Ok(()) => Ok(rt),
        Err(e) => {
            let tail = rt.stderr_tail();
            let _ = rt.stop();
            Err(anyhow::anyhow!("{e:#}; stderr: {}", tail.trim()))
        }
    }
}

/// Each point's repetitions and why they stopped, and the thresholds (judged only when the run
/// ran to its end: `cut_short` is an interrupted or failed run). The thresholds that broke.
fn final_writes(
    store: &mut Store,
    exp: &Experiment,
    declared: &[Primary],
    stop_reasons: &BTreeMap<usize, String>,
    cut_short: bool,
) -> anyhow::Result<Vec<String>> {
    let trials = store.trials()?;
    for p in &exp.points {
        let n = trials.iter().filter(|t| t.point == p.id).count() as u32;
        let reason = match &exp.repetitions {
            _ if cut_short => Some("interrupted".to_string()),
            Repetitions::Fixed(k) => Some(format!("fixed N = {k}")),
            Repetitions::Adaptive { .. } => stop_reasons.get(&p.id).cloned(),
        };
        store.write_point(p.id, &p.label, &p.params_json, n, reason.as_deref())?;
    }
    // The names the declared primary figures resolved to, for the analysis.
    let ok_metrics = trials.iter().filter(|t| t.ok()).map(|t| t.metrics.as_slice());
    store.write_primary(&PrimaryMetrics::resolve(declared, ok_metrics))?;
    if cut_short {
        store.clear_thresholds()?;
        return Ok(Vec::new());
    }
    super::thresholds::judge_all(store, &exp.thresholds, &exp.points, &trials)
}

/// Which points need one more repetition (adaptive policy), recording why the others stopped.
fn plan_more(exp: &Experiment, trials: &[StoredTrial], reasons: &mut BTreeMap<usize, String>, feed: &Publisher) -> Vec<(usize, u32)> {
    let Repetitions::Adaptive { min, max, ci_pct, metric } = &exp.repetitions else {
        return vec![];
    };
    let mut more = Vec::new();
    for p in &exp.points {
        if reasons.contains_key(&p.id) {
            continue;
        }
        let mine: Vec<&StoredTrial> = trials.iter().filter(|t| t.point == p.id).collect();
        let reps = mine.iter().map(|t| t.repetition).max().unwrap_or(0);
        let metric = match metric {
            Some(m) => Some(m.clone()),
            None => {
                let ok = mine.iter().filter(|t| t.ok()).map(|t| t.metrics.as_slice());
                let resolved = PrimaryMetrics::resolve(std::slice::from_ref(&p.primary), ok);
                resolved.throughput.or(resolved.latency)
            }
        };
        let vals: Vec<f64> = match &metric {
            Some(m) => mine.iter().filter(|t| t.ok()).filter_map(|t| t.metric(m)).collect(),
            None => Vec::new(),
        };
        let hw = crate::analysis::stats::ci_half_width_pct(&vals);
        if reps >= *max {
            reasons.insert(
                p.id,
                format!("max = {max} reached (CI ±{})", hw.map_or("n/a".into(), |h| format!("{h:.1} %"))),
            );
        } else if vals.len() as u32 >= *min && hw.is_some_and(|h| h <= *ci_pct) {
            reasons.insert(
                p.id,
                format!("95 % CI ±{:.1} % ≤ {ci_pct} % after {} repetitions", hw.unwrap_or(0.0), vals.len()),
            );
        } else {
            more.push((p.id, reps + 1));
        }
        super::publish::ci(feed, p.id, metric, hw, *ci_pct, reps, reasons.get(&p.id));
    }
    more
}
