//! The OLTP workload's faults through the real workload and report, against scratch PostgreSQL
//! and MariaDB servers (`db_servers`, `max_connections` = [`MAX_CONNECTIONS`]):
//!
//! - a plan sweeping `threads` past the connection limit: the trial above it counts exactly the
//!   threads the server refused as `too_many_connections` (N − (limit − connections in use)),
//!   both trials complete, and the report's finding names the thread count where the class
//!   appears;
//! - the server stopped (by its PID) under `perflab load oltp`: the load ends at its duration
//!   with a failure, one `connection_lost` per connection, and nothing hangs;
//! - the server ending the workload's sessions: one `connection_lost` and one reconnect per
//!   thread, and the load goes on.
//!
//! The limits that apply: PostgreSQL keeps `superuser_reserved_connections` (3 by default; 0 in
//! the scratch server) of its `max_connections` for superusers, who may use every slot (the
//! workload connects as the superuser `postgres`); MariaDB lets an ordinary user (the workload's
//! `sb`) have `max_connections` and keeps one more for a user with SUPER (the test's observer,
//! `root`). Connections the test holds open itself are "in use".

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use perflab::store::Store;
use perflab::workload::oltp::backend::{Conn, Database};
use perflab::workload::oltp::{mysql, pg};

use crate::common::{only_run_dir, write_plan};
use crate::db_servers::{Kind, Server, MAX_CONNECTIONS};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

/// The thread count above the limit.
const OVER: u32 = MAX_CONNECTIONS + 4;
/// Connections the test holds open through the run.
const HELD: u32 = 3;

fn open(server: &Server) -> Box<dyn Database> {
    match server.kind {
        Kind::Postgres => pg::open(&server.url),
        Kind::Mariadb => mysql::open(&server.url),
    }
    .expect("the URL parses")
}

/// Client connections the server has now, the observer's own query excluded.
fn in_use(server: &Server) -> i64 {
    let present = match server.kind {
        Kind::Postgres => server.number("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"),
        Kind::Mariadb => server.number("SHOW GLOBAL STATUS LIKE 'Threads_connected'"),
    };
    present - 1
}

/// The server's own count of committed transactions (PostgreSQL publishes a busy session's
/// counts about once a second).
fn commits(server: &Server) -> i64 {
    match server.kind {
        Kind::Postgres => server.number("SELECT xact_commit FROM pg_stat_database WHERE datname = 'sbtest'"),
        Kind::Mariadb => server.number("SHOW GLOBAL STATUS LIKE 'Com_commit'"),
    }
}

/// The server's own words for a refused connection.
fn refusal_text(kind: Kind) -> &'static str {
    match kind {
        Kind::Postgres => "too many clients",
        Kind::Mariadb => "Too many connections",
    }
}

fn limit_plan(url: &str) -> String {
    format!(
        r#"name = "oltp-connection-limit"
[workload]
type = "oltp"
db = "{url}"
scenario = "point_select"
threads = "${{threads}}"
tables = 1
table_size = 1000

[matrix]
threads = [2, {OVER}]

[phases]
baseline = "1s"
warmup = "500ms"
load = "2s"
recovery = "0s"
interval = "500ms"

[report]
x = "threads"
"#
    )
}

