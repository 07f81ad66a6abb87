//! The live feed: a short plan's events, read back from its store, equal the stored trials'
//! figures (each trial's per-second responses sum to its request count; its last phase event and
//! the phases its end carries are the stored phase spans; its probes' last figures are its stored
//! probe rows; the thresholds as they stand after its last trial are the stored verdicts); once a
//! trial is stored its seconds are one packed row, read back as they were
//! written; a writer held up by a locked store never holds the publisher back, and says how many
//! events it dropped.

use perflab::live::{Event, Feed};
use perflab::store::{EventRow, Store};
use std::process::Command;

use crate::common::{free_port, only_run_dir, write_plan};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

fn plan(port: u16) -> String {
    let probe = format!("\n[[probes]]\nkind = \"tcp\"\nname = \"connect\"\ntarget = \"127.0.0.1:{port}\"\ninterval = \"100ms\"\n");
    // Two thresholds: one the point holds, one it breaks (no loopback answers in a microsecond).
    let thresholds = "repetitions = 2\nthresholds = [\"requests_per_s > 1\", \"latency_p99_ms < 0.001\"]\n";
    http_plan("live-feed", port, 400, ["300ms", "300ms", "250ms"]).replace("repetitions = 2\n", thresholds) + &probe
}

/// A 2-repetition open-model http plan against `perflab serve` (a pool of 2 workers) on `port`,
/// 2.5 s of load at `rate`; `edges` are its baseline, recovery and sampling interval.
pub fn http_plan(name: &str, port: u16, rate: u32, edges: [&str; 3]) -> String {
    let [baseline, recovery, interval] = edges;
    format!(
        r#"name = "{name}"
repetitions = 2

[target]
command = ["{BIN}", "serve", "--port", "{port}", "--model", "pool", "--workers", "2"]
ready = {{ tcp = "127.0.0.1:{port}", timeout = "10s" }}
stop = {{ signal = "SIGTERM", grace = "3s" }}

[workload]
type = "http"
url = "http://127.0.0.1:{port}/bytes/100"
connections = 2
rate = {rate}

[phases]
baseline = "{baseline}"
warmup = "200ms"
load = "2500ms"
recovery = "{recovery}"
interval = "{interval}"
"#
    )
}

/// Equal to within what reading a number back from JSON may move it.
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

fn parse(rows: &[EventRow]) -> Vec<Event> {
    rows.iter()
        .map(|r| {
            let e = Event::from_stored(&r.kind, r.trial, &r.body).unwrap_or_else(|e| panic!("event {}: {e}: {}", r.seq, r.body));
            assert_eq!(e.kind(), r.kind, "event {}'s kind column", r.seq);
            assert_eq!(e.trial().map(|t| t as i64), r.trial, "event {}'s trial column", r.seq);
            e
        })
        .collect()
}

