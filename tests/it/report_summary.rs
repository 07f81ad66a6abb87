//! The summary of a report: a run compared with itself, a busy host and a failed trial, runs of
//! different plans (the demo's own report is judged in `demo.rs`).

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

#[test]
fn a_run_compared_with_itself_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    crate::report_common::synthetic_run(&run);
    let out = tmp.path().join("cmp");
    let paths = perflab::report::write(&[&run, &run], &out, perflab::report::Formats::all(), true).unwrap();
    assert!(paths.summary.contains("one and the same run"), "{}", paths.summary);
}

/// A real run (exec `sh`, short phases) with a busy loop started before it and a point whose
/// command fails: the summary warns of the busy host and gives the failure's reason, on the
/// terminal too, and the failure is printed as it happens.
#[test]
fn a_busy_host_and_a_failed_trial_are_said_in_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("plan.toml");
    std::fs::write(
        &plan,
        "name = \"busy\"\nrepetitions = 1\n[workload]\ntype = \"exec\"\ncommand = [\"sh\", \"-c\", \"sleep 0.3; exit ${code}\"]\n\
         [matrix]\ncode = [0, 7]\n[phases]\nbaseline = \"1s\"\nwarmup = \"0s\"\nload = \"1s\"\nrecovery = \"0s\"\ninterval = \"200ms\"\n",
    )
    .unwrap();
    // The busy loop: the shell itself spins (no child of its own), so killing its PID stops it;
    // the guard kills it on every path out of this test, a panic included, and the loop ends by
    // itself after 20 s (SECONDS is the shell's own clock) if the guard never runs.
    struct Busy(std::process::Child);
    impl Drop for Busy {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let busy = Busy(
        Command::new("bash")
            .args(["-c", "while [ $SECONDS -lt 20 ]; do :; done"])
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    let o = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(tmp.path().join("runs"))
        .arg(&plan)
        .output()
        .unwrap();
    drop(busy);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "a failed trial: {stdout}{stderr}");
    assert!(stderr.contains("✗ trial") && stderr.contains("code=7"), "as it happens: {stderr}");
    assert!(
        stdout.contains("Failed: trial") && stdout.contains("code=7"),
        "at the end: {stdout}"
    );
    assert!(stdout.contains("The host was busy before the load"), "{stdout}");
    let run = std::fs::read_dir(tmp.path().join("runs")).unwrap().next().unwrap().unwrap().path();
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    let summary = &md[md.find("## Summary").unwrap()..md.find("## Run").unwrap()];
    assert!(
        summary.contains("Failed: trial") && summary.contains("The host was busy before the load"),
        "{summary}"
    );
}

/// Runs of two different plans in one report: a section per plan, one summary with an
/// experiments table and one optimization table across them; runs of one plan still pool.
#[test]
fn runs_of_different_plans_make_one_report_with_a_section_each() {
    use perflab::workload::{Better, Metric, WorkloadResult};
    let tmp = tempfile::tempdir().unwrap();
    let result = |rps: f64| WorkloadResult {
        metrics: vec![Metric::new("requests_per_s", "req/s", rps, Better::Higher)],
        ..Default::default()
    };
    let a1 = tmp.path().join("a1");
    let a2 = tmp.path().join("a2");
    let b = tmp.path().join("b");
    for (dir, base) in [(&a1, 100.0), (&a2, 104.0)] {
        crate::report_common::run_of_results_with_plan(
            dir,
            "tuning-a",
            "name = \"tuning-a\"\n[report]\ncompare = \"v\"\nbaseline = \"before\"\nmetrics = [\"requests_per_s\"]\n",
            "http",
            vec![
                (
                    "v=before",
                    r#"{"v":"before"}"#,
                    vec![result(base), result(base + 2.0), result(base + 1.0)],
                ),
                (
                    "v=after",
                    r#"{"v":"after"}"#,
                    vec![result(base * 2.0), result(base * 2.0 + 3.0), result(base * 2.0 + 1.0)],
                ),
            ],
        );
    }
    crate::report_common::run_of_results(
        &b,
        "tuning-b",
        "http",
        vec![
            ("c=1", r#"{"c":1}"#, vec![result(10.0), result(11.0)]),
            ("c=2", r#"{"c":2}"#, vec![result(20.0), result(21.0)]),
        ],
    );
    let out = tmp.path().join("out");
    let paths = perflab::report::write(&[&a1, &b, &a2], &out, perflab::report::Formats::all(), false).unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let summary = &md[md.find("## Summary").unwrap()..md.find("## tuning-a: Summary").expect("a section per plan")];
    assert!(summary.contains("2 experiments in one report"), "{summary}");
    assert!(
        summary.contains("| tuning-a | 2 | 12 ok / 0 failed |"),
        "the two runs of tuning-a pool: {summary}"
    );
    assert!(summary.contains("| tuning-b | 1 | 4 ok / 0 failed |"), "{summary}");
    assert!(summary.contains("| experiment | figure | variant | before | after |"), "{summary}");
    assert!(summary.contains("| tuning-a | requests/s (req/s) | v = after"), "{summary}");
    assert!(md.contains("## tuning-b: Summary"), "{md}");
    assert!(
        paths.summary.contains("2 experiments in one report"),
        "the terminal: {}",
        paths.summary
    );
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let exps = json["experiments"].as_array().unwrap();
    assert_eq!(exps.len(), 2);
    assert_eq!(exps[0]["runs"].as_array().unwrap().len(), 2);
    assert_eq!(json["runs"].as_array().unwrap().len(), 3);
    let csv = std::fs::read_to_string(out.join("report.csv")).unwrap();
    assert!(csv.contains("tuning-b: c=2,requests_per_s"), "{csv}");
}
