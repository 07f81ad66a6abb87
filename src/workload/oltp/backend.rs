//! What a database must offer the OLTP workload: connections that run sysbench's statements on
//! its tables, inside transactions, with every error sorted into a class.
//!
//! The scenarios (the statement mixes and their ranges) are written once against [`Conn`]; each
//! database (SQLite, PostgreSQL, MySQL/MariaDB) implements [`Database`] and [`Conn`] with its own
//! SQL dialect and prepared statements.

use crate::util::cut::{cut_here, Watched};
use std::fmt;

/// The statements of sysbench's OLTP scenarios, on table `sbtest<N>` (`id`, `k`, `c`, `pad`, a
/// secondary index on `k`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stmt {
    /// `SELECT c FROM sbtestN WHERE id = ?1`
    PointSelect,
    /// `SELECT c FROM sbtestN WHERE id BETWEEN ?1 AND ?2`
    SimpleRange,
    /// `SELECT SUM(k) FROM sbtestN WHERE id BETWEEN ?1 AND ?2`
    SumRange,
    /// `SELECT c FROM sbtestN WHERE id BETWEEN ?1 AND ?2 ORDER BY c`
    OrderRange,
    /// `SELECT DISTINCT c FROM sbtestN WHERE id BETWEEN ?1 AND ?2 ORDER BY c`
    DistinctRange,
    /// `UPDATE sbtestN SET k = k + 1 WHERE id = ?1`
    IndexUpdate,
    /// `UPDATE sbtestN SET c = ?2 WHERE id = ?1`
    NonIndexUpdate,
    /// `DELETE FROM sbtestN WHERE id = ?1`
    Delete,
    /// `INSERT INTO sbtestN (id, k, c, pad) VALUES (?1, ?2, ?3, ?4)`
    Insert,
}

impl Stmt {
    pub const ALL: [Stmt; 9] = [
        Stmt::PointSelect,
        Stmt::SimpleRange,
        Stmt::SumRange,
        Stmt::OrderRange,
        Stmt::DistinctRange,
        Stmt::IndexUpdate,
        Stmt::NonIndexUpdate,
        Stmt::Delete,
        Stmt::Insert,
    ];

    /// sysbench's query classes: a read, a write, or other (begin/commit are counted as other by
    /// the workload itself).
    pub fn is_read(self) -> bool {
        matches!(
            self,
            Stmt::PointSelect | Stmt::SimpleRange | Stmt::SumRange | Stmt::OrderRange | Stmt::DistinctRange
        )
    }

    /// Its position in [`Stmt::ALL`] (its slot in a connection's prepared set and in the stats).
    pub fn slot(self) -> usize {
        Stmt::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }

    /// Its SQL on `sbtest<table>`, the `n`th parameter (from 1) written by `mark`: `?1` for
    /// SQLite, `$1` for PostgreSQL, `?` for MySQL (which binds in the order the marks stand).
    pub fn sql(self, table: u32, mark: fn(u8) -> String) -> String {
        let t = format!("sbtest{table}");
        let (p1, p2) = (mark(1), mark(2));
        match self {
            Stmt::PointSelect => format!("SELECT c FROM {t} WHERE id = {p1}"),
            Stmt::SimpleRange => format!("SELECT c FROM {t} WHERE id BETWEEN {p1} AND {p2}"),
            Stmt::SumRange => format!("SELECT SUM(k) FROM {t} WHERE id BETWEEN {p1} AND {p2}"),
            Stmt::OrderRange => format!("SELECT c FROM {t} WHERE id BETWEEN {p1} AND {p2} ORDER BY c"),
            Stmt::DistinctRange => format!("SELECT DISTINCT c FROM {t} WHERE id BETWEEN {p1} AND {p2} ORDER BY c"),
            Stmt::IndexUpdate => format!("UPDATE {t} SET k = k + 1 WHERE id = {p1}"),
            Stmt::NonIndexUpdate => format!("UPDATE {t} SET c = {p2} WHERE id = {p1}"),
            Stmt::Delete => format!("DELETE FROM {t} WHERE id = {p1}"),
            Stmt::Insert => format!("INSERT INTO {t} (id, k, c, pad) VALUES ({p1}, {p2}, {}, {})", mark(3), mark(4)),
        }
    }
}

/// A statement's parameters, in the order of the `?N` placeholders above.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    Int(i64),
    Text(String),
}

/// One row of `sbtestN`, for the bulk load.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub id: i64,
    pub k: i64,
    pub c: String,
    pub pad: String,
}

/// How a database error is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorClass {
    /// A deadlock or a serialization failure (SQLite: busy/locked): the transaction is rolled back
    /// and retried, and counted.
    Deadlock,
    /// A duplicate key on insert.
    DuplicateKey,
    /// The server refused the connection for its connection limit.
    TooManyConnections,
    /// The connection broke (the server went away): reconnected, and counted.
    ConnectionLost,
    /// Anything else.
    Other,
}

impl ErrorClass {
    /// The name used in metric names and reports (`errors_deadlock`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Deadlock => "deadlock",
            ErrorClass::DuplicateKey => "duplicate_key",
            ErrorClass::TooManyConnections => "too_many_connections",
            ErrorClass::ConnectionLost => "connection_lost",
            ErrorClass::Other => "other",
        }
    }
}

