//! SQLite as an OLTP [`Database`]: one file, in WAL mode, one `rusqlite` connection per worker
//! with its statements prepared once and cached, and a busy timeout.
//!
//! SQLite has one writer at a time. A transaction that writes begins with `BEGIN IMMEDIATE`
//! ([`Conn::begin_write`]): it takes the write lock first, and a second writer waits for it
//! instead of reading first and then failing to upgrade its lock (SQLITE_BUSY at once, the busy
//! timeout not applying, as the two would deadlock). The workload's own writers wait in line in
//! this process (first come, first served), and then up to [`BUSY_TIMEOUT`] for a lock another
//! process holds. Read-only transactions begin
//! deferred and never wait (WAL readers do not block the writer). A writer that still cannot get
//! the lock in time gets SQLITE_BUSY (or LOCKED): counted as [`ErrorClass::Deadlock`], rolled back
//! and retried like a deadlock of a server; a UNIQUE or PRIMARY KEY violation is
//! [`ErrorClass::DuplicateKey`].

use super::backend::{Arg, Conn, Database, DbError, ErrorClass, Row, Stmt};
use rusqlite::{params_from_iter, Connection, ErrorCode, ToSql};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How long a writer waits for another connection's write lock before SQLITE_BUSY: long enough
/// that writers queue behind each other (a transaction holds the lock for a millisecond or so)
/// rather than fail, short enough that a lock held by someone else ends in errors within the run.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(1);

/// Prepared statements kept per connection (9 statements × up to 64 tables).
const STATEMENT_CACHE: usize = 1024;

/// The text of a statement on `sbtest<table>` (`?1`, `?2`, ... for its parameters).
pub fn sql(stmt: Stmt, table: u32) -> String {
    stmt.sql(table, |n| format!("?{n}"))
}

/// A SQLite database file.
pub struct Sqlite {
    path: PathBuf,
    writers: Arc<WriteQueue>,
}

/// This process's writers in line for SQLite's one write lock, first come first served.
///
/// SQLite's busy timeout polls (sleeps of up to 100 ms between tries), and a lock free for a few
/// microseconds between two transactions is rarely free when a sleeper looks: with several busy
/// writers one can starve past the timeout. The workload's own connections therefore queue here
/// (a ticket each) before they ask SQLite for the lock; the busy timeout still covers other
/// processes holding it.
#[derive(Default)]
struct WriteQueue {
    /// (next ticket to hand out, ticket now served)
    tickets: Mutex<(u64, u64)>,
    turn: Condvar,
}