#[test]
fn a_runs_events_read_back_from_its_store_equal_its_stored_trials() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(tmp.path(), &plan(free_port()));
    let runs = tmp.path().join("runs");
    let out = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("run perflab");
    // A threshold broke: exit code 1.
    assert_eq!(out.status.code(), Some(1), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let dir = only_run_dir(&runs);
    let store = Store::open(&dir).expect("open");
    let rows = store.events(0).expect("events");
    assert!(rows.windows(2).all(|w| w[0].seq < w[1].seq), "in order of publication");
    let events = parse(&rows);
    let trials = store.trials().expect("trials");
    assert_eq!(trials.len(), 2);

    match events.first() {
        Some(Event::RunStart { trials: planned, plan, .. }) => {
            assert_eq!(plan, "live-feed");
            let ids: Vec<usize> = planned.iter().map(|t| t.trial).collect();
            assert_eq!(ids, trials.iter().map(|t| t.id).collect::<Vec<_>>(), "the plan's trials");
        }
        other => panic!("the first event is the run's start: {other:?}"),
    }
    match events.last() {
        Some(Event::RunEnd {
            status,
            trials_ok,
            trials_failed,
            ..
        }) => assert_eq!((status.as_str(), *trials_ok, *trials_failed), ("complete", 2, 0)),
        other => panic!("the last event is the run's end: {other:?}"),
    }
    assert!(!events.iter().any(|e| matches!(e, Event::Skipped { .. })), "nothing skipped");
    thresholds_as_they_stand(&events, &store);
    // The pages a packed trial's seconds took are given back: no free pages in the store, and
    // the log is a small part of it.
    let db = rusqlite::Connection::open(dir.join(perflab::store::DB_FILE)).expect("open");
    let free: i64 = db.query_row("PRAGMA freelist_count", [], |r| r.get(0)).expect("freelist");
    assert_eq!(free, 0, "free pages in the store");
    // Each stored trial's seconds are one packed row (read back above as the seconds they were).
    let count = |kind: &str| -> i64 {
        db.query_row("SELECT COUNT(*) FROM event WHERE kind = ?1", [kind], |r| r.get(0))
            .expect("count")
    };
    assert_eq!((count("second"), count("seconds"), count("probes")), (0, 2, 2), "packed");
    let log: i64 = db
        .query_row("SELECT SUM(LENGTH(body) + LENGTH(kind) + 24) FROM event", [], |r| r.get(0))
        .expect("log size");
    let file = std::fs::metadata(dir.join(perflab::store::DB_FILE)).expect("size").len();
    assert!((log as f64) < 0.05 * file as f64, "the log: {log} B of the store's {file} B");

    for t in &trials {
        let mine: Vec<&Event> = events.iter().filter(|e| e.trial() == Some(t.id)).collect();
        assert!(
            matches!(mine.first(), Some(Event::TrialStart { .. })),
            "trial {} starts first",
            t.id
        );
        // Its seconds: the load generator's own series, summing to the trial's request count.
        let seconds: Vec<(f64, u64)> = mine
            .iter()
            .filter_map(|e| match e {
                Event::Second { t_s, responses, .. } => Some((*t_s, *responses)),
                _ => None,
            })
            .collect();
        assert!(seconds.len() >= 2, "trial {}: {} seconds", t.id, seconds.len());
        let sum: u64 = seconds.iter().map(|s| s.1).sum();
        let requests = t.metric("requests").expect("requests");
        assert!(requests > 0.0);
        assert_eq!(sum as f64, requests, "trial {}: the seconds' responses sum to its requests", t.id);
        // Its phases: the events in order, the last one the stored last span's start.
        let phases: Vec<(&str, f64)> = mine
            .iter()
            .filter_map(|e| match e {
                Event::Phase { phase, t_s, .. } => Some((phase.as_str(), *t_s)),
                _ => None,
            })
            .collect();
        let names: Vec<&str> = phases.iter().map(|p| p.0).collect();
        assert_eq!(names, ["setup", "baseline", "warmup", "load", "recovery"], "trial {}", t.id);
        let last = t.phases.last().expect("stored phases");
        let (name, t_s) = *phases.last().expect("phases");
        assert_eq!(name, last.phase.name());
        assert!(same(t_s, last.start_s), "trial {}: {t_s} vs {}", t.id, last.start_s);
        match mine.last() {
            Some(Event::TrialEnd { ok, phases, figures, .. }) => {
                assert!(*ok);
                // (serde_json reads a number back to within an ulp or so of the one written.)
                let names: Vec<&str> = phases.iter().map(|p| p.0.as_str()).collect();
                let stored: Vec<&str> = t.phases.iter().map(|p| p.phase.name()).collect();
                assert_eq!(names, stored, "trial {}'s phases as stored", t.id);
                for (p, s) in phases.iter().zip(&t.phases) {
                    assert!(same(p.1, s.start_s) && same(p.2, s.end_s), "trial {}: {p:?} vs {s:?}", t.id);
                }
                for f in figures {
                    let stored = t.metric(&f.name).expect("stored");
                    assert!(same(f.value, stored), "trial {}'s {}: {} vs {stored}", t.id, f.name, f.value);
                }
                assert!(figures.iter().any(|f| f.name == "requests_per_s"), "{figures:?}");
            }
            other => panic!("trial {} ends with its end: {other:?}", t.id),
        }
        // Its probes' last figures: its stored probe rows.
        let probes = mine.iter().rev().find_map(|e| match e {
            Event::Probes { probes, .. } => Some(probes),
            _ => None,
        });
        let stored = store.probes(t.id).expect("probes");
        let [p] = &probes.expect("the probes' figures")[..] else {
            panic!("one probe: {probes:?}")
        };
        let [rec] = &stored[..] else {
            panic!("one stored probe: {stored:?}")
        };
        let rows = &rec.samples;
        let last = rows.iter().max_by_key(|r| r.seq).expect("samples");
        let lost = rows.iter().filter(|r| r.outcome == "timeout" || r.outcome == "error").count() as u64;
        let failed = rows.iter().filter(|r| r.outcome == "failed").count() as u64;
        assert_eq!((p.name.as_str(), p.kind.as_str()), ("connect", "tcp"));
        assert_eq!((p.n, p.lost, p.failed), (rows.len() as u64, lost, failed), "trial {}", t.id);
        assert!(p.n >= 10, "trial {}: {} samples", t.id, p.n);
        assert_eq!(p.seq, Some(last.seq));
        assert_eq!(
            (p.phase.as_deref(), p.outcome.as_deref()),
            (Some(last.phase.as_str()), Some(last.outcome.as_str()))
        );
        assert_eq!(p.rtt_ms, last.rtt_ms.map(|ms| perflab::live::event::significant(ms, 4)));
        // The monitor's samples stay out of the log; their key figures ride on the seconds.
        assert!(
            mine.iter()
                .any(|e| matches!(e, Event::Second { host: Some(h), .. } if h.cpu_pct.is_some())),
            "trial {}'s seconds carry this machine's CPU",
            t.id
        );
    }
}

