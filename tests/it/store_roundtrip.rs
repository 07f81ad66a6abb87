//! The store keeps every figure it is given, byte for byte where it matters (histograms), and never
//! keeps credentials.

use perflab::model::{Phase, PhaseSpan, TrialInfo};
use perflab::store::{RunInfo, RunStatus, Store, TrialFailure, TrialRecord};
use perflab::workload::result::latency_histogram;
use perflab::workload::{Better, Metric, NamedHistogram, SeriesPoint, WorkloadResult};

fn record(id: usize, point: usize) -> TrialRecord {
    let mut h = latency_histogram();
    for v in [100u64, 200, 300, 40_000] {
        h.record(v).unwrap();
    }
    TrialRecord {
        info: TrialInfo {
            id,
            point,
            repetition: 1,
            params_json: r#"{"concurrency":10,"headers":["Authorization: Bearer s3cret"]}"#.into(),
            workload: "http".into(),
            failure: None,
            started_unix: 1000.0 + id as f64,
            ended_unix: 1010.0 + id as f64,
            limit_mechanism: Some("affinity".into()),
            limit_proof: Some("Cpus_allowed_list: 0".into()),
            stdout_tail: Some("listening".into()),
            stderr_tail: None,
            phases: vec![PhaseSpan::new(Phase::Baseline, 0.0, 2.0), PhaseSpan::new(Phase::Load, 2.0, 8.0)],
        },
        result: Some(WorkloadResult {
            metrics: vec![Metric::new("requests_per_s", "req/s", 1234.5, Better::Higher)],
            histograms: vec![NamedHistogram {
                name: "latency".into(),
                hist: h,
            }],
            series: vec![SeriesPoint {
                t_s: 1.0,
                name: "requests_per_s".into(),
                value: 1200.0,
            }],
            errors: vec![("reset".into(), 2)],
            raw: vec!["Cookie: a=b".into()],
            failure: None,
        }),
        samples: vec![perflab::store::TaggedSample {
            phase: "baseline".into(),
            t_s: 1.0,
            unix_s: 1001.0,
            values: vec![("cpu_busy_pct".into(), 12.5), ("mem_used_mb".into(), 900.0)],
        }],
        probes: vec![],
        profiles: vec![],
    }
}

#[test]
fn a_trial_round_trips_and_credentials_are_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::create(dir.path()).unwrap();
    s.write_run(&RunInfo {
        plan_name: "t".into(),
        plan_file: "t.toml".into(),
        plan_source: "headers = [\"Authorization: Bearer s3cret\"]".into(),
        seed: 7,
        started_unix: 999.0,
        planned_trials: 2,
    })
    .unwrap();
    s.write_point(0, "concurrency=10", "{}", 1, Some("fixed N = 1")).unwrap();
    s.write_trial(&record(0, 0)).unwrap();
    s.finish_run(RunStatus::Complete, 2000.0).unwrap();
    drop(s);

    let s = Store::open(dir.path()).unwrap();
    let run = s.run().unwrap();
    assert_eq!(run.status, RunStatus::Complete);
    assert_eq!(run.seed, 7);
    assert!(!run.plan_source.contains("s3cret"));
    let trials = s.trials().unwrap();
    assert_eq!(trials.len(), 1);
    let t = &trials[0];
    assert!(!t.params_json.contains("s3cret"));
    assert_eq!(t.metric("requests_per_s"), Some(1234.5));
    let h = &t.histograms[0].hist;
    assert_eq!(h.len(), 4);
    assert_eq!(h.value_at_quantile(1.0), h.highest_equivalent(40_000));
    assert_eq!(t.errors, vec![("reset".to_string(), 2)]);
    assert_eq!(t.phases.len(), 2);
    let samples = s.samples(0).unwrap();
    assert_eq!(samples.len(), 1);
    assert_eq!(samples[0].values.len(), 2);
    assert_eq!(s.raw_output(0).unwrap(), vec!["Cookie: [redacted]".to_string()]);

    let out = dir.path().join("csv");
    let files = perflab::store::export::to_csv(&s, &out).unwrap();
    assert!(files.iter().any(|f| f.ends_with("trial.csv")));
    let trial_csv = std::fs::read_to_string(out.join("trial.csv")).unwrap();
    assert_eq!(trial_csv.lines().count(), 2, "header + one trial");
}

#[test]
fn opening_something_else_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = Store::open(dir.path()).err().unwrap();
    assert_eq!(perflab::error::exit_code(&err), 2);
    assert!(err.to_string().contains("not a perflab run directory"));
}

