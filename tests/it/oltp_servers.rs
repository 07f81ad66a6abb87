//! The OLTP workload's PostgreSQL and MariaDB backends against real servers started by the test
//! (`db_servers`): sysbench's tables loaded in bulk, transactions counted against the server's own
//! commit counter, rows and sums the statements imply, the connection limit classified with the
//! right count, and a server stopped mid-run classified as a lost connection without a hang.
//!
//! The transactions are driven straight through `Conn`, the way a scenario does (BEGIN, the
//! statements, COMMIT; a deadlock or duplicate key rolls back and counts).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use perflab::workload::oltp::backend::{Arg, Conn, Database, DbError, ErrorClass, Row, Stmt};
use perflab::workload::oltp::{mysql, pg};
use rand::{Rng, RngExt};

use crate::db_servers::{Kind, Server, MAX_CONNECTIONS};

const TABLES: u32 = 2;
const TABLE_SIZE: i64 = 1000;
const RANGE: i64 = 100;

fn open(server: &Server) -> Box<dyn Database> {
    match server.kind {
        Kind::Postgres => pg::open(&server.url),
        Kind::Mariadb => mysql::open(&server.url),
    }
    .expect("the URL parses")
}

/// sysbench's `c`/`pad` text: groups of 11 digits joined by '-'.
fn digits(rng: &mut impl Rng, groups: usize) -> String {
    (0..groups)
        .map(|_| format!("{:011}", rng.random_range(0..100_000_000_000u64)))
        .collect::<Vec<_>>()
        .join("-")
}

pub(crate) fn prepare(db: &dyn Database, shape: Shape) {
    let mut conn = db.connect().expect("connect");
    let mut rng = rand::rng();
    for t in 1..=shape.tables {
        conn.create_table(t).expect("create table");
        assert_eq!(conn.table_rows(t).expect("count"), Some(0));
        let rows: Vec<Row> = (1..=shape.size)
            .map(|id| Row {
                id,
                k: rng.random_range(1..=shape.size),
                c: digits(&mut rng, 10),
                pad: digits(&mut rng, 5),
            })
            .collect();
        for batch in rows.chunks(300) {
            conn.load(t, batch).expect("load");
        }
        conn.create_index(t).expect("index");
        assert_eq!(conn.table_rows(t).expect("count"), Some(shape.size as u64));
    }
    assert_eq!(
        conn.table_rows(shape.tables + 7).expect("count"),
        None,
        "a missing table has no row count"
    );
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mix {
    ReadOnly,
    ReadWrite,
    WriteOnly,
    UpdateIndex,
}

#[derive(Default, Debug)]
struct Tally {
    commits: u64,
    /// Rows the committed transactions' index updates changed (each adds 1 to `k`).
    k_added: u64,
    errors: BTreeMap<ErrorClass, u64>,
}

/// The tables a transaction runs on: `sbtest1..=tables`, ids `1..=size`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    tables: u32,
    size: i64,
}

pub(crate) const SHAPE: Shape = Shape {
    tables: TABLES,
    size: TABLE_SIZE,
};

/// One transaction of the mix; Ok(rows its index updates changed).
fn transaction(conn: &mut dyn Conn, mix: Mix, shape: Shape, rng: &mut impl Rng) -> Result<u64, DbError> {
    let table = rng.random_range(1..=shape.tables);
    let id = |rng: &mut _| RngExt::random_range(rng, 1..=shape.size);
    let mut k_added = 0;
    conn.begin()?;
    if matches!(mix, Mix::ReadOnly | Mix::ReadWrite) {
        for _ in 0..10 {
            let n = conn.exec(table, Stmt::PointSelect, &[Arg::Int(id(rng))])?;
            assert!(n <= 1, "a point select returns at most one row, got {n}");
        }
        let start = rng.random_range(1..=shape.size - RANGE + 1);
        let range = [Arg::Int(start), Arg::Int(start + RANGE - 1)];
        for stmt in [Stmt::SimpleRange, Stmt::SumRange, Stmt::OrderRange, Stmt::DistinctRange] {
            let n = conn.exec(table, stmt, &range)?;
            let expected = if stmt == Stmt::SumRange { 1 } else { RANGE as u64 };
            // A concurrent delete+insert of an id in the range can hide one row for a moment.
            assert!(n <= expected && n + 2 >= expected, "{stmt:?} read {n} rows, expected {expected}");
        }
    }
    if matches!(mix, Mix::ReadWrite | Mix::WriteOnly | Mix::UpdateIndex) {
        k_added += conn.exec(table, Stmt::IndexUpdate, &[Arg::Int(id(rng))])?;
    }
    if matches!(mix, Mix::ReadWrite | Mix::WriteOnly) {
        let c = digits(rng, 10);
        conn.exec(table, Stmt::NonIndexUpdate, &[Arg::Int(id(rng)), Arg::Text(c)])?;
        let victim = id(rng);
        conn.exec(table, Stmt::Delete, &[Arg::Int(victim)])?;
        let row = [
            Arg::Int(victim),
            Arg::Int(id(rng)),
            Arg::Text(digits(rng, 10)),
            Arg::Text(digits(rng, 5)),
        ];
        let n = conn.exec(table, Stmt::Insert, &row)?;
        assert_eq!(n, 1, "an insert adds one row");
    }
    conn.commit()?;
    Ok(k_added)
}

