//! PostgreSQL as an OLTP [`Database`].
//!
//! Each [`Conn`] speaks PostgreSQL's wire protocol itself over a blocking socket on the worker's
//! own thread (`pg_wire.rs`; messages encoded and decoded by `postgres-protocol`, the URL parsed
//! by `db_url.rs`): a statement is one write and one read, with no event loop and no
//! thread hand-off, which is what keeps the client's CPU per transaction low. Statements are
//! prepared once per connection (the Parse travels in the same write as their first execution);
//! parameters and results are in text format, as libpq sends them; a SELECT's row count comes from
//! the server's command tag, so no row is decoded. `BEGIN` is held back and sent in the same
//! write as the transaction's first statement (the protocol runs them in order), which saves a
//! round trip per transaction. A read or write that waits longer than the statement timeout, or
//! a broken socket, is a lost connection.

use std::sync::Mutex;

use bytes::{BufMut, BytesMut};
use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::DataRowBody;
use postgres_protocol::message::frontend;
use postgres_protocol::IsNull;

use super::backend::{Arg, Conn, Database, DbError, ErrorClass, Row, Session, Stmt};
use super::db_url;
use super::pg_start;
use super::pg_wire::{lost, Wire};
use crate::util::redact::redact_url;

/// Open `postgres://user:password@host:port/dbname` (or `postgresql://`, or a key=value string),
/// with libpq's connection keys (`pg_start::KEYS`).
pub fn open(url: &str) -> Result<Box<dyn Database>, DbError> {
    let shown = redact_url(url);
    let bad = |e: String| DbError::new(ErrorClass::Other, format!("{shown}: not a PostgreSQL URL ({e})"));
    let u = db_url::parse(url).map_err(bad)?;
    u.only_params(pg_start::KEYS).map_err(bad)?;
    let Some(user) = u.user.clone() else {
        return Err(DbError::new(ErrorClass::Other, format!("{shown}: the URL names no user")));
    };
    let host = match u.host.as_str() {
        "" => "localhost".to_string(),
        h if h.starts_with('/') => {
            return Err(DbError::new(
                ErrorClass::Other,
                format!("{shown}: a Unix-socket host is not supported; give a TCP host such as 127.0.0.1"),
            ))
        }
        h => h.to_string(),
    };
    let start = pg_start::settings(&u, user, host).map_err(|e| DbError::new(ErrorClass::Other, format!("{shown}: {e}")))?;
    Ok(Box::new(Postgres {
        start,
        shown,
        session: Mutex::new(None),
    }))
}

struct Postgres {
    start: pg_start::Start,
    shown: String,
    /// How the last connection was secured and authenticated.
    session: Mutex<Option<Session>>,
}

impl Database for Postgres {
    fn describe(&self) -> String {
        self.shown.clone()
    }

    fn connect(&self) -> Result<Box<dyn Conn>, DbError> {
        match self.start.connect() {
            Ok((wire, session)) => {
                if let Ok(mut last) = self.session.lock() {
                    *last = Some(session);
                }
                Ok(Box::new(PgConn::new(wire)) as Box<dyn Conn>)
            }
            Err(e) => Err(DbError::new(e.class, format!("cannot connect to {}: {}", self.shown, e.message))),
        }
    }

    fn session(&self) -> Option<Session> {
        self.session.lock().ok()?.clone()
    }
}

/// The SQL of a statement on `sbtest<table>` in PostgreSQL's dialect (`$1`, `$2`, ...).
fn sql(stmt: Stmt, table: u32) -> String {
    stmt.sql(table, |n| format!("${n}"))
}

/// A text literal for the bulk load's INSERT (`standard_conforming_strings` is on).
fn literal(s: &str, out: &mut String) {
    out.push('\'');
    out.push_str(&s.replace('\'', "''"));
    out.push('\'');
}

/// The decimal text of `v` (as libpq sends an integer parameter), written from the end of `buf`.
fn decimal(v: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut n = v.unsigned_abs();
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
}

fn push_decimal(out: &mut String, v: i64) {
    let mut digits = [0u8; 20];
    out.push_str(std::str::from_utf8(decimal(v, &mut digits)).unwrap_or("0"));
}

struct PgConn {
    wire: Wire,
    /// The current statement's name (`s<index>`), reused so a statement allocates nothing.
    name: String,
    /// Which statements this connection has prepared (named `s<index>`), `(table - 1) * 9 + slot`.
    prepared: Vec<bool>,
    /// `begin` was called: BEGIN goes out with the next message.
    begin_pending: bool,
    /// Set once the connection broke or timed out: every later call fails at once.
    lost: Option<String>,
}

impl PgConn {
    fn new(wire: Wire) -> PgConn {
        PgConn {
            wire,
            name: String::with_capacity(8),
            prepared: Vec::new(),
            begin_pending: false,
            lost: None,
        }
    }