#[test]
fn every_table_exports_to_csv_with_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::create(dir.path()).unwrap();
    s.write_run(&RunInfo {
        plan_name: "t".into(),
        plan_file: "t.toml".into(),
        plan_source: "name = \"t\"".into(),
        seed: 7,
        started_unix: 999.0,
        planned_trials: 2,
    })
    .unwrap();
    s.write_point(0, "concurrency=10", "{}", 2, Some("fixed N = 2")).unwrap();
    // Each trial with an on-CPU profile of its load phase.
    let profile = perflab::model::Profile {
        kind: Some(perflab::model::ProfileKind::OnCpu),
        scope: "process tree of PID 7".into(),
        frequency_hz: Some(49.0),
        window: (2.0, 8.0),
        sampled: Some((2.1, 7.9)),
        stacks: vec![
            perflab::model::FoldedStack {
                stack: "app;main;operator new(unsigned long)".into(),
                samples: 1,
                ns: 20_408_163,
            },
            perflab::model::FoldedStack {
                stack: "app;main;work".into(),
                samples: 3,
                ns: 61_224_489,
            },
        ],
        notes: vec!["perf lost samples: 1 chunk".into()],
    };
    for id in 0..2 {
        let mut r = record(id, 0);
        r.profiles = vec![perflab::store::ProfileRecord {
            host: "local".into(),
            profile: profile.clone(),
        }];
        s.write_trial(&r).unwrap();
    }
    assert_eq!(s.profiles(1).unwrap()[0].profile, profile, "the profile reads back as written");
    s.write_threshold("requests_per_s > 1000", 0, Some(1234.5), "mean of 2 trials", true)
        .unwrap();
    s.finish_run(RunStatus::Complete, 2000.0).unwrap();
    // The event log, written by a run's feed through its own connection.
    let mut log = perflab::store::EventLog::open(s.dir()).unwrap();
    log.append(&[(2000.0, None, "skipped", r#"{"kind":"skipped","count":1}"#.to_string())])
        .unwrap();
    drop(log);
    let out = dir.path().join("csv");
    let files = perflab::store::export::to_csv(&s, &out).unwrap();
    // Two trials of `record`: 2 phases, 1 metric, 1 histogram, 1 series point, 1 sample with 2
    // values (2 sampled metrics in the dictionary, each summarized per trial), 1 error class and 1
    // raw line each.
    let want = [
        ("meta", 1),
        ("run", 1),
        ("point", 1),
        ("trial", 2),
        ("phase", 4),
        ("metric", 2),
        ("histogram", 2),
        ("series", 2),
        ("metric_dict", 2),
        ("sample", 4),
        ("phase_summary", 4),
        ("error", 2),
        ("raw_output", 2),
        ("threshold", 1),
        ("profile", 2),
        ("event", 1),
    ];
    // One CSV per table, and each profile's stacks as folded text.
    assert_eq!(files.len(), want.len() + 2, "{files:?}");
    let folded = std::fs::read_to_string(out.join("profiles/trial-1-local-on_cpu.folded")).unwrap();
    assert_eq!(folded, "app;main;operator new(unsigned long) 1\napp;main;work 3\n");
    for (table, rows) in want {
        let path = out.join(format!("{table}.csv"));
        let mut r = csv::Reader::from_path(&path).unwrap();
        assert!(!r.headers().unwrap().is_empty(), "{table} has a header");
        assert_eq!(r.records().count(), rows, "{table}.csv rows");
    }
    // The histogram column is base64 of the stored bytes, and decodes to the same histogram.
    let mut r = csv::Reader::from_path(out.join("histogram.csv")).unwrap();
    let col = r.headers().unwrap().iter().position(|h| h == "hdr_v2_deflate").unwrap();
    let first = r.records().next().unwrap().unwrap()[col].to_string();
    assert!(first.len() > 20 && first.len().is_multiple_of(4), "{first}");
}

#[test]
fn credentials_are_redacted_in_json_labels_and_error_classes() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::create(dir.path()).unwrap();
    s.write_run(&RunInfo {
        plan_name: "t".into(),
        plan_file: "t.toml".into(),
        plan_source: "[workload]\nheaders = { Authorization = \"Bearer s3cret\" }\n".into(),
        seed: 7,
        started_unix: 999.0,
        planned_trials: 1,
    })
    .unwrap();
    s.write_point(0, "hdr=Cookie: sid=s3cret", r#"{"hdr":"Cookie: sid=s3cret"}"#, 1, None)
        .unwrap();
    let mut rec = record(0, 0);
    rec.params_json = r#"{"Authorization": "Bearer s3cret"}"#.into();
    rec.failure = Some(TrialFailure::Workload("HTTP 401 for -H 'Authorization: Bearer s3cret'".into()));
    if let Some(r) = rec.result.as_mut() {
        r.errors = vec![("set-cookie: s3cret".into(), 1)];
    }
    s.write_trial(&rec).unwrap();
    drop(s);
    let s = Store::open(dir.path()).unwrap();
    let out = dir.path().join("csv");
    perflab::store::export::to_csv(&s, &out).unwrap();
    for e in std::fs::read_dir(&out).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(!text.contains("s3cret"), "{} keeps the credential", p.display());
    }
    assert!(s.points().unwrap()[0].label.contains("[redacted]"));
}

#[test]
fn run_status_is_stored_as_the_same_words_as_ever() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::create(dir.path()).unwrap();
    s.write_run(&RunInfo {
        plan_name: "t".into(),
        plan_file: "t.toml".into(),
        plan_source: "name = \"t\"".into(),
        seed: 1,
        started_unix: 1.0,
        planned_trials: 1,
    })
    .unwrap();
    let db = rusqlite::Connection::open(dir.path().join(perflab::store::DB_FILE)).unwrap();
    let text = || -> String { db.query_row("SELECT status FROM run", [], |r| r.get(0)).unwrap() };
    assert_eq!(text(), "running");
    for (status, word) in [
        (RunStatus::Interrupted, "interrupted"),
        (RunStatus::Failed, "failed"),
        (RunStatus::Complete, "complete"),
    ] {
        s.finish_run(status, 2.0).unwrap();
        assert_eq!(text(), word);
        assert_eq!(s.run().unwrap().status, status);
    }
    s.reopen_run().unwrap();
    assert_eq!(s.run().unwrap().status, RunStatus::Running);
    // A store written before the status was typed holds the same words and reads the same.
    db.execute("UPDATE run SET status = 'interrupted'", []).unwrap();
    assert_eq!(s.run().unwrap().status, RunStatus::Interrupted);
    // A word no perflab writes is an error, not a guess.
    db.execute("UPDATE run SET status = 'paused'", []).unwrap();
    assert!(s.run().is_err());
}
