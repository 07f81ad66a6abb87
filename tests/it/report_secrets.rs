//! The report of a run whose plan had secrets: a store written as the runner writes it (the plan's
//! redacted copy, its points as shown, its redactor), with the secret also in a failure, an error
//! class and raw output; `perflab report` then writes no file holding it, and the points fed by the
//! secret stay apart as `auth=[redacted-1]` and `auth=[redacted-2]`.

use perflab::model::{Phase, PhaseSpan, TrialInfo};
use perflab::store::{RunInfo, RunStatus, Store, TrialFailure, TrialRecord};
use perflab::workload::result::latency_histogram;
use perflab::workload::{Better, Metric, NamedHistogram, WorkloadResult};
use std::process::Command;

use crate::common::files_under;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");
const SECRET: &str = "rptS3cretT0ken";

fn result(rps: f64, errors: Vec<(String, u64)>, raw: Vec<String>) -> WorkloadResult {
    let mut h = latency_histogram();
    for v in 1..=500u64 {
        h.record(v * 100).expect("record");
    }
    WorkloadResult {
        metrics: vec![
            Metric::new("requests_per_s", "req/s", rps, Better::Higher),
            Metric::new("latency_mean_ms", "ms", 1000.0 / rps, Better::Lower),
        ],
        histograms: vec![NamedHistogram {
            name: "latency".into(),
            hist: h,
        }],
        series: vec![],
        errors,
        raw,
        failure: None,
    }
}

#[test]
fn points_fed_by_a_secret_are_reported_apart_and_no_report_file_holds_it() {
    let plan_text = format!(
        "name = \"rpt\"\n[workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:1/\"\nconnections = \"${{concurrency}}\"\n\
         headers = {{ Authorization = \"Bearer ${{auth}}\" }}\n[matrix]\nauth = [\"{SECRET}-a\", \"{SECRET}-b\"]\n\
         concurrency = [1, 2, 4]\n"
    );
    let plan = perflab::plan::parse_str(&plan_text, "rpt.toml").expect("plan");
    let tmp = tempfile::tempdir().expect("tmp");
    let run = tmp.path().join("run");
    let mut s = Store::create(&run).expect("store");
    s.set_redactor(plan.secrets.redactor().clone());
    s.write_run(&RunInfo {
        plan_name: plan.name.clone(),
        plan_file: "rpt.toml".into(),
        plan_source: plan.secrets.redacted_source().to_string(),
        seed: 1,
        started_unix: 1_700_000_000.0,
        planned_trials: 19,
    })
    .expect("run");
    let mut id = 0;
    for p in &plan.points {
        s.write_point(p.id, &p.label, &p.params_json(), 3, Some("fixed N = 3"))
            .expect("point");
        let conc = p.params.iter().find(|(k, _)| k == "concurrency").and_then(|(_, v)| v.as_integer());
        for rep in 1..=3 {
            let leaky = vec![(format!("401 for Bearer {SECRET}-a"), 1)];
            s.write_trial(&TrialRecord {
                info: TrialInfo {
                    id,
                    point: p.id,
                    repetition: rep,
                    params_json: p.params_json(),
                    workload: "http".into(),
                    failure: None,
                    started_unix: 1_700_000_000.0 + id as f64,
                    ended_unix: 1_700_000_000.5 + id as f64,
                    limit_mechanism: None,
                    limit_proof: None,
                    stdout_tail: Some(format!("token {SECRET}-b")),
                    stderr_tail: None,
                    phases: vec![PhaseSpan::new(Phase::Load, 0.0, 0.5)],
                },
                result: Some(result(
                    100.0 * conc.unwrap_or(1) as f64 + rep as f64,
                    leaky,
                    vec![format!("sent {SECRET}-a")],
                )),
                samples: vec![],
                probes: vec![],
                profiles: vec![],
            })
            .expect("trial");
            id += 1;
        }
    }
    s.write_trial(&TrialRecord {
        info: TrialInfo {
            id,
            point: 0,
            repetition: 4,
            params_json: plan.points[0].params_json(),
            workload: "http".into(),
            failure: Some(TrialFailure::Workload(format!("rejected Bearer {SECRET}-a"))),
            started_unix: 1_700_000_100.0,
            ended_unix: 1_700_000_101.0,
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
    .expect("failed trial");
    s.finish_run(RunStatus::Complete, 1_700_000_200.0).expect("finish");
    drop(s);

    let out = tmp.path().join("report");
    let o = Command::new(BIN)
        .arg("report")
        .arg(&run)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("report");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let files = files_under(&out);
    for ext in [".md", ".html", ".json", ".csv", ".svg"] {
        assert!(files.iter().any(|(n, _)| n.ends_with(ext)), "a {ext} file is written");
    }
    for (name, bytes) in files.iter().chain(&files_under(&run)) {
        assert!(
            !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
            "{name} holds the secret"
        );
    }
    let md = std::fs::read_to_string(out.join("report.md")).expect("md");
    assert!(
        md.contains("auth=[redacted-1] concurrency=1") && md.contains("auth=[redacted-2] concurrency=4"),
        "{md}"
    );
    let kept = Store::open(&run).and_then(|s| s.run()).expect("stored run").plan_source;
    assert!(toml::from_str::<toml::Table>(&kept).is_ok(), "{kept}");
}
