//! What the runs of a report have to show: `perflab compare` of runs that share nothing to compare
//! is refused (exit code 2, one line, nothing written); runs that share only part (another
//! workload, no point in common) are compared with a warning in the summary, on the terminal and
//! in the report; a run that holds no trial (or no trial that succeeded) is never said to pass the
//! validity checks.

use perflab::store::{RunInfo, RunStatus, Store};
use perflab::workload::{Better, Metric, WorkloadResult};
use std::path::Path;
use std::process::{Command, Output};

use crate::report_common::run_of_results;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

/// Three trials' results with these metrics, `base` apart from one run to the other.
fn results(metrics: &[(&str, &str, Better)], base: f64) -> Vec<WorkloadResult> {
    (0..3)
        .map(|i| WorkloadResult {
            metrics: metrics
                .iter()
                .map(|(name, unit, better)| Metric::new(*name, *unit, base + i as f64, *better))
                .collect(),
            ..Default::default()
        })
        .collect()
}

const HTTP: &[(&str, &str, Better)] = &[
    ("requests_per_s", "req/s", Better::Higher),
    ("latency_mean_ms", "ms", Better::Lower),
];
const SLEEP: &[(&str, &str, Better)] = &[("wall_time_s", "s", Better::Lower), ("exit_status", "", Better::Neither)];
const AB: &[(&str, &str, Better)] = &[
    ("requests_per_s", "req/s", Better::Higher),
    ("time_per_request_ms", "ms", Better::Lower),
];

fn compare(a: &Path, b: &Path, out: &Path) -> Output {
    Command::new(BIN)
        .arg("compare")
        .arg(a)
        .arg(b)
        .arg("--out")
        .arg(out)
        .output()
        .expect("compare")
}

fn refused(o: &Output, want: &str, out: &Path) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(want), "want {want}: {err}");
    assert!(!out.exists(), "nothing is written for a refused comparison");
}

/// The summary printed and the report's Markdown both carry `warning`.
fn warned(o: &Output, out: &Path, warning: &str) {
    let printed = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{printed}{}", String::from_utf8_lossy(&o.stderr));
    assert!(printed.contains(warning), "on the terminal: {warning}\n{printed}");
    let md = std::fs::read_to_string(out.join("report.md")).expect("md");
    assert!(md.contains(warning), "in the report: {warning}");
}

