//! The run loop on a fake workload and a fake clock (the `seam`): the order of the trials, adaptive
//! repetitions and `--resume`, with every figure known in advance and no real time spent (a trial of
//! 40 s of phases moves the fake clock by 40 s at once). The store is a real one, in a temp dir.

use super::execute::{execute_with, RunOptions, RunOutcome};
use super::experiment::{Experiment, PreparedTrial};
use super::progress::Progress;
use super::remote_monitor::HostSamples;
use super::seam::{Clock, TrialRunner};
use super::sut::Sut;
use super::trial::TrialSpec;
use crate::model::{Better, Metric, Primary, TrialFailure, TrialInfo, WorkloadResult};
use crate::store::{RunStatus, Store, TrialRecord};
use crate::util::Cancel;
use crate::workload::{RunSpec, Workload};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

/// 2023-11-14 22:13:20 UTC: where the fake clock starts.
const T0: f64 = 1_700_000_000.0;

/// A clock that moves only when told.
struct FakeClock(Cell<f64>);

impl Clock for FakeClock {
    fn now_unix(&self) -> f64 {
        self.0.get()
    }
}

/// A workload whose one figure, `ops_per_s`, is known before it runs; `None` fails the trial.
struct FakeWorkload(Option<f64>);

const PRIMARY: Primary = Primary {
    throughput: &["ops_per_s"],
    latency: &[],
    latency_histogram: None,
};

impl Workload for FakeWorkload {
    fn name(&self) -> String {
        "fake".into()
    }
    fn primary(&self) -> Primary {
        PRIMARY
    }
    fn run(&mut self, _: RunSpec, _: &Cancel, on_load_start: &mut dyn FnMut()) -> anyhow::Result<WorkloadResult> {
        on_load_start();
        Ok(match self.0 {
            Some(v) => WorkloadResult {
                metrics: vec![Metric::new("ops_per_s", "ops/s", v, Better::Higher)],
                ..WorkloadResult::default()
            },
            None => WorkloadResult {
                failure: Some("the fake failed".into()),
                ..WorkloadResult::default()
            },
        })
    }
}

/// Runs a trial by running its workload at once and moving the clock by the trial's phases; logs
/// (point, repetition) in the order run; presses Ctrl-C during the `interrupt_at`-th trial.
struct FakeTrials {
    clock: Rc<FakeClock>,
    log: Rc<RefCell<Vec<(usize, u32)>>>,
    interrupt_at: Option<usize>,
}

impl TrialRunner for FakeTrials {
    fn run(
        &mut self,
        spec: &TrialSpec,
        w: &mut dyn Workload,
        _: Option<&mut Sut>,
        cancel: &Cancel,
        _: &mut Progress,
    ) -> (TrialRecord, Vec<HostSamples>) {
        let info = TrialInfo::new(
            spec.id,
            spec.point,
            spec.repetition,
            spec.params_json.clone(),
            w.name(),
            self.clock.now_unix(),
        );
        let mut rec = TrialRecord::new(info);
        let run = RunSpec {
            warmup: spec.phases.warmup,
            load: spec.phases.load,
        };
        let result = w.run(run, cancel, &mut || {}).expect("the fake never errs");
        rec.failure = result.failure.clone().map(TrialFailure::Workload);
        rec.result = Some(result);
        self.clock.0.set(self.clock.now_unix() + spec.phases.total().as_secs_f64());
        rec.ended_unix = self.clock.now_unix();
        self.log.borrow_mut().push((spec.point, spec.repetition));
        if self.interrupt_at == Some(self.log.borrow().len()) {
            cancel.cancel();
        }
        (rec, Vec::new())
    }
}