/// `count` transactions on one connection; deadlocks and duplicate keys roll back and count.
fn run(conn: &mut dyn Conn, mix: Mix, count: u64, done: &AtomicU64) -> (Tally, Option<DbError>) {
    run_until(conn, mix, SHAPE, count, Instant::now() + Duration::from_secs(600), done)
}

/// Like `run`, on any tables, until `count` transactions or the deadline.
fn run_until(conn: &mut dyn Conn, mix: Mix, shape: Shape, count: u64, deadline: Instant, done: &AtomicU64) -> (Tally, Option<DbError>) {
    let mut tally = Tally::default();
    let mut rng = rand::rng();
    for _ in 0..count {
        if Instant::now() >= deadline {
            break;
        }
        match transaction(conn, mix, shape, &mut rng) {
            Ok(k) => {
                tally.commits += 1;
                tally.k_added += k;
                done.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                *tally.errors.entry(e.class).or_default() += 1;
                if matches!(e.class, ErrorClass::Deadlock | ErrorClass::DuplicateKey) {
                    conn.rollback().expect("rollback after a retryable error");
                } else {
                    return (tally, Some(e));
                }
            }
        }
    }
    (tally, None)
}

/// The server's own count of committed transactions in `sbtest`, once it has settled (PostgreSQL
/// publishes a session's counts when the session ends or goes idle).
fn server_commits(server: &Server) -> i64 {
    let read = || match server.kind {
        Kind::Postgres => server.number("SELECT xact_commit FROM pg_stat_database WHERE datname = 'sbtest'"),
        Kind::Mariadb => server.number("SHOW GLOBAL STATUS LIKE 'Com_commit'"),
    };
    if server.kind == Kind::Mariadb {
        return read();
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut last, mut same) = (read(), 0);
    while same < 5 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(300));
        let busy = server.number("SELECT count(*) FROM pg_stat_activity WHERE datname = 'sbtest'");
        let now = read();
        same = if now == last && busy == 0 { same + 1 } else { 0 };
        last = now;
    }
    last
}

fn sum_k(server: &Server) -> i64 {
    let sums: Vec<String> = (1..=TABLES).map(|t| format!("(SELECT SUM(k) FROM sbtest{t})")).collect();
    server.number_in("sbtest", &format!("SELECT {}", sums.join(" + ")))
}

fn rows(server: &Server, table: u32) -> i64 {
    server.number_in("sbtest", &format!("SELECT count(*) FROM sbtest{table}"))
}