#[test]
fn runs_that_share_no_metric_or_no_point_with_nothing_compared_are_refused() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (http, sleep) = (tmp.path().join("http"), tmp.path().join("sleep"));
    run_of_results(&http, "web", "http", vec![("", "{}", results(HTTP, 100.0))]);
    run_of_results(&sleep, "nap", "exec", vec![("", "{}", results(SLEEP, 1.0))]);
    let out = tmp.path().join("out");
    refused(&compare(&http, &sleep, &out), "share no metric", &out);
    refused(&compare(&http, &sleep, &out), "nothing to compare", &out);

    // The same metrics at different points of a swept parameter: no point both ran.
    let (c1, c8) = (tmp.path().join("c1"), tmp.path().join("c8"));
    run_of_results(&c1, "web", "http", vec![("c=1", r#"{"c":1}"#, results(HTTP, 100.0))]);
    run_of_results(&c8, "web", "http", vec![("c=8", r#"{"c":8}"#, results(HTTP, 200.0))]);
    let o = compare(&c1, &c8, &out);
    refused(&o, "share no point", &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("c=1") && err.contains("c=8") && err.contains("nothing to compare"),
        "{err}"
    );

    // A run without a trial.
    let empty = tmp.path().join("empty");
    no_trial_run(&empty);
    refused(&compare(&http, &empty, &out), "holds no trial", &out);
}

#[test]
fn runs_of_different_workloads_or_without_a_common_point_are_compared_with_a_warning() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (http, ab) = (tmp.path().join("http"), tmp.path().join("ab"));
    run_of_results(&http, "web", "http", vec![("", "{}", results(HTTP, 100.0))]);
    run_of_results(&ab, "web-ab", "exec", vec![("", "{}", results(AB, 150.0))]);
    let out = tmp.path().join("out1");
    let o = compare(&http, &ab, &out);
    warned(
        &o,
        &out,
        "ran exec: different workloads, of which only the 1 metric(s) both measured are compared (requests_per_s)",
    );
    let printed = String::from_utf8_lossy(&o.stdout);
    assert!(printed.contains("requests_per_s"), "the shared metric is compared: {printed}");

    // One run set a parameter the other did not: no point in common, but a comparison.
    let (plain, tuned) = (tmp.path().join("plain"), tmp.path().join("tuned"));
    run_of_results(&plain, "web", "http", vec![("", "{}", results(HTTP, 100.0))]);
    run_of_results(
        &tuned,
        "web",
        "http",
        vec![("mode=fast", r#"{"mode":"fast"}"#, results(HTTP, 150.0))],
    );
    let out = tmp.path().join("out2");
    let o = compare(&plain, &tuned, &out);
    warned(&o, &out, "share no point");
    warned(&o, &out, "each comparison pairs points whose parameters differ");

    // Runs of one workload with the same points: no warning of ours.
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    run_of_results(&a, "web", "http", vec![("", "{}", results(HTTP, 100.0))]);
    run_of_results(&b, "web", "http", vec![("", "{}", results(HTTP, 130.0))]);
    let out = tmp.path().join("out3");
    let o = compare(&a, &b, &out);
    let printed = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{printed}");
    for w in ["share no point", "different workloads", "measured by one of the runs only"] {
        assert!(!printed.contains(w), "{w}: {printed}");
    }
}

/// A run that was interrupted before its first trial ended: its run and points, no trial.
fn no_trial_run(dir: &Path) {
    let mut s = Store::create(dir).expect("store");
    s.write_run(&RunInfo {
        plan_name: "web".into(),
        plan_file: "web.toml".into(),
        plan_source: String::new(),
        seed: 1,
        started_unix: 1_700_000_000.0,
        planned_trials: 3,
    })
    .expect("run");
    s.write_point(0, "", "{}", 0, None).expect("point");
    s.finish_run(RunStatus::Interrupted, 1_700_000_002.0).expect("finish");
}

#[test]
fn a_run_with_no_trial_or_none_that_succeeded_is_never_said_to_be_valid() {
    let tmp = tempfile::tempdir().expect("tmp");
    let empty = tmp.path().join("empty");
    no_trial_run(&empty);
    let out = tmp.path().join("out");
    let o = Command::new(BIN)
        .arg("report")
        .arg(&empty)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("report");
    let printed = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{printed}{}", String::from_utf8_lossy(&o.stderr));
    for text in [printed.to_string(), std::fs::read_to_string(out.join("report.md")).expect("md")] {
        assert!(!text.contains("Trust: no validity warning"), "{text}");
        assert!(
            text.contains("no trial finished in run empty (status interrupted, 3 planned): nothing was measured"),
            "{text}"
        );
    }
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).expect("json")).expect("JSON");
    let warnings = json["overview"]["warnings"].as_array().expect("warnings");
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().is_some_and(|w| w.starts_with("no trial finished"))),
        "{warnings:?}"
    );
    assert!(Store::open(&empty).is_ok(), "a run with no trial is not a damaged store");

    // Every trial failed: no figure either.
    let failed = tmp.path().join("failed");
    no_trial_run(&failed);
    let mut s = Store::open(&failed).expect("store");
    s.write_trial(&perflab::store::TrialRecord {
        info: perflab::model::TrialInfo {
            id: 0,
            point: 0,
            repetition: 1,
            params_json: "{}".into(),
            workload: "http".into(),
            failure: Some(perflab::store::TrialFailure::Workload("connection refused".into())),
            started_unix: 1_700_000_000.0,
            ended_unix: 1_700_000_001.0,
            limit_mechanism: None,
            limit_proof: None,
            stdout_tail: None,
            stderr_tail: None,
            phases: vec![],
        },
        result: None,
        samples: vec![],
        probes: vec![],
        profiles: vec![],
    })
    .expect("trial");
    drop(s);
    let o = Command::new(BIN)
        .arg("report")
        .arg(&failed)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("report");
    let printed = String::from_utf8_lossy(&o.stdout);
    assert!(!printed.contains("Trust: no validity warning"), "{printed}");
    assert!(printed.contains("no trial succeeded in run failed (1 failed)"), "{printed}");
}
