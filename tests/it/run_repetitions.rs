//! `perflab run` bookkeeping with no target and no load: the dry-run order is the order a real run
//! follows, every point records why its repetitions stopped (fixed N, CI reached, max reached), and
//! a dry run finds the same [workload] errors a real run would. The workloads are `true` and `cat`
//! of captured wrk output, so every figure is known in advance.

use perflab::store::{RunStatus, Store};
use std::path::Path;
use std::process::Command;

use crate::common;
use common::{only_run_dir, write_plan};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");
const WRK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tools/wrk");

const TINY: &str = r#"[phases]
baseline = "0s"
warmup = "0s"
load = "50ms"
recovery = "0s"
interval = "100ms"
"#;

fn run(args: &[&str], plan: &Path) -> std::process::Output {
    Command::new(BIN).args(args).arg(plan).output().expect("run perflab")
}

#[test]
fn the_dry_run_order_is_the_order_a_real_run_follows() {
    let tmp = tempfile::tempdir().expect("tmp");
    // `${a}` is a whole argv element and an integer: it is passed as the word "1".
    let plan = write_plan(
        tmp.path(),
        &format!(
            "name = \"order\"\nrepetitions = 2\norder = \"shuffled\"\nseed = 7\n\n[workload]\ntype = \"exec\"\n\
             command = [\"true\", \"${{a}}\", \"${{b}}\"]\n\n[matrix]\na = [1, 2]\nb = [\"x\", \"y\"]\n\n{TINY}"
        ),
    );
    let dry = run(&["run", "--dry-run"], &plan);
    assert_eq!(dry.status.code(), Some(0), "{}", String::from_utf8_lossy(&dry.stderr));
    // "3. point 1   rep 2  a=1 b=x" → ("a=1 b=x", 2)
    let listed: Vec<(String, u32)> = String::from_utf8_lossy(&dry.stdout)
        .lines()
        .filter_map(|l| {
            let (_, rest) = l.split_once(". point ")?;
            let (_, rest) = rest.split_once(" rep ")?;
            let (rep, label) = rest.trim().split_once(' ')?;
            Some((label.trim().to_string(), rep.parse().ok()?))
        })
        .collect();
    assert_eq!(listed.len(), 8, "8 trials listed");

    let runs = tmp.path().join("runs");
    let out = run(&["run", "--quiet", "--runs-dir", runs.to_str().expect("utf-8")], &plan);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let store = Store::open(only_run_dir(&runs)).expect("store");
    let labels: std::collections::BTreeMap<usize, String> = store.points().expect("points").into_iter().map(|p| (p.id, p.label)).collect();
    let mut trials = store.trials().expect("trials");
    trials.sort_by_key(|t| t.id);
    let ran: Vec<(String, u32)> = trials.iter().map(|t| (labels[&t.point].clone(), t.repetition)).collect();
    assert_eq!(ran, listed, "the real run followed the dry-run order");
    assert!(
        trials.windows(2).all(|w| w[0].ended_unix <= w[1].started_unix),
        "ids are execution order"
    );
    assert!(
        trials.iter().all(|t| t.ok()),
        "{:?}",
        trials.iter().map(|t| &t.failure).collect::<Vec<_>>()
    );
    // A fixed N is exactly N trials per point, and says so.
    for p in store.points().expect("points") {
        assert_eq!(p.repetitions, 2);
        assert_eq!(p.stop_reason.as_deref(), Some("fixed N = 2"));
    }
}

#[test]
fn adaptive_repetitions_record_why_each_point_stopped() {
    let tmp = tempfile::tempdir().expect("tmp");
    let toggle = tmp.path().join("toggle");
    let t = toggle.display();
    // steady=yes prints the same wrk report every time (CI ±0 %: stops at min = 3); steady=no
    // alternates two reports (64 123 and 128 146 req/s: the CI never narrows, so max = 5).
    let plan = write_plan(
        tmp.path(),
        &format!(
            r#"name = "adaptive"
repetitions = {{ min = 3, max = 5, ci_pct = 5, metric = "requests_per_s" }}
[workload]
type = "exec"
adapter = "wrk"
command = "if [ ${{steady}} = yes ]; then cat {WRK}/plain.stdout; elif [ -e {t} ]; then rm {t}; cat {WRK}/plain.stdout; else touch {t}; cat {WRK}/latency.stdout; fi"
[matrix]
steady = ["yes", "no"]
{TINY}"#
        ),
    );
    let runs = tmp.path().join("runs");
    let out = run(&["run", "--quiet", "--runs-dir", runs.to_str().expect("utf-8")], &plan);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let store = Store::open(only_run_dir(&runs)).expect("store");
    let points = store.points().expect("points");
    let steady = points.iter().find(|p| p.label == "steady=yes").expect("steady point");
    let noisy = points.iter().find(|p| p.label == "steady=no").expect("noisy point");
    assert_eq!(steady.repetitions, 3);
    assert_eq!(steady.stop_reason.as_deref(), Some("95 % CI ±0.0 % ≤ 5 % after 3 repetitions"));
    assert_eq!(noisy.repetitions, 5);
    let why = noisy.stop_reason.as_deref().unwrap_or("");
    assert!(why.starts_with("max = 5 reached"), "{why}");
    let values: Vec<f64> = store
        .trials()
        .expect("trials")
        .iter()
        .filter(|t| t.point == noisy.id)
        .filter_map(|t| t.metric("requests_per_s"))
        .collect();
    assert_eq!(values, [128146.45, 64123.31, 128146.45, 64123.31, 128146.45]);
}

