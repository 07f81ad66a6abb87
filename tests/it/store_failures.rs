//! Why a trial failed comes back from the store as the `TrialFailure` written (its text and, from
//! schema 4, its kind in `trial.failure_kind`); an older store's failures are told from their text,
//! and get their kind when the store is upgraded.

use perflab::model::{Phase, PhaseSpan, TrialFailure, TrialInfo};
use perflab::store::{RunInfo, Store, TrialRecord, DB_FILE, SCHEMA_VERSION};
use std::path::Path;

fn every_failure() -> Vec<TrialFailure> {
    vec![
        TrialFailure::Setup("setup hook `make db` exited with status 2".into()),
        TrialFailure::TargetDidNotStart("no such file: ./server".into()),
        TrialFailure::TargetNotReady("nothing listens on 127.0.0.1:8080 after 10s".into()),
        TrialFailure::TargetDied {
            how: "was killed by SIGKILL".into(),
            phase: Phase::Recovery,
        },
        TrialFailure::KeptTargetExited("exited with status 1".into()),
        TrialFailure::TargetStop("it outlived SIGKILL".into()),
        TrialFailure::MonitorDidNotStart("cannot read /proc/stat".into()),
        TrialFailure::Monitor("the sampler thread panicked".into()),
        TrialFailure::ProbesDidNotStart("tcp: no address for nowhere.invalid".into()),
        TrialFailure::Workload("exit status 3".into()),
        TrialFailure::WorkloadError("setup: cannot create table".into()),
        TrialFailure::Interrupted,
    ]
}

fn kinds_and_texts(dir: &Path) -> Vec<(Option<String>, Option<String>)> {
    let c = rusqlite::Connection::open(dir.join(DB_FILE)).unwrap();
    let mut st = c.prepare("SELECT failure_kind, failure FROM trial ORDER BY id").unwrap();
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

#[test]
fn every_failure_is_read_back_as_the_failure_written() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Store::create(tmp.path()).unwrap();
    let failures = every_failure();
    s.write_run(&RunInfo {
        plan_name: "failures".into(),
        plan_file: "failures.toml".into(),
        plan_source: "name = \"failures\"".into(),
        seed: 1,
        started_unix: 1_800_000_000.0,
        planned_trials: failures.len() + 1,
    })
    .unwrap();
    s.write_point(0, "", "{}", failures.len() as u32 + 1, None).unwrap();
    let outcomes: Vec<Option<TrialFailure>> = failures.iter().cloned().map(Some).chain([None]).collect();
    for (id, failure) in outcomes.iter().enumerate() {
        let info = TrialInfo {
            failure: failure.clone(),
            phases: vec![PhaseSpan::new(Phase::Baseline, 0.0, 1.0), PhaseSpan::new(Phase::Load, 1.0, 2.0)],
            ..TrialInfo::new(id, 0, id as u32 + 1, "{}".into(), "exec".into(), 1_800_000_000.0 + id as f64)
        };
        s.write_trial(&TrialRecord::new(info)).unwrap();
    }
    drop(s);

    let trials = Store::open(tmp.path()).unwrap().trials().unwrap();
    let read: Vec<Option<TrialFailure>> = trials.iter().map(|t| t.failure.clone()).collect();
    assert_eq!(read, outcomes);
    assert!(trials.iter().all(|t| t.phases[1] == PhaseSpan::new(Phase::Load, 1.0, 2.0)));
    // The text is what it always was; the kind is stored beside it.
    let stored = kinds_and_texts(tmp.path());
    for (f, (kind, text)) in outcomes.iter().zip(&stored) {
        assert_eq!(kind.as_deref(), f.as_ref().map(|f| f.kind()));
        assert_eq!(text.as_deref(), f.as_ref().map(|f| f.to_string()).as_deref());
    }
}

#[test]
fn an_older_store_s_failures_are_told_from_their_text_and_kept_by_the_upgrade() {
    let tmp = tempfile::tempdir().unwrap();
    let sql = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/store/v2.sql")).expect("fixture");
    let c = rusqlite::Connection::open(tmp.path().join(DB_FILE)).unwrap();
    c.execute_batch(&sql).expect("load the version 2 store");
    let written = [
        (1, "target not ready: nothing listens on 127.0.0.1:8080 after 10s"),
        (2, "target exited with status 1 during the load phase"),
        (3, "exit status 3"),
    ];
    for (id, text) in written {
        c.execute(
            "UPDATE trial SET status = 'failed', failure = ?1 WHERE id = ?2",
            rusqlite::params![text, id],
        )
        .unwrap();
    }
    drop(c);
    let expected = vec![
        None,
        Some(TrialFailure::TargetNotReady("nothing listens on 127.0.0.1:8080 after 10s".into())),
        Some(TrialFailure::TargetDied {
            how: "exited with status 1".into(),
            phase: Phase::Load,
        }),
        Some(TrialFailure::Workload("exit status 3".into())),
    ];

    let mut store = Store::open(tmp.path()).unwrap();
    assert_eq!(store.schema_version(), 2);
    let read: Vec<_> = store.trials().unwrap().into_iter().map(|t| t.failure.clone()).collect();
    assert_eq!(read, expected, "a version 2 store's failures, told from their text");

    assert_eq!(store.upgrade().unwrap(), 2);
    drop(store);
    let kinds: Vec<Option<String>> = kinds_and_texts(tmp.path()).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        kinds,
        [None, Some("target_not_ready"), Some("target_died"), Some("workload")].map(|k| k.map(String::from))
    );
    let store = Store::open(tmp.path()).unwrap();
    assert_eq!(store.schema_version(), SCHEMA_VERSION);
    let read: Vec<_> = store.trials().unwrap().into_iter().map(|t| t.failure.clone()).collect();
    assert_eq!(read, expected, "the same failures once upgraded");
}