/// Each mix on two connections: the committed transactions equal the server's commit counter
/// delta, the tables keep their row count, and `SUM(k)` grew by exactly the rows the committed
/// index updates changed.
pub(crate) fn transactions_match_the_server(server: &Server, db: &dyn Database) {
    // What merely opening and closing two sessions adds to the counter (PostgreSQL counts a
    // session's start-up transaction): measured, then subtracted.
    let before = server_commits(server);
    drop((db.connect().expect("connect"), db.connect().expect("connect")));
    let overhead = server_commits(server) - before;
    assert!(
        (0..=2).contains(&overhead),
        "opening two sessions committed {overhead} transactions"
    );
    eprintln!("{:?}: two sessions alone committed {overhead}", server.kind);

    for (mix, per_conn) in [
        (Mix::ReadOnly, 40),
        (Mix::ReadWrite, 40),
        (Mix::WriteOnly, 40),
        (Mix::UpdateIndex, 60),
    ] {
        // (the observer's own queries in `sbtest` are transactions too: read before the counter)
        let k_before = sum_k(server);
        let before = server_commits(server);
        let done = AtomicU64::new(0);
        let results: Vec<(Tally, Option<DbError>)> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..2)
                .map(|_| {
                    let done = &done;
                    s.spawn(move || {
                        let mut conn = db.connect().expect("connect");
                        run(conn.as_mut(), mix, per_conn, done)
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().expect("worker")).collect()
        });
        let mut commits = 0;
        let mut k_added = 0;
        for (tally, err) in &results {
            assert!(err.is_none(), "{mix:?}: {err:?}");
            let unexpected: Vec<_> = tally
                .errors
                .keys()
                .filter(|c| !matches!(c, ErrorClass::Deadlock | ErrorClass::DuplicateKey))
                .collect();
            assert!(unexpected.is_empty(), "{mix:?}: {:?}", tally.errors);
            commits += tally.commits;
            k_added += tally.k_added;
        }
        assert!(commits > 0, "{mix:?}: nothing committed: {results:?}");
        let delta = server_commits(server) - before - overhead;
        assert_eq!(
            delta, commits as i64,
            "{:?} {mix:?}: the server counted {delta} commits, the workers {commits}",
            server.kind
        );
        for t in 1..=TABLES {
            assert_eq!(rows(server, t), TABLE_SIZE, "{mix:?}: sbtest{t} keeps its rows");
        }
        if matches!(mix, Mix::ReadOnly | Mix::UpdateIndex) {
            // (read_write and write_only re-insert the deleted id with a new k)
            assert_eq!(
                sum_k(server) - k_before,
                k_added as i64,
                "{mix:?}: SUM(k) grew by the index updates"
            );
        }
        if mix == Mix::UpdateIndex {
            assert_eq!(k_added, commits, "each committed update_index transaction changed one row");
        }
    }
}

/// A point select returns the row it asked for; a missing id returns none.
fn point_select_reads_rows(db: &dyn Database) {
    let mut conn = db.connect().expect("connect");
    for id in [1, TABLE_SIZE / 2, TABLE_SIZE] {
        assert_eq!(conn.exec(1, Stmt::PointSelect, &[Arg::Int(id)]).expect("select"), 1);
    }
    assert_eq!(conn.exec(1, Stmt::PointSelect, &[Arg::Int(TABLE_SIZE + 10)]).expect("select"), 0);
    assert_eq!(conn.exec(2, Stmt::SimpleRange, &[Arg::Int(11), Arg::Int(20)]).expect("range"), 10);
}

/// Connections beyond `max_connections`: exactly the ones over the limit fail, as "too many
/// connections", and the others keep working.
fn connection_limit_is_classified(server: &Server, db: &dyn Database) {
    let present = match server.kind {
        Kind::Postgres => server.number("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"),
        Kind::Mariadb => server.number("SHOW GLOBAL STATUS LIKE 'Threads_connected'"),
    };
    // The observer's own session is one of those present, and gone again once its query ends.
    let free = MAX_CONNECTIONS as i64 - (present - 1);
    let attempts = MAX_CONNECTIONS as i64 + 5;
    let mut open = Vec::new();
    let mut refused = Vec::new();
    for _ in 0..attempts {
        match db.connect() {
            Ok(c) => open.push(c),
            Err(e) => refused.push(e),
        }
    }
    let classes: Vec<ErrorClass> = refused.iter().map(|e| e.class).collect();
    assert!(
        classes.iter().all(|c| *c == ErrorClass::TooManyConnections),
        "{:?}: refusals {refused:?}",
        server.kind
    );
    assert_eq!(open.len() as i64, free, "{:?}: {} opened of {attempts}", server.kind, open.len());
    assert_eq!(refused.len() as i64, attempts - free);
    let message = &refused[0].message;
    assert!(message.starts_with("cannot connect to "), "{message}");
    let mut rng = rand::rng();
    transaction(open[0].as_mut(), Mix::ReadOnly, SHAPE, &mut rng).expect("an open connection still works");
}

/// A connection once the server takes them again: right after the connection-limit step,
/// PostgreSQL's postmaster may still count the closed sessions' exiting backends and refuses a
/// new one before reading its startup packet, which the client sees as a reset. Bounded (30 s).
fn connect_when_ready(db: &dyn Database) -> Box<dyn Conn> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match db.connect() {
            Ok(c) => return c,
            Err(e) if e.class == ErrorClass::ConnectionLost && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("connect: {e:?}"),
        }
    }
}