#[test]
fn a_dry_run_finds_workload_errors_too() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(
        tmp.path(),
        &format!("name = \"bad\"\nrepetitions = 1\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\nadaptr = \"wrk\"\n{TINY}"),
    );
    let out = run(&["run", "--dry-run"], &plan);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("plan.toml:6:"), "located at line 6: {err}");
    assert!(err.contains("adapter"), "did-you-mean hint: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty(), "nothing listed");
}

#[test]
fn the_demo_plan_is_pool_against_thread_per_connection_in_about_2_minutes() {
    let out = Command::new(BIN).args(["demo", "--print-plan"]).output().expect("demo");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let plan = perflab::plan::parse_str(&text, "demo.toml").expect("the demo plan is valid");
    let values = |name: &str| -> Vec<String> {
        let (_, v) = plan.matrix.params.iter().find(|(k, _)| k == name).expect(name);
        v.iter().map(|x| x.to_string().trim_matches('"').to_string()).collect()
    };
    assert_eq!(values("model"), ["pool", "thread-per-connection"]);
    assert_eq!(values("size"), ["37", "1000000"]);
    assert_eq!(values("concurrency"), ["2", "5", "10", "20"]);
    assert!(matches!(plan.repetitions, perflab::plan::Repetitions::Fixed(3)));
    let target = plan.points[0].target.as_ref().expect("a target");
    let perflab::util::command::CommandLine::Argv(argv) = &target.command else {
        panic!("argv")
    };
    assert!(argv.windows(2).any(|w| w == ["--workers", "5"]), "{argv:?}");
    assert!(argv.iter().any(|a| a == "serve"));
    let trials = perflab::plan::expand(&plan);
    assert_eq!(trials.len(), 2 * 2 * 4 * 3);
    let p = &plan.phases;
    let measured = (p.baseline + p.warmup + p.load + p.recovery) * trials.len() as u32;
    assert!(measured.as_secs() <= 120, "the demo measures for {measured:?}");
}

#[test]
fn resume_needs_the_same_plan_and_runs_only_what_is_missing() {
    let tmp = tempfile::tempdir().expect("tmp");
    let body = format!("name = \"resume\"\nrepetitions = 2\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n{TINY}");
    let plan = write_plan(tmp.path(), &body);
    let runs = tmp.path().join("runs");
    let out = run(&["run", "--quiet", "--runs-dir", runs.to_str().expect("utf-8")], &plan);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let dir = only_run_dir(&runs);
    let dir_s = dir.to_str().expect("utf-8");
    // Nothing is missing from a complete run: resuming it runs nothing.
    let again = run(&["run", "--quiet", "--resume", dir_s], &plan);
    assert_eq!(again.status.code(), Some(0), "{}", String::from_utf8_lossy(&again.stderr));
    let store = Store::open(&dir).expect("store");
    assert_eq!(store.trial_ids().expect("ids"), [0, 1]);
    assert_eq!(store.run().expect("run").status, RunStatus::Complete);
    drop(store);
    // Another plan cannot continue this run: one line, exit 2, nothing stored.
    let other = write_plan(tmp.path(), &body.replace("repetitions = 2", "repetitions = 3"));
    let out = run(&["run", "--quiet", "--resume", dir_s], &other);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("different plan"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(Store::open(&dir).expect("store").trial_ids().expect("ids"), [0, 1]);
}

#[test]
fn fail_fast_stops_at_the_first_failed_trial() {
    let tmp = tempfile::tempdir().expect("tmp");
    let body = format!("name = \"ff\"\nrepetitions = 3\n[workload]\ntype = \"exec\"\ncommand = [\"false\"]\n{TINY}");
    let plan = write_plan(tmp.path(), &body);
    for (flag, stored, status) in [("--fail-fast", 1, RunStatus::Failed), ("--json", 3, RunStatus::Complete)] {
        let runs = tmp.path().join(format!("runs{flag}"));
        let out = run(&["run", "--quiet", flag, "--runs-dir", runs.to_str().expect("utf-8")], &plan);
        assert_eq!(out.status.code(), Some(1), "a failed trial: exit 1");
        let store = Store::open(only_run_dir(&runs)).expect("store");
        let trials = store.trials().expect("trials");
        assert_eq!(trials.len(), stored, "{flag}");
        assert!(trials
            .iter()
            .all(|t| t.failure.as_ref().is_some_and(|f| f.to_string().contains("exit status 1"))));
        assert_eq!(store.run().expect("run").status, status);
    }
}