fn threads_past_the_limit(server: &Server) {
    let db = open(server);
    let held: Vec<Box<dyn Conn>> = (0..HELD).map(|_| db.connect().expect("a held connection")).collect();
    let busy = in_use(server);
    assert_eq!(busy, i64::from(HELD), "{:?}: only the held connections are in use", server.kind);
    let free = i64::from(MAX_CONNECTIONS) - busy;
    let expected = i64::from(OVER) - free;

    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(tmp.path(), &limit_plan(&server.url));
    let runs = tmp.path().join("runs");
    let out = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("perflab run");
    drop(held);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{:?}: the trials complete: {stderr}", server.kind);

    let dir = only_run_dir(&runs);
    let store = Store::open(&dir).expect("store");
    let trials = store.trials().expect("trials");
    assert_eq!(trials.len(), 2);
    for t in &trials {
        assert!(t.ok(), "{:?}: {:?}", server.kind, t.failure);
        let threads: serde_json::Value = serde_json::from_str(&t.params_json).expect("params");
        let threads = threads["threads"].as_i64().expect("threads");
        let refused = t.metric("errors_too_many_connections").expect("the class is stored");
        let want = if threads == i64::from(OVER) { expected } else { 0 };
        assert_eq!(
            refused, want as f64,
            "{:?} threads={threads}: {want} threads refused of {threads} ({free} free of {MAX_CONNECTIONS}): {:?}",
            server.kind, t.errors
        );
        assert!(
            t.metric("transactions").unwrap_or(0.0) > 0.0,
            "threads={threads}: the connected threads worked"
        );
        assert_eq!(
            t.metric("errors"),
            Some(want as f64),
            "{:?}: no other error: {:?}",
            server.kind,
            t.errors
        );
        if want > 0 {
            let (first, n) = t
                .errors
                .iter()
                .find(|(e, _)| e.starts_with("too_many_connections (first: "))
                .unwrap_or_else(|| panic!("the first example is stored: {:?}", t.errors));
            assert_eq!(*n as i64, want);
            assert!(first.contains(refusal_text(server.kind)), "{first}");
        }
    }

    // The report's finding names the concurrency where the class first appears, and the server's
    // words.
    let title = format!("too_many_connections errors appear from threads = {OVER} on; first: ");
    let md = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    let line = md
        .lines()
        .find(|l| l.contains(&title))
        .unwrap_or_else(|| panic!("{:?}: report.md lacks \"{title}\":\n{md}", server.kind));
    assert!(line.contains(refusal_text(server.kind)), "{line}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).expect("report.json")).expect("json");
    let finding = json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["title"].as_str().is_some_and(|t| t.starts_with(&title)))
        .unwrap_or_else(|| panic!("report.json: no finding \"{title}\": {}", json["findings"]));
    assert_eq!(finding["rule"], "E2");
    assert_eq!(finding["points"], serde_json::json!([format!("threads={OVER}")]));
}

#[test]
fn postgres_threads_past_max_connections_are_counted_and_named_in_the_report() {
    let Some(server) = Server::postgres() else { return };
    threads_past_the_limit(&server);
}

#[test]
fn mariadb_threads_past_max_connections_are_counted_and_named_in_the_report() {
    let Some(server) = Server::mariadb() else { return };
    threads_past_the_limit(&server);
}

