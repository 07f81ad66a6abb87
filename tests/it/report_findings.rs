//! The report's findings as a sysadmin reads them: an OLTP sweep's own bottleneck (too many
//! connections at the highest thread count, duplicate keys from 4 threads) comes above the generic
//! CPU findings every point of a loaded machine gives, in the findings, the headline and report.md.

use perflab::report::{write, Formats};
use perflab::store::{RunInfo, RunStatus, Store, TaggedSample, TrialRecord};
use perflab::workload::{Better, Metric, WorkloadResult};
use std::path::Path;

/// An oltp run at 1, 4, 16 and 64 threads on a machine whose CPU is saturated at every point (a
/// run queue of 40), with duplicate keys from 4 threads on and too many connections at 64.
fn oltp_run(dir: &Path) {
    let mut s = Store::create(dir).unwrap();
    let threads = [1u32, 4, 16, 64];
    s.write_run(&RunInfo {
        plan_name: "oltp-threads".into(),
        plan_file: "oltp.toml".into(),
        plan_source: "[report]\nx = \"threads\"\n".into(),
        seed: 1,
        started_unix: 1_700_000_000.0,
        planned_trials: threads.len(),
    })
    .unwrap();
    for (id, t) in threads.into_iter().enumerate() {
        let params = format!(r#"{{"threads":{t}}}"#);
        s.write_point(id, &format!("threads={t}"), &params, 1, Some("fixed N = 1")).unwrap();
        let samples = (0..12)
            .map(|i| TaggedSample {
                phase: if i < 4 { "baseline" } else { "load" }.into(),
                t_s: i as f64,
                unix_s: 1_700_000_000.0 + i as f64,
                values: vec![
                    ("cpu_busy_pct".into(), if i < 4 { 5.0 } else { 99.0 }),
                    ("procs_running".into(), if i < 4 { 1.0 } else { 40.0 }),
                ],
            })
            .collect();
        let dup = if t >= 4 { 2.0 } else { 0.0 };
        let conn = if t == 64 { 5.0 } else { 0.0 };
        let mut errors = Vec::new();
        if conn > 0.0 {
            errors.push(("too_many_connections (first: sorry, too many clients already)".to_string(), 5));
        }
        if dup > 0.0 {
            errors.push((
                "duplicate_key (first: duplicate key value violates unique constraint)".to_string(),
                2,
            ));
        }
        s.write_trial(&TrialRecord {
            info: perflab::model::TrialInfo {
                id,
                point: id,
                repetition: 1,
                params_json: params,
                workload: "oltp".into(),
                failure: None,
                started_unix: 1_700_000_000.0 + 20.0 * id as f64,
                ended_unix: 1_700_000_012.0 + 20.0 * id as f64,
                limit_mechanism: None,
                limit_proof: None,
                stdout_tail: None,
                stderr_tail: None,
                phases: vec![
                    perflab::model::PhaseSpan::new(perflab::model::Phase::Baseline, 0.0, 4.0),
                    perflab::model::PhaseSpan::new(perflab::model::Phase::Load, 4.0, 12.0),
                ],
            },
            result: Some(WorkloadResult {
                metrics: vec![
                    Metric::new("transactions_per_s", "tx/s", 100.0 * (t as f64).min(4.0), Better::Higher),
                    Metric::new("errors_duplicate_key", "count", dup, Better::Lower),
                    Metric::new("errors_too_many_connections", "count", conn, Better::Lower),
                ],
                histograms: vec![],
                series: vec![],
                errors,
                raw: vec![],
                failure: None,
            }),
            samples,
            probes: vec![],
            profiles: vec![],
        })
        .unwrap();
    }
    s.finish_run(RunStatus::Complete, 1_700_001_000.0).unwrap();
}

#[test]
fn an_oltp_sweeps_own_errors_come_above_generic_cpu_findings() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    oltp_run(&run);
    let out = tmp.path().join("out");
    write(&[&run], &out, Formats::all(), false).unwrap();
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let rules: Vec<String> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect();
    let first_cpu = rules.iter().position(|r| r == "R1").expect("the CPU is saturated at every point");
    let errors: Vec<usize> = rules
        .iter()
        .enumerate()
        .filter(|(_, r)| r.starts_with('E'))
        .map(|(i, _)| i)
        .collect();
    assert!(errors.len() >= 2, "too many connections and duplicate keys: {rules:?}");
    assert!(errors.iter().all(|&i| i < first_cpu), "the errors come first: {rules:?}");
    // The headline's first lines are the errors, not the CPU.
    let headline: Vec<&str> = json["overview"]["headline"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .filter(|l| l.starts_with('E') || l.starts_with('R'))
        .collect();
    assert!(headline.len() >= 2, "{headline:?}");
    assert!(
        headline[0].contains("errors appear from threads") && headline[1].contains("errors appear from threads"),
        "{headline:?}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let at = |needle: &str| md.find(needle).unwrap_or_else(|| panic!("report.md lacks {needle:?}:\n{md}"));
    assert!(at("\nE2 too_many_connections errors appear from threads = 64") < at("\nR1 CPU saturated ("));
    assert!(at("\nE2 duplicate_key errors appear from threads = 4") < at("\nR1 CPU saturated ("));
}