impl WriteQueue {
    fn acquire(&self) {
        let mut t = self.tickets.lock().unwrap_or_else(|p| p.into_inner());
        let mine = t.0;
        t.0 += 1;
        while t.1 != mine {
            t = self.turn.wait(t).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn release(&self) {
        let mut t = self.tickets.lock().unwrap_or_else(|p| p.into_inner());
        t.1 += 1;
        drop(t);
        self.turn.notify_all();
    }
}

/// Open `sqlite:PATH` (the file is created at the first connection; its directory must exist).
pub fn open(path: &str) -> Result<Box<dyn Database>, DbError> {
    if path.is_empty() {
        return Err(DbError::new(
            ErrorClass::Other,
            "sqlite: needs a file path (sqlite:/path/to/file.db)",
        ));
    }
    Ok(Box::new(Sqlite {
        path: PathBuf::from(path),
        writers: Arc::default(),
    }))
}

impl Sqlite {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Database for Sqlite {
    fn describe(&self) -> String {
        format!("sqlite:{}", self.path.display())
    }

    fn connect(&self) -> Result<Box<dyn Conn>, DbError> {
        let c = Connection::open(&self.path).map_err(|e| classify(&e))?;
        c.busy_timeout(BUSY_TIMEOUT).map_err(|e| classify(&e))?;
        c.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // WAL: readers do not block the writer; NORMAL: a commit is durable at the checkpoint.
        c.pragma_update(None, "journal_mode", "WAL").map_err(|e| classify(&e))?;
        c.pragma_update(None, "synchronous", "NORMAL").map_err(|e| classify(&e))?;
        Ok(Box::new(SqliteConn {
            c,
            writers: self.writers.clone(),
            queued: false,
        }))
    }

    fn parallel_load(&self) -> bool {
        false
    }
}

struct SqliteConn {
    c: Connection,
    writers: Arc<WriteQueue>,
    /// This connection holds its turn in `writers` (until its transaction ends).
    queued: bool,
}

impl Drop for SqliteConn {
    fn drop(&mut self) {
        if self.queued {
            self.queued = false;
            self.writers.release();
        }
    }
}

/// The class of a SQLite error.
pub fn classify(e: &rusqlite::Error) -> DbError {
    let class = match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => ErrorClass::Deadlock,
        Some(ErrorCode::ConstraintViolation) if is_unique(e) => ErrorClass::DuplicateKey,
        Some(ErrorCode::CannotOpen) => ErrorClass::ConnectionLost,
        _ => ErrorClass::Other,
    };
    DbError::new(class, e.to_string())
}

fn is_unique(e: &rusqlite::Error) -> bool {
    match e {
        rusqlite::Error::SqliteFailure(f, _) => {
            f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
        }
        _ => false,
    }
}

fn to_sql(a: &Arg) -> &dyn ToSql {
    match a {
        Arg::Int(i) => i,
        Arg::Text(t) => t,
    }
}

impl SqliteConn {
    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.c.execute_batch(sql).map_err(|e| classify(&e))
    }

    /// Wait for this process's turn to write.
    fn queue(&mut self) {
        if !self.queued {
            self.writers.acquire();
            self.queued = true;
        }
    }

    /// Give the turn to the next writer once no transaction is open.
    fn dequeue_if_done(&mut self) {
        if self.queued && self.c.is_autocommit() {
            self.queued = false;
            self.writers.release();
        }
    }

    fn run(&mut self, stmt: Stmt, sql: &str, args: &[Arg]) -> Result<u64, DbError> {
        let mut st = self.c.prepare_cached(sql).map_err(|e| classify(&e))?;
        let params = params_from_iter(args.iter().map(to_sql));
        if stmt.is_read() {
            let mut rows = st.query(params).map_err(|e| classify(&e))?;
            let mut n = 0;
            while rows.next().map_err(|e| classify(&e))?.is_some() {
                n += 1;
            }
            Ok(n)
        } else {
            st.execute(params).map(|n| n as u64).map_err(|e| classify(&e))
        }
    }
}

impl Conn for SqliteConn {
    fn begin(&mut self) -> Result<(), DbError> {
        // Read-only: a deferred transaction, a snapshot that never needs the write lock.
        self.batch("BEGIN")
    }

    fn begin_write(&mut self) -> Result<(), DbError> {
        self.queue();
        let r = self.batch("BEGIN IMMEDIATE");
        self.dequeue_if_done();
        r
    }

    fn commit(&mut self) -> Result<(), DbError> {
        let r = self.batch("COMMIT");
        self.dequeue_if_done();
        r
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        let r = if self.c.is_autocommit() { Ok(()) } else { self.batch("ROLLBACK") };
        self.dequeue_if_done();
        r
    }

    fn exec(&mut self, table: u32, stmt: Stmt, args: &[Arg]) -> Result<u64, DbError> {
        let sql = sql(stmt, table);
        if stmt.is_read() || !self.c.is_autocommit() {
            return self.run(stmt, &sql, args);
        }
        // A write in autocommit is a transaction of its own: in line for the lock, too.
        self.queue();
        let r = self.run(stmt, &sql, args);
        self.dequeue_if_done();
        r
    }

    fn create_table(&mut self, table: u32) -> Result<(), DbError> {
        self.batch(&format!(
            "DROP TABLE IF EXISTS sbtest{table};
             CREATE TABLE sbtest{table} (
               id INTEGER NOT NULL PRIMARY KEY,
               k INTEGER NOT NULL DEFAULT 0,
               c CHAR(120) NOT NULL DEFAULT '',
               pad CHAR(60) NOT NULL DEFAULT '')"
        ))
    }

    fn load(&mut self, table: u32, rows: &[Row]) -> Result<(), DbError> {
        let tx = self.c.transaction().map_err(|e| classify(&e))?;
        {
            let mut st = tx
                .prepare_cached(&format!("INSERT INTO sbtest{table} (id, k, c, pad) VALUES (?1, ?2, ?3, ?4)"))
                .map_err(|e| classify(&e))?;
            for r in rows {
                st.execute(rusqlite::params![r.id, r.k, r.c, r.pad]).map_err(|e| classify(&e))?;
            }
        }
        tx.commit().map_err(|e| classify(&e))
    }

