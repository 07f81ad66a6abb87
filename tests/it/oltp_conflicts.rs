//! Lock conflicts provoked on a scratch PostgreSQL (`db_servers`), through the OLTP workload's own
//! client and classification:
//!
//! - two connections updating the same two rows in opposite order: the server breaks the
//!   deadlock, and the victim's error is classified `deadlock`;
//! - a repeatable-read transaction updating a row another committed after its snapshot: a
//!   serialization failure, classified with the deadlocks (both are retried);
//! - `perflab load oltp` read_write on a table of 8 rows and 8 threads: every deadlock the server
//!   counts (`pg_stat_database.deadlocks`) is one the workload counts, and each is retried.

use std::process::Command;
use std::time::Duration;

use perflab::workload::oltp::backend::{Arg, Conn, ErrorClass, Stmt};
use perflab::workload::oltp::pg;

use crate::db_servers::Server;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

/// Prepare `tables` × `rows` with perflab's own prepare.
fn prepare(server: &Server, rows: u32) {
    let out = Command::new(BIN)
        .args([
            "load",
            "oltp",
            "--db",
            &server.url,
            "--tables",
            "1",
            "--table-size",
            &rows.to_string(),
        ])
        .args(["--prepare-only", "-q"])
        .output()
        .expect("perflab load oltp --prepare-only");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

fn connect(server: &Server) -> Box<dyn Conn> {
    pg::open(&server.url).expect("URL").connect().expect("connect")
}

/// `pg_stat_database.deadlocks` of `sbtest` once it has settled (a session publishes its counts
/// when it goes idle or ends, a moment after the client is done).
fn deadlocks(server: &Server) -> i64 {
    let read = || server.number("SELECT deadlocks FROM pg_stat_database WHERE datname = 'sbtest'");
    let mut last = read();
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(500));
        let now = read();
        if now == last {
            return now;
        }
        last = now;
    }
    last
}

fn bump(conn: &mut dyn Conn, id: i64) -> Result<u64, ErrorClass> {
    conn.exec(1, Stmt::IndexUpdate, &[Arg::Int(id)]).map_err(|e| e.class)
}

#[test]
fn postgres_rows_locked_in_opposite_order_give_one_deadlock() {
    let Some(server) = Server::postgres() else { return };
    prepare(&server, 10);
    let (mut a, mut b) = (connect(&server), connect(&server));
    a.begin().expect("begin");
    b.begin().expect("begin");
    assert_eq!(bump(a.as_mut(), 1), Ok(1));
    assert_eq!(bump(b.as_mut(), 2), Ok(1));
    // a waits for row 2 (held by b); b then waits for row 1 (held by a): the server ends one.
    let waiter = std::thread::spawn(move || {
        let r = bump(a.as_mut(), 2);
        (a, r)
    });
    // (b's statement may reach the server before a's; the deadlock is the same either way)
    std::thread::sleep(Duration::from_millis(200));
    let rb = bump(b.as_mut(), 1);
    if rb.is_ok() {
        b.commit().expect("commit b");
    }
    let (mut a, ra) = waiter.join().expect("thread a");
    if ra.is_ok() {
        a.commit().expect("commit a");
    } else {
        a.rollback().expect("rollback a");
    }
    if rb.is_err() {
        b.rollback().expect("rollback b");
    }
    drop((a, b));
    let mut results = [ra, rb];
    results.sort();
    assert_eq!(results, [Ok(1), Err(ErrorClass::Deadlock)], "one victim, one winner");
    assert_eq!(deadlocks(&server), 1, "the server counted it");
}

#[test]
fn postgres_a_serialization_failure_is_classified_with_the_deadlocks() {
    let Some(server) = Server::postgres() else { return };
    prepare(&server, 10);
    server.sql("ALTER DATABASE sbtest SET default_transaction_isolation = 'repeatable read'");
    let (mut a, mut b) = (connect(&server), connect(&server));
    b.begin().expect("begin");
    // b's snapshot is taken by its first statement
    let seen = b.exec(1, Stmt::PointSelect, &[Arg::Int(1)]).expect("select");
    assert_eq!(seen, 1);
    a.begin().expect("begin");
    assert_eq!(bump(a.as_mut(), 1), Ok(1));
    a.commit().expect("commit a");
    assert_eq!(bump(b.as_mut(), 1), Err(ErrorClass::Deadlock), "could not serialize access");
    b.rollback().expect("rollback");
}

#[test]
fn postgres_deadlocks_under_load_are_all_counted_and_retried() {
    let Some(server) = Server::postgres() else { return };
    prepare(&server, 8);
    // Detect deadlocks fast, so that a short run has many.
    server.sql("ALTER SYSTEM SET deadlock_timeout = '10ms'");
    server.sql("SELECT pg_reload_conf()");
    let before = deadlocks(&server);
    let out = Command::new(BIN)
        .args(["load", "oltp", "--db", &server.url, "--tables", "1", "--table-size", "8"])
        .args(["-s", "read_write", "-t", "8", "-d", "3s", "--warmup", "0s", "--prepare", "never"])
        .args(["--json", "-q"])
        .output()
        .expect("perflab load oltp");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("json: {e}: {stderr}"));
    let server_deadlocks = deadlocks(&server) - before;
    let counted = j["errors"]["deadlock"]["count"].as_u64().unwrap_or(0);
    let retries = j["retries"].as_u64().expect("retries");
    if server_deadlocks == 0 {
        eprintln!("NOTE: no deadlock in this run (8 threads on 8 rows for 3 s); nothing to compare");
        return;
    }
    assert_eq!(counted, server_deadlocks as u64, "every deadlock the server broke is counted: {j}");
    // Each is retried, but one per thread may fall at the end of the run.
    assert!(retries <= counted && retries + 8 >= counted, "retries {retries} of {counted}: {j}");
    assert!(
        j["errors"]["deadlock"]["first"].as_str().unwrap_or("").contains("40P01"),
        "the first example is the server's: {j}"
    );
    assert!(j["transactions"].as_u64().unwrap_or(0) > 0, "{j}");
}
