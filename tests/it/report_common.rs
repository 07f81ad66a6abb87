//! Shared fixture for the report tests: a synthetic run written through the store API (no load).

use perflab::model::{Phase, PhaseSpan, TrialInfo};
use perflab::store::{RunInfo, RunStatus, Store, TaggedSample, TrialFailure, TrialRecord};
use perflab::workload::result::latency_histogram;
use perflab::workload::{Better, Metric, NamedHistogram, WorkloadResult};
use std::path::Path;

pub const XSS: &str = "<script>alert(1)</script>";
pub const SECRET: &str = "s3cretT0ken";

/// Deterministic pseudo-noise in [-1, 1).
fn noise(seed: u64) -> f64 {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51afd7ed558ccd);
    x ^= x >> 33;
    (x % 2000) as f64 / 1000.0 - 1.0
}

/// A run of plan `<script>…` with variants a and b at concurrency 1, 4, 16, three repetitions
/// each; variant b is 20 % faster; one extra trial failed with a credential in its message.
pub fn synthetic_run(dir: &Path) {
    let mut s = Store::create(dir).unwrap();
    s.write_run(&RunInfo {
        plan_name: XSS.into(),
        plan_file: "xss.toml".into(),
        plan_source: format!("headers = [\"Authorization: Bearer {SECRET}\"]"),
        seed: 42,
        started_unix: 1_700_000_000.0,
        planned_trials: 19,
    })
    .unwrap();
    let mut id = 0;
    let mut point = 0;
    for variant in ["a", "b"] {
        for conc in [1u32, 4, 16] {
            let label = format!("variant={variant} concurrency={conc}");
            let params = format!(r#"{{"variant":"{variant}","concurrency":{conc}}}"#);
            s.write_point(point, &label, &params, 3, Some("fixed N = 3")).unwrap();
            for rep in 0..3u32 {
                let speed = if variant == "b" { 1.2 } else { 1.0 };
                let ideal = 1000.0 * speed * (conc as f64).min(4.0);
                let rps = ideal * (1.0 + 0.02 * noise(id as u64));
                let mut h = latency_histogram();
                for i in 0..2000u64 {
                    let base = 1000.0 * conc as f64 / speed;
                    h.record((base * (1.0 + (i % 100) as f64 / 100.0)) as u64).unwrap();
                }
                let busy = 20.0 + 20.0 * (conc as f64).min(4.0) + noise(id as u64 + 7);
                let mut samples = Vec::new();
                for t in 0..20 {
                    let (phase, cpu) = match t {
                        0..=3 => ("baseline", 10.0),
                        4..=15 => ("load", busy),
                        _ => ("recovery", if t >= 17 { 10.5 } else { 40.0 }),
                    };
                    samples.push(TaggedSample {
                        phase: phase.into(),
                        t_s: t as f64 + 0.5,
                        unix_s: 1_700_000_000.0 + t as f64,
                        values: vec![
                            ("cpu_busy_pct".into(), cpu),
                            ("mem_used_mb".into(), 1000.0 + cpu),
                            ("procs_running".into(), cpu / 20.0),
                            ("proc_target_cpu_pct".into(), cpu * 1.5),
                            ("proc_target_rss_mb".into(), 50.0),
                            ("net_lo_rx_mbitps".into(), cpu * 2.0),
                        ],
                    });
                }
                let errors = if conc == 16 { vec![("timeout".to_string(), 3)] } else { vec![] };
                s.write_trial(&TrialRecord {
                    info: TrialInfo {
                        id,
                        point,
                        repetition: rep + 1,
                        params_json: params.clone(),
                        workload: "http".into(),
                        failure: None,
                        started_unix: 1_700_000_000.0 + 30.0 * id as f64,
                        ended_unix: 1_700_000_020.0 + 30.0 * id as f64,
                        limit_mechanism: Some("affinity".into()),
                        limit_proof: Some("Cpus_allowed_list: 0-1".into()),
                        stdout_tail: None,
                        stderr_tail: None,
                        phases: vec![
                            PhaseSpan::new(Phase::Baseline, 0.0, 4.0),
                            PhaseSpan::new(Phase::Load, 4.0, 16.0),
                            PhaseSpan::new(Phase::Recovery, 16.0, 20.0),
                        ],
                    },
                    result: Some(WorkloadResult {
                        metrics: vec![
                            Metric::new("requests_per_s", "req/s", rps, Better::Higher),
                            Metric::new("latency_mean_ms", "ms", 1.5 * conc as f64 / speed, Better::Lower),
                        ],
                        histograms: vec![NamedHistogram {
                            name: "latency".into(),
                            hist: h,
                        }],
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
                id += 1;
            }
            point += 1;
        }
    }
    // A failed trial at the last point, whose message carries a credential and markup.
    s.write_trial(&TrialRecord {
        info: TrialInfo {
            id,
            point: point - 1,
            repetition: 4,
            params_json: r#"{"variant":"b","concurrency":16}"#.into(),
            workload: "http".into(),
            failure: Some(TrialFailure::Workload(format!(
                "target exited: <b>boom</b> Authorization: Bearer {SECRET}"
            ))),
            started_unix: 1_700_001_000.0,
            ended_unix: 1_700_001_001.0,
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
    .unwrap();
    s.finish_run(RunStatus::Complete, 1_700_002_000.0).unwrap();
}

/// Multiply one metric of every trial of a stored run by `factor` (a second run that differs).
pub fn scale_metric(dir: &Path, metric: &str, factor: f64) {
    let db = rusqlite::Connection::open(dir.join(perflab::store::DB_FILE)).unwrap();
    db.execute(
        "UPDATE metric SET value = value * ?1 WHERE name = ?2",
        rusqlite::params![factor, metric],
    )
    .unwrap();
}

/// Every file under `dir`, sorted, with its bytes.
pub fn all_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.strip_prefix(dir).unwrap().display().to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// A store of plan `name` with one point per (label, params JSON), each with the given trials'
/// results (all ok), written through the store API. No monitor samples, no phases.
pub fn run_of_results(dir: &Path, name: &str, workload: &str, points: Vec<(&str, &str, Vec<WorkloadResult>)>) {
    run_of_results_with_plan(dir, name, "", workload, points)
}

/// [`run_of_results`] with the plan's text (its `[report]` section is read back by the report).
pub fn run_of_results_with_plan(dir: &Path, name: &str, plan: &str, workload: &str, points: Vec<(&str, &str, Vec<WorkloadResult>)>) {
    let mut s = Store::create(dir).unwrap();
    let trials: usize = points.iter().map(|p| p.2.len()).sum();
    s.write_run(&RunInfo {
        plan_name: name.into(),
        plan_file: format!("{name}.toml"),
        plan_source: plan.into(),
        seed: 1,
        started_unix: 1_700_000_000.0,
        planned_trials: trials,
    })
    .unwrap();
    let mut id = 0;
    for (point, (label, params, results)) in points.into_iter().enumerate() {
        s.write_point(point, label, params, results.len() as u32, Some("fixed N")).unwrap();
        for (rep, result) in results.into_iter().enumerate() {
            s.write_trial(&TrialRecord {
                info: TrialInfo {
                    id,
                    point,
                    repetition: rep as u32 + 1,
                    params_json: params.into(),
                    workload: workload.into(),
                    failure: None,
                    started_unix: 1_700_000_000.0 + 10.0 * id as f64,
                    ended_unix: 1_700_000_005.0 + 10.0 * id as f64,
                    limit_mechanism: None,
                    limit_proof: None,
                    stdout_tail: None,
                    stderr_tail: None,
                    phases: vec![],
                },
                result: Some(result),
                samples: vec![],
                probes: vec![],
                profiles: vec![],
            })
            .unwrap();
            id += 1;
        }
    }
    s.finish_run(RunStatus::Complete, 1_700_001_000.0).unwrap();
}
