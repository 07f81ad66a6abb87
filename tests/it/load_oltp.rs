//! The built-in `oltp` workload on SQLite (nothing installed): prepare loads sysbench's tables with
//! their index; read_write leaves the tables exactly as the statements it committed imply;
//! point_select reads the rows it asks for; errors are classified (busy → deadlock, retried;
//! a unique violation → duplicate_key) and the trial completes; bad input is one line and exit 2.

use perflab::util::Cancel;
use perflab::workload::driver::coordinator::Hooks;
use perflab::workload::oltp::backend::{Database, ErrorClass, Stmt};
use perflab::workload::oltp::config::{self, OltpConfig, Settings};
use perflab::workload::oltp::report::OltpReport;
use perflab::workload::oltp::{engine, prepare};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

fn db_at(dir: &Path) -> (Arc<dyn Database>, rusqlite::Connection) {
    let file = dir.join("t.db");
    let db: Arc<dyn Database> = Arc::from(perflab::workload::oltp::open(&format!("sqlite:{}", file.display())).expect("open"));
    // Create the file in WAL mode first, so that the checking connection sees the workload's writes.
    drop(db.connect().expect("connect"));
    (db, rusqlite::Connection::open(&file).expect("check connection"))
}

fn settings(cfg: OltpConfig) -> Arc<Settings> {
    Arc::new(config::prepare(&cfg).expect("settings"))
}

/// Run `s` for its `transactions` (or `duration`), no warm-up: every call is measured.
fn run(s: &Arc<Settings>, db: &Arc<dyn Database>, duration: Duration) -> OltpReport {
    let hooks = Hooks {
        on_load_start: &mut || {},
        on_tick: &mut |_, _| {},
    };
    engine::run(s, db, Duration::ZERO, duration, &Cancel::new(), hooks).expect("run")
}

fn one(c: &rusqlite::Connection, sql: &str) -> i64 {
    c.query_row(sql, [], |r| r.get(0)).expect(sql)
}

#[test]
fn prepare_loads_the_tables_with_their_index_and_keeps_them() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (db, check) = db_at(tmp.path());
    let s = settings(OltpConfig {
        tables: Some(4),
        table_size: Some(1000),
        ..Default::default()
    });
    let done = prepare::prepare(db.as_ref(), &s, &Cancel::new(), false).expect("prepare");
    assert_eq!((done.loaded, done.rows), (vec![1, 2, 3, 4], 4000));
    for t in 1..=4 {
        assert_eq!(one(&check, &format!("SELECT COUNT(*) FROM sbtest{t}")), 1000);
        assert_eq!(one(&check, &format!("SELECT MIN(id) + MAX(id) FROM sbtest{t}")), 1001);
        assert_eq!(one(&check, &format!("SELECT COUNT(*) FROM sbtest{t} WHERE k < 1 OR k > 1000")), 0);
        assert_eq!(
            one(
                &check,
                &format!("SELECT COUNT(*) FROM sbtest{t} WHERE length(c) <> 119 OR length(pad) <> 59")
            ),
            0
        );
        let index = format!("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sbtest{t}' AND sql LIKE '%(k)%'");
        assert_eq!(one(&check, &index), 1, "the secondary index on k");
    }
    // auto: tables of the right size are kept; one of another size is loaded again.
    check.execute("DELETE FROM sbtest3 WHERE id = 5", []).expect("delete");
    let again = prepare::prepare(db.as_ref(), &s, &Cancel::new(), false).expect("prepare again");
    assert_eq!(again.loaded, vec![3]);
    assert_eq!(one(&check, "SELECT COUNT(*) FROM sbtest3"), 1000);
    prepare::cleanup(db.as_ref(), &s, &Cancel::new()).expect("cleanup");
    assert_eq!(one(&check, "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'sbtest%'"), 0);
    let never = settings(OltpConfig {
        prepare: Some("never".into()),
        ..Default::default()
    });
    let err = format!(
        "{:#}",
        prepare::prepare(db.as_ref(), &never, &Cancel::new(), false).expect_err("missing")
    );
    assert!(err.contains("sbtest1 does not exist"), "{err}");
}