    /// Send what is in the write buffer (after a held-back BEGIN) and read the answers.
    fn round_trip(&mut self, on_row: Option<&mut dyn FnMut(&DataRowBody)>) -> Result<u64, DbError> {
        if let Some(why) = &self.lost {
            self.wire.wbuf.clear();
            return Err(DbError::new(ErrorClass::ConnectionLost, why.clone()));
        }
        let begin = std::mem::take(&mut self.begin_pending);
        let result = self.wire.send().and_then(|()| {
            let began = if begin { self.wire.until_ready().map(|_| ()) } else { Ok(()) };
            let rows = self.wire.until_ready_rows(on_row);
            began.and(rows)
        });
        if let Err(e) = &result {
            if e.class == ErrorClass::ConnectionLost {
                self.lost = Some(e.message.clone());
            }
        }
        result
    }

    /// Queue the held-back BEGIN in front of a statement, in the extended protocol and without a
    /// Sync of its own (parsed as the unnamed statement, as a simple query would be, bound and
    /// executed): the server answers both with one ReadyForQuery and one write, so the client
    /// wakes once.
    fn queue_extended_begin(&mut self) -> Result<(), DbError> {
        if !std::mem::take(&mut self.begin_pending) {
            return Ok(());
        }
        let wbuf = &mut self.wire.wbuf;
        frontend::parse("", "BEGIN", std::iter::empty(), wbuf).map_err(lost)?;
        let no_values = std::iter::empty::<()>();
        frontend::bind(
            "",
            "",
            std::iter::empty(),
            no_values,
            |(), _| Ok(IsNull::No),
            std::iter::empty(),
            wbuf,
        )
        .map_err(|_| DbError::new(ErrorClass::Other, "cannot encode BEGIN"))?;
        frontend::execute("", 0, wbuf).map_err(lost)?;
        Ok(())
    }

    /// Queue the held-back BEGIN (a simple query with its own answer) in front of the next message.
    fn queue_begin(&mut self) {
        if self.begin_pending {
            let _ = frontend::query("BEGIN", &mut self.wire.wbuf);
        }
    }

    fn simple(&mut self, text: &str) -> Result<u64, DbError> {
        self.simple_rows(text, None)
    }

    fn simple_rows(&mut self, text: &str, on_row: Option<&mut dyn FnMut(&DataRowBody)>) -> Result<u64, DbError> {
        self.queue_begin();
        frontend::query(text, &mut self.wire.wbuf).map_err(lost)?;
        self.round_trip(on_row)
    }

    /// The first column of the first row a simple query returns, as text.
    fn scalar(&mut self, text: &str) -> Result<Option<String>, DbError> {
        let mut value = None;
        let mut first = |row: &DataRowBody| {
            if value.is_none() {
                if let Ok(Some(Some(range))) = row.ranges().next() {
                    value = Some(String::from_utf8_lossy(&row.buffer()[range]).into_owned());
                }
            }
        };
        self.simple_rows(text, Some(&mut first))?;
        Ok(value)
    }

    /// Forget the prepared statements of a table that is dropped or recreated.
    fn forget(&mut self, table: u32) -> Result<(), DbError> {
        let start = (table.max(1) as usize - 1) * Stmt::ALL.len();
        let mut any = false;
        for i in start..(start + Stmt::ALL.len()).min(self.prepared.len()) {
            if std::mem::take(&mut self.prepared[i]) {
                frontend::close(b'S', &format!("s{i}"), &mut self.wire.wbuf).map_err(lost)?;
                any = true;
            }
        }
        if any {
            frontend::sync(&mut self.wire.wbuf);
            self.round_trip(None)?;
        }
        Ok(())
    }
}

impl Conn for PgConn {
    fn begin(&mut self) -> Result<(), DbError> {
        if let Some(why) = &self.lost {
            return Err(DbError::new(ErrorClass::ConnectionLost, why.clone()));
        }
        self.begin_pending = true;
        Ok(())
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.simple("COMMIT").map(|_| ())
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        if std::mem::take(&mut self.begin_pending) {
            return Ok(());
        }
        self.simple("ROLLBACK").map(|_| ())
    }

    fn exec(&mut self, table: u32, stmt: Stmt, args: &[Arg]) -> Result<u64, DbError> {
        let index = (table.max(1) as usize - 1) * Stmt::ALL.len() + stmt.slot();
        self.name.clear();
        self.name.push('s');
        push_decimal(&mut self.name, index as i64);
        self.queue_extended_begin()?;
        let name = &self.name;
        let fresh = !self.prepared.get(index).copied().unwrap_or(false);
        if fresh {
            frontend::parse(name, &sql(stmt, table), std::iter::empty(), &mut self.wire.wbuf).map_err(lost)?;
        }
        let bound = frontend::bind(
            "",
            name,
            std::iter::empty(),
            args,
            |arg, buf: &mut BytesMut| {
                match arg {
                    Arg::Int(v) => {
                        let mut digits = [0u8; 20];
                        buf.put_slice(decimal(*v, &mut digits));
                    }
                    Arg::Text(s) => buf.put_slice(s.as_bytes()),
                }
                Ok(IsNull::No)
            },
            std::iter::empty(),
            &mut self.wire.wbuf,
        );
        if bound.is_err() {
            self.wire.wbuf.clear();
            self.begin_pending = false;
            return Err(DbError::new(ErrorClass::Other, format!("cannot encode the parameters of {stmt:?}")));
        }
        frontend::execute("", 0, &mut self.wire.wbuf).map_err(lost)?;
        frontend::sync(&mut self.wire.wbuf);
        let result = self.round_trip(None);
        if fresh && result.is_ok() {
            if self.prepared.len() <= index {
                self.prepared.resize(index + 1, false);
            }
            self.prepared[index] = true;
        }
        result
    }