/// After each trial's end, each threshold at its point as it stands; after the last, what the
/// run's end stored (the same value, basis and verdict).
fn thresholds_as_they_stand(events: &[Event], store: &Store) {
    let judged: Vec<(usize, &str, Option<f64>, &str, bool)> = events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e {
            Event::Threshold {
                expr,
                point,
                observed,
                basis,
                passed,
            } => {
                assert_eq!(*point, 0, "the plan's only point");
                Some((i, expr.as_str(), *observed, basis.as_str(), *passed))
            }
            _ => None,
        })
        .collect();
    assert_eq!(judged.len(), 4, "two thresholds after each of the two trials: {judged:?}");
    for (i, ..) in &judged {
        assert!(
            matches!(events[i - 1], Event::TrialEnd { .. } | Event::Threshold { .. }),
            "judged once a trial is stored"
        );
    }
    assert!(judged[0].3.ends_with("of 1 trial"), "the first trial alone: {judged:?}");
    let stored = store.thresholds().expect("thresholds");
    assert_eq!(stored.len(), 2);
    for th in &stored {
        let (_, _, observed, basis, passed) = *judged.iter().rev().find(|j| j.1 == th.expr).expect("its event");
        assert_eq!(passed, th.passed, "{}", th.expr);
        assert_eq!(passed, th.expr.starts_with("requests_per_s"), "{}", th.expr);
        let (a, b) = (observed.expect("observed"), th.observed.expect("stored"));
        assert!(same(a, b), "{}: live {a}, stored {b}", th.expr);
        assert_eq!(Some(basis), th.basis.as_deref(), "{}", th.expr);
        assert!(basis.ends_with("of 2 trials"), "{basis}");
    }
    match events.last() {
        Some(Event::RunEnd { thresholds_failed, .. }) => {
            assert!(
                thresholds_failed.len() == 1 && thresholds_failed[0].starts_with("latency_p99_ms < 0.001"),
                "{thresholds_failed:?}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_held_up_writer_never_holds_the_publisher_back_and_says_what_it_dropped() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("run");
    drop(Store::create(&dir).expect("store"));
    // Another connection holds the store's write lock: the feed's writer waits behind it.
    let lock = rusqlite::Connection::open(dir.join(perflab::store::DB_FILE)).expect("open");
    lock.execute_batch("BEGIN IMMEDIATE; INSERT INTO meta (key, value) VALUES ('held', 'yes');")
        .expect("lock");
    let mut feed = Feed::start(&dir, Default::default()).expect("feed");
    let published = 20_000u64;
    for i in 0..published {
        feed.publisher().publish(Event::Phase {
            trial: 0,
            phase: "load".into(),
            t_s: i as f64,
        });
    }
    lock.execute_batch("COMMIT").expect("unlock");
    assert_eq!(feed.close(), None, "the writer went on once the lock was gone");
    // (A store with no run in it: read the log as a view would, without the store's checks.)
    let rows = perflab::store::events::read_after(&lock, 0, usize::MAX >> 1).expect("events");
    let events = parse(&rows);
    let dropped: u64 = events
        .iter()
        .map(|e| match e {
            Event::Skipped { count } => *count,
            _ => 0,
        })
        .sum();
    let kept = events.iter().filter(|e| matches!(e, Event::Phase { .. })).count() as u64;
    assert!(dropped > 0, "the log says it skipped");
    assert!(kept < published, "the queue is bounded: {kept} kept of {published}");
    assert_eq!(kept + dropped, published, "what was kept and what the log says it dropped");
}