/// The server stopped under load: the workers end with a lost connection, a reconnect is refused
/// as lost too, and nothing hangs.
fn stopped_server_is_a_lost_connection(server: &mut Server, db: Arc<dyn Database>) {
    let done = Arc::new(AtomicU64::new(0));
    let (tx, rx) = std::sync::mpsc::channel();
    for _ in 0..2 {
        let (db, done, tx) = (db.clone(), done.clone(), tx.clone());
        std::thread::spawn(move || {
            let mut conn = connect_when_ready(db.as_ref());
            let (tally, err) = run(conn.as_mut(), Mix::ReadWrite, 1_000_000, &done);
            let _ = tx.send((tally, err));
        });
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while done.load(Ordering::Relaxed) < 20 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(done.load(Ordering::Relaxed) >= 20, "the workers got going");
    server.stop();
    for _ in 0..2 {
        let (tally, err) = rx
            .recv_timeout(Duration::from_secs(90))
            .expect("a worker ends after the server stopped");
        let err = err.unwrap_or_else(|| panic!("a worker ran on after the server stopped: {tally:?}"));
        assert_eq!(err.class, ErrorClass::ConnectionLost, "{:?}: {err}", server.kind);
    }
    let err = db.connect().err().expect("no server to connect to");
    assert_eq!(err.class, ErrorClass::ConnectionLost, "{err}");
}

/// Logging in with a password (mysql_native_password, MariaDB's default), over TCP and over the
/// server's Unix socket (`?socket=`), and a wrong password refused as an error that is not a lost
/// connection.
fn password_logins(server: &Server) {
    server.sql("CREATE USER pw@'%' IDENTIFIED BY 's3cr3t'; GRANT ALL ON sbtest.* TO pw@'%'");
    server.sql("CREATE USER pw@'localhost' IDENTIFIED BY 's3cr3t'; GRANT ALL ON sbtest.* TO pw@'localhost'");
    let socket = server.socket().expect("the scratch MariaDB has a socket");
    for url in [
        format!("mysql://pw:s3cr3t@127.0.0.1:{}/sbtest", server.port),
        format!("mysql://pw:s3cr3t@localhost/sbtest?socket={}", socket.display()),
    ] {
        let db = mysql::open(&url).expect("parses");
        let mut conn = db.connect().unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(conn.table_rows(1).expect("count"), Some(TABLE_SIZE as u64), "{url}");
        conn.begin().expect("begin");
        assert_eq!(conn.exec(1, Stmt::PointSelect, &[Arg::Int(3)]).expect("select"), 1, "{url}");
        conn.commit().expect("commit");
    }
    let db = mysql::open(&format!("mysql://pw:wrong@127.0.0.1:{}/sbtest", server.port)).expect("parses");
    let err = db.connect().err().expect("a wrong password is refused");
    assert_eq!(err.class, ErrorClass::Other, "{err}");
    assert!(err.message.contains("(error 1045)"), "{err}");
    assert!(!err.message.contains("wrong"), "{err}");
}

fn exercise(mut server: Server) {
    let db: Arc<dyn Database> = Arc::from(open(&server));
    assert!(!db.describe().is_empty());
    prepare(db.as_ref(), SHAPE);
    assert_eq!(rows(&server, 1), TABLE_SIZE, "the server sees the loaded rows");
    point_select_reads_rows(db.as_ref());
    transactions_match_the_server(&server, db.as_ref());
    if server.kind == Kind::Mariadb {
        password_logins(&server);
    }
    connection_limit_is_classified(&server, db.as_ref());
    stopped_server_is_a_lost_connection(&mut server, db);
}

#[test]
fn postgres_backend_against_a_scratch_server() {
    let Some(server) = Server::postgres() else { return };
    exercise(server);
}

#[test]
fn mariadb_backend_against_a_scratch_server() {
    let Some(server) = Server::mariadb() else { return };
    exercise(server);
}

#[test]
fn passwords_stay_out_of_descriptions_and_errors() {
    for url in ["postgres://bob:hunter2@127.0.0.1:1/sb", "mysql://bob:hunter2@127.0.0.1:1/sb"] {
        let db = if url.starts_with("postgres") {
            pg::open(url)
        } else {
            mysql::open(url)
        }
        .expect("parses");
        assert!(!db.describe().contains("hunter2"), "{}", db.describe());
        let err = db.connect().err().expect("nothing listens on port 1");
        assert!(!err.message.contains("hunter2"), "{err}");
        assert_eq!(err.class, ErrorClass::ConnectionLost, "{err}");
    }
}

/// The one line a connection attempt to `db` fails with, checked: one line, without `password`.
pub fn refused_with(db: &dyn Database, password: &str) -> String {
    let err = db.connect().err().expect("the connection is refused");
    assert!(!err.message.contains(password), "{err}");
    assert!(!err.message.contains('\n'), "one line: {err}");
    err.message
}