/// The experiment of `plan` (an exec of `true` over `[matrix] p = [0, 1, 2]` and `extra`, 40 s of
/// phases), with every trial's workload, and those adaptive repetitions add, replaced by a
/// [`FakeWorkload`] giving `figure(point, repetition)`.
fn experiment(extra: &str, figure: fn(usize, u32) -> Option<f64>) -> Experiment {
    let text = format!(
        "name = \"seam\"\n{extra}\n[workload]\ntype = \"exec\"\ncommand = \"true\"\n\n[matrix]\np = [0, 1, 2]\n\n\
         [phases]\nbaseline = \"10s\"\nwarmup = \"5s\"\nload = \"20s\"\nrecovery = \"5s\"\n"
    );
    let plan = crate::plan::parse_str(&text, "seam.toml").expect("plan");
    let mut exp = super::from_plan::build(&plan, &crate::plan::expand(&plan), "seam.toml").expect("experiment");
    for t in &mut exp.trials {
        t.workload = Box::new(FakeWorkload(figure(t.point, t.repetition)));
    }
    for p in &mut exp.points {
        p.primary = PRIMARY;
    }
    let params: BTreeMap<usize, String> = exp.points.iter().map(|p| (p.id, p.params_json.clone())).collect();
    if exp.extend.is_some() {
        exp.extend = Some(Box::new(move |point, repetition, id| {
            Ok(PreparedTrial {
                id,
                point,
                repetition,
                params_json: params[&point].clone(),
                variant: None,
                target: None,
                workload: Box::new(FakeWorkload(figure(point, repetition))),
                probes: Vec::new(),
                hosts: Vec::new(),
            })
        }));
    }
    exp
}

/// Run `exp` on the fake: the outcome, the (point, repetition) of each trial in the order run, and
/// the fake clock's time at the end.
fn run(exp: Experiment, runs: &Path, resume: Option<&Path>, interrupt_at: Option<usize>) -> (RunOutcome, Vec<(usize, u32)>, f64) {
    let clock = Rc::new(FakeClock(Cell::new(T0)));
    let log = Rc::new(RefCell::new(Vec::new()));
    let trials = FakeTrials {
        clock: clock.clone(),
        log: log.clone(),
        interrupt_at,
    };
    let opts = RunOptions {
        runs_dir: runs.to_path_buf(),
        resume: resume.map(Path::to_path_buf),
        quiet: true,
        fail_fast: false,
        retry_failed: false,
        live: None,
        tui: false,
    };
    let out = execute_with(exp, &opts, &Cancel::new(), Box::new(trials), clock.clone()).expect("run");
    let order = log.borrow().clone();
    (out, order, clock.now_unix())
}

fn steady(_: usize, _: u32) -> Option<f64> {
    Some(100.0)
}

#[test]
fn the_trials_run_in_the_plans_order_and_a_seed_gives_the_same_shuffle() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (out, order, end) = run(
        experiment("repetitions = 2\norder = \"sequential\"", steady),
        tmp.path(),
        None,
        None,
    );
    assert_eq!(order, [(0, 1), (0, 2), (1, 1), (1, 2), (2, 1), (2, 2)]);
    assert_eq!((out.status, out.trials_ok, out.trials_failed), (RunStatus::Complete, 6, 0));
    // No real time: six trials of 40 s are four minutes of the fake clock.
    assert_eq!(end, T0 + 240.0);
    let (_, order, _) = run(
        experiment("repetitions = 2\norder = \"interleaved\"", steady),
        tmp.path(),
        None,
        None,
    );
    assert_eq!(order, [(0, 1), (1, 1), (2, 1), (0, 2), (1, 2), (2, 2)]);

    let shuffled = |seed: u64| {
        let exp = experiment(&format!("repetitions = 3\norder = \"shuffled\"\nseed = {seed}"), steady);
        run(exp, tmp.path(), None, None).1
    };
    let a = shuffled(7);
    assert_eq!(a, shuffled(7), "the same seed, the same order");
    // Each round is every point once, in an order of its own.
    let rounds: Vec<Vec<usize>> = a.chunks(3).map(|r| r.iter().map(|t| t.0).collect()).collect();
    for (i, round) in rounds.iter().enumerate() {
        assert!(a[i * 3..i * 3 + 3].iter().all(|t| t.1 == i as u32 + 1), "{a:?}");
        let mut points = round.clone();
        points.sort_unstable();
        assert_eq!(points, [0, 1, 2], "{a:?}");
    }
    let others: Vec<_> = (1..=8).map(shuffled).collect();
    assert!(others.iter().any(|o| *o != a), "eight other seeds, all the order of seed 7: {a:?}");
}