    fn create_index(&mut self, table: u32) -> Result<(), DbError> {
        self.batch(&format!("CREATE INDEX IF NOT EXISTS k_{table} ON sbtest{table} (k)"))
    }

    fn drop_table(&mut self, table: u32) -> Result<(), DbError> {
        self.batch(&format!("DROP TABLE IF EXISTS sbtest{table}"))
    }

    fn table_rows(&mut self, table: u32) -> Result<Option<u64>, DbError> {
        let exists: i64 = self
            .c
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [format!("sbtest{table}")],
                |r| r.get(0),
            )
            .map_err(|e| classify(&e))?;
        if exists == 0 {
            return Ok(None);
        }
        let n: i64 = self
            .c
            .query_row(&format!("SELECT COUNT(*) FROM sbtest{table}"), [], |r| r.get(0))
            .map_err(|e| classify(&e))?;
        Ok(Some(n as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64) -> Row {
        Row {
            id,
            k: id * 10,
            c: format!("c{id}"),
            pad: "p".into(),
        }
    }

    #[test]
    fn statements_run_and_errors_are_classified() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = open(dir.path().join("t.db").to_str().expect("utf-8")).expect("open");
        let mut c = db.connect().expect("connect");
        assert_eq!(c.table_rows(1).expect("rows"), None);
        c.create_table(1).expect("create");
        c.load(1, &(1..=50).map(row).collect::<Vec<_>>()).expect("load");
        c.create_index(1).expect("index");
        assert_eq!(c.table_rows(1).expect("rows"), Some(50));
        assert_eq!(c.exec(1, Stmt::PointSelect, &[Arg::Int(7)]).expect("select"), 1);
        assert_eq!(c.exec(1, Stmt::SimpleRange, &[Arg::Int(45), Arg::Int(144)]).expect("range"), 6);
        assert_eq!(c.exec(1, Stmt::SumRange, &[Arg::Int(1), Arg::Int(10)]).expect("sum"), 1);
        assert_eq!(c.exec(1, Stmt::IndexUpdate, &[Arg::Int(3)]).expect("update"), 1);
        let dup = c
            .exec(
                1,
                Stmt::Insert,
                &[Arg::Int(3), Arg::Int(1), Arg::Text("x".into()), Arg::Text("y".into())],
            )
            .expect_err("duplicate");
        assert_eq!(dup.class, ErrorClass::DuplicateKey, "{dup}");

        // A second connection writing while the first holds the write lock: busy → deadlock class.
        let mut other = db.connect().expect("connect");
        c.begin().expect("begin");
        c.exec(1, Stmt::Delete, &[Arg::Int(4)]).expect("delete");
        let busy = other.exec(1, Stmt::Delete, &[Arg::Int(5)]).expect_err("busy");
        assert_eq!(busy.class, ErrorClass::Deadlock, "{busy}");
        c.rollback().expect("rollback");
        assert_eq!(c.table_rows(1).expect("rows"), Some(50));
        c.drop_table(1).expect("drop");
        assert_eq!(c.table_rows(1).expect("rows"), None);
    }

    #[test]
    fn a_second_writer_waits_for_the_first_instead_of_failing() {
        let dir = tempfile::tempdir().expect("tmp");
        let db = open(dir.path().join("t.db").to_str().expect("utf-8")).expect("open");
        let mut a = db.connect().expect("connect");
        a.create_table(1).expect("create");
        a.load(1, &(1..=10).map(row).collect::<Vec<_>>()).expect("load");
        let mut b = db.connect().expect("connect");
        // a holds the write lock; b's BEGIN IMMEDIATE waits in line until a commits.
        a.begin_write().expect("begin immediate");
        a.exec(1, Stmt::IndexUpdate, &[Arg::Int(1)]).expect("update");
        let waiter = std::thread::spawn(move || {
            b.begin_write()?;
            b.exec(1, Stmt::PointSelect, &[Arg::Int(1)])?;
            b.exec(1, Stmt::IndexUpdate, &[Arg::Int(1)])?;
            b.commit()
        });
        std::thread::sleep(Duration::from_millis(50));
        a.commit().expect("commit");
        waiter
            .join()
            .expect("thread")
            .expect("the second writer got the lock once the first committed");
        let check = Connection::open(dir.path().join("t.db")).expect("check");
        let k: i64 = check.query_row("SELECT k FROM sbtest1 WHERE id = 1", [], |r| r.get(0)).expect("k");
        assert_eq!(k, 12, "both updates committed");
    }
}