/// `perflab load oltp` on 2 threads; the server stopped by its PID once both are at work.
fn server_stopped_under_load(mut server: Server) {
    let threads: i64 = 2;
    let base = |c: &mut Command| {
        c.args(["load", "oltp", "--db", &server.url, "--tables", "1", "--table-size", "1000"]);
    };
    let mut prep = Command::new(BIN);
    base(&mut prep);
    let out = prep.args(["--prepare-only", "-q"]).output().expect("prepare");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));

    let mut load = Command::new(BIN);
    base(&mut load);
    let load_s = 15;
    let mut child = load
        .args(["--prepare", "never", "--threads", &threads.to_string(), "--warmup", "0s"])
        .args(["-d", &format!("{load_s}s"), "--json", "-q"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("perflab load oltp");
    // Stop the server only once both workers are connected and transactions have committed (the
    // server's own counter moved): a fixed pause after the connections appear was not enough on a
    // busy machine, where the workers could still be starting when the server went away.
    let before = commits(&server);
    let deadline = Instant::now() + Duration::from_secs(60);
    while (in_use(&server) < threads || commits(&server) <= before) && Instant::now() < deadline {
        assert!(
            child.try_wait().expect("wait").is_none(),
            "the load ended before the server stopped"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let stopped = Instant::now();
    server.stop();

    // Generous: the load phase's own length plus a minute; a hang would never end.
    let bound = Duration::from_secs(load_s + 60);
    while child.try_wait().expect("wait").is_none() {
        if stopped.elapsed() > bound {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{:?}: perflab load oltp still running {bound:?} after the server stopped",
                server.kind
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{:?}: a failed load: {stderr}", server.kind);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("json: {e}: {stderr}"));
    assert!(j["transactions"].as_u64().unwrap_or(0) > 0, "{j}");
    let errors = &j["errors"];
    // One per stretch without a connection: a worker that got in again while the server was
    // shutting down (a reconnect) starts a new stretch when that connection is lost in turn.
    let reconnects = j["reconnects"].as_u64().expect("reconnects");
    assert_eq!(
        errors["connection_lost"]["count"].as_u64(),
        Some(threads as u64 + reconnects),
        "{:?}: one lost connection per thread (and per reconnect), however often it tried again: {j}",
        server.kind
    );
    assert!(
        !errors["connection_lost"]["first"].as_str().unwrap_or("").is_empty(),
        "the first example is kept: {errors}"
    );
    let failure = j["failure"].as_str().unwrap_or_else(|| panic!("no failure: {j}"));
    assert!(
        failure.starts_with("connection_lost: ") && failure.ends_with(&format!("({threads} of {threads} connection(s) down at the end)")),
        "{failure}"
    );
}

#[test]
fn postgres_stopped_mid_load_fails_the_load_with_connection_lost() {
    let Some(server) = Server::postgres() else { return };
    server_stopped_under_load(server);
}

#[test]
fn mariadb_stopped_mid_load_fails_the_load_with_connection_lost() {
    let Some(server) = Server::mariadb() else { return };
    server_stopped_under_load(server);
}

/// Every session of `sbtest` but the observer's ended by the server (PostgreSQL
/// `pg_terminate_backend`, MariaDB `KILL CONNECTION`); how many were ended.
fn kill_sessions(server: &Server) -> i64 {
    match server.kind {
        Kind::Postgres => server.number(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE datname = 'sbtest' AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
        ),
        Kind::Mariadb => {
            let ids = server.sql("SELECT id FROM information_schema.processlist WHERE user = 'sb'");
            let ids: Vec<&str> = ids.split_whitespace().collect();
            for id in &ids {
                server.sql(&format!("KILL CONNECTION {id}"));
            }
            ids.len() as i64
        }
    }
}

/// The server ends the workload's sessions under `perflab load oltp`: one `connection_lost` per
/// thread, each thread reconnects (counted) and goes on; the load succeeds.
fn sessions_killed_under_load(server: Server) {
    let threads: i64 = 2;
    let mut prep = Command::new(BIN);
    prep.args(["load", "oltp", "--db", &server.url, "--tables", "1", "--table-size", "1000"]);
    let out = prep.args(["--prepare-only", "-q"]).output().expect("prepare");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let mut child = Command::new(BIN)
        .args(["load", "oltp", "--db", &server.url, "--tables", "1", "--table-size", "1000"])
        .args(["--prepare", "never", "--threads", &threads.to_string(), "--warmup", "0s"])
        .args(["-d", "6s", "--json", "-q"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("perflab load oltp");
    let deadline = Instant::now() + Duration::from_secs(60);
    while in_use(&server) < threads && Instant::now() < deadline {
        assert!(child.try_wait().expect("wait").is_none(), "the load ended early");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(1000));
    let killed = kill_sessions(&server);
    assert_eq!(killed, threads, "{:?}: the workers' sessions", server.kind);
    let bound = Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > bound {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{:?}: perflab load oltp still running 2 minutes after the kill", server.kind);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("json: {e}: {stderr}"));
    assert_eq!(out.status.code(), Some(0), "{:?}: the load goes on: {j}", server.kind);
    assert_eq!(
        j["errors"]["connection_lost"]["count"], threads,
        "{:?}: {}",
        server.kind, j["errors"]
    );
    assert_eq!(j["reconnects"], threads, "{:?}: each thread reconnected once", server.kind);
    assert_eq!(j["failure"], serde_json::Value::Null);
    // (two threads of read_write may also meet on one id: a deadlock or a duplicate key)
    let expected = ["connection_lost", "deadlock", "duplicate_key"];
    let only_those = j["errors"]
        .as_object()
        .is_some_and(|e| e.keys().all(|k| expected.contains(&k.as_str())));
    assert!(only_those, "{:?}: {}", server.kind, j["errors"]);
}

#[test]
fn postgres_sessions_ended_by_the_server_reconnect_and_are_counted() {
    let Some(server) = Server::postgres() else { return };
    sessions_killed_under_load(server);
}

#[test]
fn mariadb_sessions_ended_by_the_server_reconnect_and_are_counted() {
    let Some(server) = Server::mariadb() else { return };
    sessions_killed_under_load(server);
}