/// Point 0 is steady (the CI is 0 after `min`); point 1 alternates 50 and 150 (never within 2 %);
/// point 2 is 100 ± 1 (within 2 % after a few repetitions).
fn mixed(point: usize, rep: u32) -> Option<f64> {
    let odd = rep % 2 == 1;
    Some(match point {
        0 => 100.0,
        1 if odd => 50.0,
        1 => 150.0,
        _ if odd => 99.0,
        _ => 101.0,
    })
}

#[test]
fn adaptive_repetitions_stop_at_the_ci_or_at_max() {
    let tmp = tempfile::tempdir().expect("tmp");
    let exp = experiment("repetitions = { min = 3, max = 8, ci_pct = 2 }\norder = \"interleaved\"", mixed);
    let (out, order, _) = run(exp, tmp.path(), None, None);
    assert_eq!(out.status, RunStatus::Complete);
    let count = |p: usize| order.iter().filter(|t| t.0 == p).count();
    // n = 3 of 99/101/99: half-width t(0.975, 2) · s / √3 = 4.30 · 1.155 / 1.732 = 2.87 % > 2;
    // n = 4: 3.18 · 1.155 / 2 = 1.84 % ≤ 2.
    assert_eq!((count(0), count(1), count(2)), (3, 8, 4), "{order:?}");
    // The min round first, interleaved, then one more round at a time for the points still open.
    assert_eq!(order[..3], [(0, 1), (1, 1), (2, 1)]);
    assert_eq!(order[9..11], [(1, 4), (2, 4)]);
    assert!(order[11..].iter().all(|t| t.0 == 1), "{order:?}");
    let store = Store::open(&out.dir).expect("store");
    let reasons: Vec<String> = store
        .points()
        .expect("points")
        .into_iter()
        .map(|p| p.stop_reason.unwrap_or_default())
        .collect();
    assert_eq!(reasons[0], "95 % CI ±0.0 % ≤ 2 % after 3 repetitions");
    assert!(reasons[1].starts_with("max = 8 reached (CI ±"), "{reasons:?}");
    assert_eq!(reasons[2], "95 % CI ±1.8 % ≤ 2 % after 4 repetitions");
}

fn point_1_fails_once(point: usize, rep: u32) -> Option<f64> {
    (point != 1 || rep != 2).then_some(100.0)
}

#[test]
fn resume_runs_only_the_missing_trials_and_keeps_the_failed_ones() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = "repetitions = 2\norder = \"sequential\"";
    // Ctrl-C during the fifth trial: four are kept (one of them failed), the fifth is not stored.
    let (out, order, _) = run(experiment(plan, point_1_fails_once), tmp.path(), None, Some(5));
    assert_eq!(out.status, RunStatus::Interrupted);
    assert_eq!(out.exit_code(), 130);
    assert_eq!(order.len(), 5);
    let stored = |dir: &Path| -> Vec<(usize, u32, bool)> {
        let mut t: Vec<_> = Store::open(dir)
            .expect("store")
            .trials()
            .expect("trials")
            .iter()
            .map(|t| (t.point, t.repetition, t.ok()))
            .collect();
        t.sort_unstable();
        t
    };
    assert_eq!(stored(&out.dir), [(0, 1, true), (0, 2, true), (1, 1, true), (1, 2, false)]);

    let (again, order, _) = run(experiment(plan, point_1_fails_once), tmp.path(), Some(&out.dir), None);
    assert_eq!(order, [(2, 1), (2, 2)], "only the missing trials");
    assert_eq!(again.dir, out.dir);
    assert_eq!((again.status, again.trials_ok, again.trials_failed), (RunStatus::Complete, 5, 1));
    assert_eq!(stored(&out.dir).len(), 6);
    assert_eq!(again.exit_code(), 1, "the failed trial kept is still a failed trial");
}