    fn create_table(&mut self, table: u32) -> Result<(), DbError> {
        self.forget(table)?;
        self.simple(&format!(
            "DROP TABLE IF EXISTS sbtest{table}; CREATE TABLE sbtest{table} (id SERIAL, k INTEGER DEFAULT '0' NOT NULL, \
             c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))"
        ))
        .map(|_| ())
    }

    fn load(&mut self, table: u32, rows: &[Row]) -> Result<(), DbError> {
        if rows.is_empty() {
            return Ok(());
        }
        let mut text = format!("INSERT INTO sbtest{table} (id, k, c, pad) VALUES ");
        for (i, r) in rows.iter().enumerate() {
            if i > 0 {
                text.push_str(", ");
            }
            text.push_str(&format!("({}, {}, ", r.id, r.k));
            literal(&r.c, &mut text);
            text.push_str(", ");
            literal(&r.pad, &mut text);
            text.push(')');
        }
        self.simple(&text).map(|_| ())
    }

    fn create_index(&mut self, table: u32) -> Result<(), DbError> {
        self.simple(&format!("CREATE INDEX k_{table} ON sbtest{table}(k)"))?;
        // The ids came with the rows: move the SERIAL sequence past them, as sysbench's own load
        // (which lets the sequence number the rows) leaves it.
        self.simple(&format!(
            "SELECT setval(pg_get_serial_sequence('sbtest{table}', 'id'), GREATEST(COALESCE(MAX(id), 0), 1)) FROM sbtest{table}"
        ))
        .map(|_| ())
    }

    fn drop_table(&mut self, table: u32) -> Result<(), DbError> {
        self.forget(table)?;
        self.simple(&format!("DROP TABLE IF EXISTS sbtest{table}")).map(|_| ())
    }

    fn table_rows(&mut self, table: u32) -> Result<Option<u64>, DbError> {
        let exists = self.scalar(&format!("SELECT to_regclass('sbtest{table}') IS NOT NULL"))?;
        if exists.as_deref() != Some("t") {
            return Ok(None);
        }
        let n = self.scalar(&format!("SELECT COUNT(*) FROM sbtest{table}"))?;
        Ok(n.and_then(|n| n.parse().ok()))
    }
}

impl Drop for PgConn {
    fn drop(&mut self) {
        // Say goodbye (Terminate) so the server does not log an unexpected EOF.
        if self.lost.is_none() {
            self.wire.wbuf.clear();
            frontend::terminate(&mut self.wire.wbuf);
            let _ = self.wire.send();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_url_is_one_line_without_the_password() {
        let err = open("postgres://bob:hunter2@127.0.0.1:notaport/sb").err().expect("refused");
        assert_eq!(err.class, ErrorClass::Other);
        assert!(
            err.message
                .starts_with("postgres://bob:[redacted]@127.0.0.1:notaport/sb: not a PostgreSQL URL"),
            "{}",
            err.message
        );
        assert!(!err.message.contains("hunter2"));
    }

    #[test]
    fn describe_hides_the_password() {
        let db = open("postgres://bob:hunter2@127.0.0.1:5432/sb").expect("parses");
        assert_eq!(db.describe(), "postgres://bob:[redacted]@127.0.0.1:5432/sb");
    }

    #[test]
    fn every_statement_has_its_own_slot_and_sql() {
        let slots: std::collections::HashSet<usize> = Stmt::ALL.iter().map(|s| s.slot()).collect();
        assert_eq!(slots.len(), Stmt::ALL.len());
        assert_eq!(sql(Stmt::NonIndexUpdate, 3), "UPDATE sbtest3 SET c = $2 WHERE id = $1");
        for v in [0, 7, -7, 1234567890, i64::MIN, i64::MAX] {
            let mut digits = [0u8; 20];
            assert_eq!(decimal(v, &mut digits), v.to_string().as_bytes());
        }
        let mut text = String::new();
        literal("it's", &mut text);
        assert_eq!(text, "'it''s'");
    }

    #[test]
    fn nothing_listening_is_a_lost_connection_not_a_hang() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("bind")
            .local_addr()
            .expect("addr")
            .port();
        let db = open(&format!("postgres://u@127.0.0.1:{port}/sb")).expect("parses");
        let err = db.connect().err().expect("refused");
        assert_eq!(err.class, ErrorClass::ConnectionLost, "{err}");
        assert!(err
            .message
            .starts_with(&format!("cannot connect to postgres://u@127.0.0.1:{port}/sb")));
    }
}