#[test]
fn read_write_leaves_the_tables_as_its_committed_statements_imply() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (db, check) = db_at(tmp.path());
    // One thread: nothing conflicts, so every statement of the mix runs exactly once per transaction.
    let s = settings(OltpConfig {
        tables: Some(2),
        table_size: Some(1000),
        transactions: Some(100),
        ..Default::default()
    });
    prepare::prepare(db.as_ref(), &s, &Cancel::new(), false).expect("prepare");
    let r = run(&s, &db, Duration::from_secs(120));
    assert_eq!(r.stats.transactions, 100);
    assert_eq!(r.stats.queries(), (1400, 400, 200), "sysbench's 14 reads, 4 writes, 2 other");
    assert_eq!(r.stats.errors_total(), 0);
    let total = |c: &rusqlite::Connection| one(c, "SELECT (SELECT COUNT(*) FROM sbtest1) + (SELECT COUNT(*) FROM sbtest2)");
    assert_eq!(total(&check), 2000, "a delete and an insert of the same id keep the count");
    assert_eq!(r.stats.committed(Stmt::Delete).rows, 100, "each delete found its row");

    // Without delete+insert, sum(k) grows by exactly the rows the committed index updates changed,
    // with 4 threads queueing for SQLite's one writer (BEGIN IMMEDIATE: no busy errors).
    let s = settings(OltpConfig {
        tables: Some(2),
        table_size: Some(1000),
        threads: Some(4),
        transactions: Some(200),
        delete_inserts: Some(0),
        ..Default::default()
    });
    let sum_k = |c: &rusqlite::Connection| one(c, "SELECT (SELECT SUM(k) FROM sbtest1) + (SELECT SUM(k) FROM sbtest2)");
    let before = sum_k(&check);
    let r = run(&s, &db, Duration::from_secs(120));
    let updates = r.stats.committed(Stmt::IndexUpdate);
    assert_eq!(r.stats.errors_total(), 0, "{:?}", r.stats.errors);
    assert_eq!((r.stats.transactions, r.calls.errors), (200, 0));
    assert_eq!(
        updates.executions, r.stats.transactions,
        "one index update per committed transaction"
    );
    assert_eq!(updates.rows, updates.executions, "every id exists");
    assert_eq!(sum_k(&check) - before, updates.rows as i64);
    assert_eq!(total(&check), 2000);
    assert!(
        r.stats.retries <= r.stats.errors_of(ErrorClass::Deadlock),
        "only deadlocks are retried"
    );
}

/// Four threads of the full read_write mix on SQLite: writers take the write lock at BEGIN and
/// queue for it, so no transaction fails to upgrade its lock (no busy errors, no retries), and the
/// tables are what the committed statements imply.
#[test]
fn four_threads_of_read_write_on_sqlite_commit_everything_without_busy_errors() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (db, check) = db_at(tmp.path());
    let s = settings(OltpConfig {
        tables: Some(2),
        table_size: Some(1000),
        threads: Some(4),
        transactions: Some(400),
        ..Default::default()
    });
    prepare::prepare(db.as_ref(), &s, &Cancel::new(), false).expect("prepare");
    let r = run(&s, &db, Duration::from_secs(300));
    assert_eq!(r.stats.errors_total(), 0, "{:?}", r.stats.errors);
    assert_eq!((r.stats.transactions, r.calls.errors, r.stats.retries), (400, 0, 0));
    assert_eq!(
        r.stats.queries(),
        (400 * 14, 400 * 4, 400 * 2),
        "sysbench's 14 reads, 4 writes, 2 other"
    );
    let total = one(&check, "SELECT (SELECT COUNT(*) FROM sbtest1) + (SELECT COUNT(*) FROM sbtest2)");
    assert_eq!(total, 2000, "a delete and an insert of the same id keep the count");
    for stmt in [Stmt::IndexUpdate, Stmt::NonIndexUpdate, Stmt::Delete, Stmt::Insert] {
        let c = r.stats.committed(stmt);
        assert_eq!(
            (c.executions, c.rows),
            (400, 400),
            "{stmt:?}: once per transaction, on a row that exists"
        );
    }
    assert_eq!(r.failure(), None);
}