/// A database error with its class and the server's own message.
#[derive(Clone, Debug)]
pub struct DbError {
    pub class: ErrorClass,
    pub message: String,
}

impl DbError {
    pub fn new(class: ErrorClass, message: impl Into<String>) -> DbError {
        DbError {
            class,
            message: message.into(),
        }
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.class.name(), self.message)
    }
}

impl std::error::Error for DbError {}

/// One connection, owned by one worker thread. Tables are numbered from 1 (`sbtest1`).
pub trait Conn: Send {
    fn begin(&mut self) -> Result<(), DbError>;
    /// Begin a transaction that will write. A database whose deferred transaction takes its write
    /// lock only at the first write (SQLite) takes it here, so that two writers queue for the lock
    /// instead of failing to upgrade; the others begin as [`begin`](Self::begin) does.
    fn begin_write(&mut self) -> Result<(), DbError> {
        self.begin()
    }
    fn commit(&mut self) -> Result<(), DbError>;
    fn rollback(&mut self) -> Result<(), DbError>;
    /// Run one statement on `sbtest<table>`; returns the rows it read (selects: rows returned; a
    /// SUM: 1) or changed (updates, deletes, inserts).
    fn exec(&mut self, table: u32, stmt: Stmt, args: &[Arg]) -> Result<u64, DbError>;

    /// Schema: drop `sbtest<table>` if it exists, and create it empty (without the index on `k`).
    fn create_table(&mut self, table: u32) -> Result<(), DbError>;
    /// Bulk-load rows into `sbtest<table>` (one call per batch of a few thousand rows).
    fn load(&mut self, table: u32, rows: &[Row]) -> Result<(), DbError>;
    /// Create the secondary index on `k` (after the load, as sysbench does).
    fn create_index(&mut self, table: u32) -> Result<(), DbError>;
    /// Drop `sbtest<table>` if it exists.
    fn drop_table(&mut self, table: u32) -> Result<(), DbError>;
    /// `SELECT COUNT(*)` of `sbtest<table>`, or None when the table does not exist.
    fn table_rows(&mut self, table: u32) -> Result<Option<u64>, DbError>;
}

/// One database, from its `db` URL: hands out connections.
pub trait Database: Send + Sync {
    /// `sqlite:/path`, `postgres://user@host:port/db` with the password removed, ...
    fn describe(&self) -> String;
    fn connect(&self) -> Result<Box<dyn Conn>, DbError>;
    /// Whether tables may be loaded by several connections at once (SQLite has one writer: no).
    fn parallel_load(&self) -> bool {
        true
    }
    /// How the last connection was secured and authenticated (None: not a network database, or
    /// no connection yet).
    fn session(&self) -> Option<Session> {
        None
    }
}

/// How a connection to a database server is secured and authenticated: the run's facts, so that
/// two runs with and without TLS are told apart.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Session {
    /// The TLS version and cipher suite, None when the connection is not encrypted.
    pub tls: Option<(String, String)>,
    /// The authentication method (`SCRAM-SHA-256-PLUS`, `caching_sha2_password`, `trust`...).
    pub auth: String,
}

impl fmt::Display for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.tls {
            Some((version, cipher)) => write!(f, "{version} {cipher}, {}", self.auth),
            None => write!(f, "no TLS, {}", self.auth),
        }
    }
}

/// A TCP connection to `host:port` (each address it resolves to in turn, `timeout` each), with
/// Nagle off: a refusal, a timeout or a name that does not resolve is a lost connection. The socket
/// is held by the thread's cut (`util::cut`), so that a server that never accepts or never answers
/// cannot keep the worker past the end of the run or a Ctrl-C.
pub fn connect_tcp(host: &str, port: u16, timeout: std::time::Duration) -> Result<Watched<std::net::TcpStream>, DbError> {
    use std::net::ToSocketAddrs;
    let addrs = (host, port)
        .to_socket_addrs()
        .map_err(|e| DbError::new(ErrorClass::ConnectionLost, format!("cannot resolve {host}: {e}")))?;
    let mut last = None;
    for addr in addrs {
        let s = match socket2::Socket::new(socket2::Domain::for_address(addr), socket2::Type::STREAM, None) {
            Ok(s) => Watched::new(s),
            Err(e) => return Err(DbError::new(ErrorClass::ConnectionLost, e.to_string())),
        };
        match s.connect_timeout(&addr.into(), timeout) {
            Ok(()) => {
                let s = s.map(std::net::TcpStream::from);
                s.set_nodelay(true)
                    .map_err(|e| DbError::new(ErrorClass::ConnectionLost, e.to_string()))?;
                return Ok(s);
            }
            Err(e) => last = Some(cut_or(e.to_string())),
        }
    }
    Err(DbError::new(
        ErrorClass::ConnectionLost,
        last.unwrap_or_else(|| "no address".to_string()),
    ))
}

/// `message`, unless the call failed because the run's cut ended it: then what the cut says.
pub fn cut_or(message: String) -> String {
    match cut_here() {
        Some(why) => why.said().to_string(),
        None => message,
    }
}