#[test]
fn point_select_reads_the_rows_it_asks_for() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (db, _check) = db_at(tmp.path());
    let s = settings(OltpConfig {
        scenario: Some("point_select".into()),
        table_size: Some(500),
        threads: Some(2),
        transactions: Some(300),
        ..Default::default()
    });
    prepare::prepare(db.as_ref(), &s, &Cancel::new(), false).expect("prepare");
    let r = run(&s, &db, Duration::from_secs(120));
    assert_eq!(r.stats.transactions, 300);
    assert_eq!(r.stats.queries(), (300, 0, 0), "one select per event, no BEGIN/COMMIT");
    assert_eq!(r.stats.rows_read, 300, "each id in 1..=table_size is one row");
    let mut c = db.connect().expect("connect");
    use perflab::workload::oltp::backend::Arg;
    assert_eq!(c.exec(1, Stmt::PointSelect, &[Arg::Int(500)]).expect("select"), 1);
    assert_eq!(c.exec(1, Stmt::PointSelect, &[Arg::Int(501)]).expect("select"), 0);
    assert_eq!(c.exec(1, Stmt::SimpleRange, &[Arg::Int(451), Arg::Int(550)]).expect("range"), 50);
}

#[test]
fn a_unique_violation_is_counted_as_duplicate_key_and_the_trial_completes() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (db, check) = db_at(tmp.path());
    // Tables made here with a unique k (k = id): `k = k + 1` collides with the next row's k except
    // on the last id, so most index updates fail with a unique violation.
    check
        .execute_batch(
            "CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, c CHAR(120), pad CHAR(60));
             CREATE UNIQUE INDEX k_1 ON sbtest1 (k);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10)
             INSERT INTO sbtest1 SELECT i, i, 'c', 'p' FROM n;",
        )
        .expect("schema");
    let s = settings(OltpConfig {
        scenario: Some("update_index".into()),
        table_size: Some(10),
        prepare: Some("never".into()),
        transactions: Some(100),
        ..Default::default()
    });
    prepare::prepare(db.as_ref(), &s, &Cancel::new(), false).expect("kept as it is");
    let r = run(&s, &db, Duration::from_secs(120));
    let dup = r.stats.errors_of(ErrorClass::DuplicateKey);
    assert!(dup > 0, "{:?}", r.stats.errors);
    assert_eq!(dup + r.stats.transactions, 100, "each event committed or failed on the unique key");
    assert_eq!(r.calls.errors, dup);
    assert!(
        r.stats.errors[&ErrorClass::DuplicateKey].first.contains("UNIQUE"),
        "{:?}",
        r.stats.errors
    );
    assert_eq!(r.failure(), None, "the trial completes: errors are counted, not fatal");
    let result = r.to_result();
    assert_eq!(result.metric("errors_duplicate_key").map(|m| m.value), Some(dup as f64));
    assert_eq!(result.metric("errors_deadlock").map(|m| m.value), Some(0.0));
}

#[test]
fn a_held_write_lock_is_the_deadlock_class_retried_and_the_run_still_ends() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (db, check) = db_at(tmp.path());
    let s = settings(OltpConfig {
        scenario: Some("update_non_index".into()),
        table_size: Some(100),
        ..Default::default()
    });
    prepare::prepare(db.as_ref(), &s, &Cancel::new(), false).expect("prepare");
    // Another connection holds the write lock for the whole run: every write is busy.
    check.execute_batch("BEGIN IMMEDIATE").expect("lock");
    let r = run(&s, &db, Duration::from_millis(1500));
    check.execute_batch("ROLLBACK").expect("unlock");
    assert_eq!(r.stats.transactions, 0);
    assert!(r.stats.errors_of(ErrorClass::Deadlock) >= 1, "{:?}", r.stats.errors);
    assert!(r.stats.retries >= 1, "a busy transaction is retried");
    let why = r.failure().expect("nothing committed fails the trial");
    assert!(why.starts_with("no transaction committed: deadlock:"), "{why}");
}

#[test]
fn the_command_line_runs_and_says_what_sysbench_says() {
    let out = Command::new(BIN)
        .args([
            "load",
            "oltp",
            "--table-size",
            "200",
            "--tables",
            "2",
            "--threads",
            "2",
            "--transactions",
            "50",
            "-d",
            "60s",
            "--json",
        ])
        .output()
        .expect("perflab load oltp");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(j["schema"], "perflab.load.oltp/1");
    assert_eq!(j["scenario"], "read_write");
    assert_eq!(j["transactions"].as_u64().unwrap() + j["failed_transactions"].as_u64().unwrap(), 50);
    assert!(j["queries"]["read"].as_u64().unwrap() >= 14 * j["transactions"].as_u64().unwrap());
    assert!(j["latency_ms"]["p99"].as_f64().unwrap() > 0.0);
    for (args, want) in [
        (vec!["--scenario", "read"], "--scenario must be"),
        (vec!["--table-size", "0"], "--table-size must be from 1"),
        (vec!["--db", "oracle://u:hunter22@h/x"], "--db must start with"),
    ] {
        let out = Command::new(BIN)
            .args(["load", "oltp", "-d", "1s"])
            .args(&args)
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(want) && !err.contains("hunter22"), "{err}");
    }
}

/// A password in `db` never reaches the plan's copy, the dry run or the error of a bad URL.
#[test]
fn a_password_in_the_db_url_is_kept_out_of_the_plan_copy_and_the_dry_run() {
    let text = "name = \"pw\"\n[workload]\ntype = \"oltp\"\ndb = \"postgres://sb:hunter22@127.0.0.1:5432/sb\"\n\
                [phases]\nbaseline = \"0s\"\nwarmup = \"0s\"\nload = \"1s\"\nrecovery = \"0s\"\n";
    let plan = perflab::plan::parse_str(text, "pw.toml").expect("plan");
    let copy = plan.secrets.redacted_source();
    assert!(
        !copy.contains("hunter22") && copy.contains("postgres://sb:[redacted]@127.0.0.1:5432/sb"),
        "{copy}"
    );
    assert_eq!(
        plan.secrets.redactor().apply("connect hunter22 failed"),
        "connect [redacted] failed"
    );
    let tmp = tempfile::tempdir().expect("tmp");
    let p = crate::common::write_plan(tmp.path(), text);
    let out = Command::new(BIN).args(["run", "--dry-run"]).arg(&p).output().expect("dry run");
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!all.contains("hunter22"), "{all}");
    assert!(
        all.contains("oltp: read_write on postgres://sb:[redacted]@127.0.0.1:5432/sb")
            && all.contains("db = \"postgres://sb:[redacted]@127.0.0.1:5432/sb\""),
        "{all}"
    );
}

/// A database that accepts `limit` connections, then refuses more, as a server at its
/// `max_connections` does.
struct Limited {
    inner: Arc<dyn Database>,
    limit: usize,
    opened: std::sync::atomic::AtomicUsize,
}

impl Database for Limited {
    fn describe(&self) -> String {
        format!("{} (at most {} connections)", self.inner.describe(), self.limit)
    }
    fn connect(&self) -> Result<Box<dyn perflab::workload::oltp::backend::Conn>, perflab::workload::oltp::backend::DbError> {
        if self.opened.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= self.limit {
            return Err(perflab::workload::oltp::backend::DbError::new(
                ErrorClass::TooManyConnections,
                "too many connections",
            ));
        }
        self.inner.connect()
    }
}

#[test]
fn threads_above_the_connection_limit_are_counted_as_too_many_connections_and_the_trial_completes() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (inner, _check) = db_at(tmp.path());
    let s = settings(OltpConfig {
        scenario: Some("point_select".into()),
        table_size: Some(100),
        threads: Some(4),
        ..Default::default()
    });
    prepare::prepare(inner.as_ref(), &s, &Cancel::new(), false).expect("prepare");
    let limited = Arc::new(Limited {
        inner,
        limit: 2,
        opened: Default::default(),
    });
    let db: Arc<dyn Database> = limited.clone();
    let r = run(&s, &db, Duration::from_millis(1000));
    let refused = r.stats.errors_of(ErrorClass::TooManyConnections);
    assert!(r.stats.transactions > 0, "the two connected threads work");
    assert_eq!(
        refused, 2,
        "one error of the class per thread the database refused: {:?}",
        r.stats.errors
    );
    assert_eq!(r.stats.errors_total(), refused, "{:?}", r.stats.errors);
    assert!(r.calls.errors >= refused, "each refused call fails: {}", r.calls.errors);
    // The refused threads try again every CONNECT_BACKOFF (50 ms), not in a busy loop.
    let attempts = limited.opened.load(std::sync::atomic::Ordering::SeqCst);
    assert!(attempts <= 4 + 2 * 40, "{attempts} connection attempts in 1 s");
    assert_eq!(r.down, vec![ErrorClass::TooManyConnections; 2]);
    assert_eq!(r.failure(), None, "the trial completes");
    assert_eq!(r.stats.errors[&ErrorClass::TooManyConnections].first, "too many connections");
}
