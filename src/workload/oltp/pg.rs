//! PostgreSQL as an OLTP [`Database`](super::backend::Database).
//!
//! Each [`Conn`] owns a tokio-postgres client and a current-thread tokio runtime that drives it:
//! a statement is one `block_on` on the worker's own thread, with no thread hand-off. Statements
//! are prepared once per connection (binary parameters and results); `BEGIN`/`COMMIT` go through
//! the simple-query protocol (one message each). A SELECT's row count is taken from the server's
//! command tag, so no row is decoded.

use std::time::Duration;

use tokio::runtime::Runtime;
use tokio::task::JoinHandle;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{IsNull, ToSql, Type};
use tokio_postgres::{Client, Config, NoTls, Statement};

use super::backend::{Arg, Conn, Database, DbError, ErrorClass, Row, Stmt};
use crate::util::redact::url_password;

/// How long a connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one statement may take before the connection is declared lost.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);

/// Open `postgres://user:password@host:port/dbname` (or `postgresql://`, or a key=value string).
pub fn open(url: &str) -> Result<Box<dyn Database>, DbError> {
    let shown = url_password(url);
    let mut config: Config = url
        .parse()
        .map_err(|e| DbError::new(ErrorClass::Other, format!("{shown}: not a PostgreSQL URL ({e})")))?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    Ok(Box::new(Postgres { config, shown }))
}

struct Postgres {
    config: Config,
    shown: String,
}

impl Database for Postgres {
    fn describe(&self) -> String {
        self.shown.clone()
    }

    fn connect(&self) -> Result<Box<dyn Conn>, DbError> {
        let rt = runtime()?;
        let connecting = async { tokio::time::timeout(CONNECT_TIMEOUT, self.config.connect(NoTls)).await };
        let (client, connection) = match rt.block_on(connecting) {
            Ok(Ok(pair)) => pair,
            Ok(Err(e)) => {
                let e = classify(&e);
                return Err(DbError::new(e.class, format!("cannot connect to {}: {}", self.shown, e.message)));
            }
            Err(_) => {
                return Err(DbError::new(
                    ErrorClass::ConnectionLost,
                    format!("cannot connect to {}: no answer within {CONNECT_TIMEOUT:?}", self.shown),
                ))
            }
        };
        let task = rt.spawn(async move {
            let _ = connection.await;
        });
        Ok(Box::new(PgConn {
            rt,
            client: Some(client),
            task: Some(task),
            stmts: Vec::new(),
            lost: None,
        }))
    }
}

fn runtime() -> Result<Runtime, DbError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| DbError::new(ErrorClass::Other, format!("cannot start the client's event loop: {e}")))
}

/// Sort a tokio-postgres error into a class by its SQLSTATE, or as a lost connection when the
/// socket broke.
fn classify(e: &tokio_postgres::Error) -> DbError {
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        let class = if *code == SqlState::T_R_DEADLOCK_DETECTED || *code == SqlState::T_R_SERIALIZATION_FAILURE {
            ErrorClass::Deadlock
        } else if *code == SqlState::UNIQUE_VIOLATION {
            ErrorClass::DuplicateKey
        } else if *code == SqlState::TOO_MANY_CONNECTIONS {
            ErrorClass::TooManyConnections
        } else if code.code().starts_with("08") || code.code().starts_with("57P") {
            // connection exceptions and operator intervention (admin shutdown, crash shutdown)
            ErrorClass::ConnectionLost
        } else {
            ErrorClass::Other
        };
        return DbError::new(class, format!("{} (SQLSTATE {})", db.message(), code.code()));
    }
    let lost = e.is_closed() || error_chain_has_io(e);
    let class = if lost { ErrorClass::ConnectionLost } else { ErrorClass::Other };
    DbError::new(class, e.to_string())
}

fn error_chain_has_io(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = e.source();
    while let Some(s) = source {
        if s.is::<std::io::Error>() {
            return true;
        }
        source = s.source();
    }
    false
}

/// The SQL of a statement on `sbtest<table>` in PostgreSQL's dialect.
fn sql(stmt: Stmt, table: u32) -> String {
    match stmt {
        Stmt::PointSelect => format!("SELECT c FROM sbtest{table} WHERE id = $1"),
        Stmt::SimpleRange => format!("SELECT c FROM sbtest{table} WHERE id BETWEEN $1 AND $2"),
        Stmt::SumRange => format!("SELECT SUM(k) FROM sbtest{table} WHERE id BETWEEN $1 AND $2"),
        Stmt::OrderRange => format!("SELECT c FROM sbtest{table} WHERE id BETWEEN $1 AND $2 ORDER BY c"),
        Stmt::DistinctRange => {
            format!("SELECT DISTINCT c FROM sbtest{table} WHERE id BETWEEN $1 AND $2 ORDER BY c")
        }
        Stmt::IndexUpdate => format!("UPDATE sbtest{table} SET k = k + 1 WHERE id = $1"),
        Stmt::NonIndexUpdate => format!("UPDATE sbtest{table} SET c = $2 WHERE id = $1"),
        Stmt::Delete => format!("DELETE FROM sbtest{table} WHERE id = $1"),
        Stmt::Insert => format!("INSERT INTO sbtest{table} (id, k, c, pad) VALUES ($1, $2, $3, $4)"),
    }
}

/// The position of a statement in [`Stmt::ALL`] (its slot in a connection's prepared set).
fn slot(stmt: Stmt) -> usize {
    Stmt::ALL.iter().position(|s| *s == stmt).unwrap_or(0)
}

/// One parameter, bound in binary: the table's integer columns are `INTEGER` (int4).
#[derive(Debug)]
enum Param<'a> {
    Int(i32),
    Text(&'a str),
}

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Param::Int(v) => v.to_sql(ty, out),
            Param::Text(s) => s.to_sql(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        <i32 as ToSql>::accepts(ty) || <&str as ToSql>::accepts(ty)
    }

    fn to_sql_checked(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Param::Int(v) => v.to_sql_checked(ty, out),
            Param::Text(s) => s.to_sql_checked(ty, out),
        }
    }
}

fn params(args: &[Arg]) -> Result<Vec<Param<'_>>, DbError> {
    args.iter()
        .map(|a| match a {
            Arg::Int(v) => i32::try_from(*v)
                .map(Param::Int)
                .map_err(|_| DbError::new(ErrorClass::Other, format!("{v} does not fit the INTEGER columns"))),
            Arg::Text(s) => Ok(Param::Text(s)),
        })
        .collect()
}

struct PgConn {
    rt: Runtime,
    client: Option<Client>,
    task: Option<JoinHandle<()>>,
    /// Prepared statements, `(table - 1) * 9 + slot`.
    stmts: Vec<Option<Statement>>,
    /// Set once the connection broke or timed out: every later call fails at once.
    lost: Option<String>,
}

/// Run one future of the client on the connection's runtime (`$c` is the client), with the
/// statement timeout; a lost connection is remembered.
macro_rules! on_client {
    ($self:ident, $c:ident => $fut:expr) => {{
        let result = match $self.check() {
            Ok($c) => block(&$self.rt, $fut),
            Err(e) => Err(e),
        };
        $self.note(result)
    }};
}

fn block<T>(
    rt: &Runtime,
    fut: impl std::future::Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, DbError> {
    match rt.block_on(async { tokio::time::timeout(STATEMENT_TIMEOUT, fut).await }) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(classify(&e)),
        Err(_) => Err(DbError::new(
            ErrorClass::ConnectionLost,
            format!("no answer from the server within {STATEMENT_TIMEOUT:?}"),
        )),
    }
}

impl PgConn {
    fn check(&self) -> Result<&Client, DbError> {
        match (&self.lost, &self.client) {
            (None, Some(c)) => Ok(c),
            (Some(why), _) => Err(DbError::new(ErrorClass::ConnectionLost, why.clone())),
            (None, None) => Err(DbError::new(ErrorClass::ConnectionLost, "the connection is closed")),
        }
    }

    fn note<T>(&mut self, result: Result<T, DbError>) -> Result<T, DbError> {
        if let Err(e) = &result {
            if e.class == ErrorClass::ConnectionLost && self.lost.is_none() {
                self.lost = Some(e.message.clone());
            }
        }
        result
    }

    fn simple(&mut self, text: &str) -> Result<(), DbError> {
        on_client!(self, c => c.batch_execute(text))
    }

    fn statement(&mut self, table: u32, stmt: Stmt) -> Result<Statement, DbError> {
        let index = (table.max(1) as usize - 1) * Stmt::ALL.len() + slot(stmt);
        if let Some(Some(s)) = self.stmts.get(index) {
            return Ok(s.clone());
        }
        let text = sql(stmt, table);
        let prepared = on_client!(self, c => c.prepare(&text))?;
        if self.stmts.len() <= index {
            self.stmts.resize(index + 1, None);
        }
        self.stmts[index] = Some(prepared.clone());
        Ok(prepared)
    }

    /// Forget the prepared statements of a table that is dropped or recreated.
    fn forget(&mut self, table: u32) {
        let start = (table.max(1) as usize - 1) * Stmt::ALL.len();
        for s in self.stmts.iter_mut().skip(start).take(Stmt::ALL.len()) {
            *s = None;
        }
    }
}

impl Conn for PgConn {
    fn begin(&mut self) -> Result<(), DbError> {
        self.simple("BEGIN")
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.simple("COMMIT")
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        self.simple("ROLLBACK")
    }

    fn exec(&mut self, table: u32, stmt: Stmt, args: &[Arg]) -> Result<u64, DbError> {
        let prepared = self.statement(table, stmt)?;
        let params = params(args)?;
        on_client!(self, c => c.execute_raw(&prepared, params.iter()))
    }

    fn create_table(&mut self, table: u32) -> Result<(), DbError> {
        self.forget(table);
        self.simple(&format!(
            "DROP TABLE IF EXISTS sbtest{table}; CREATE TABLE sbtest{table} (id SERIAL, k INTEGER DEFAULT '0' NOT NULL, \
             c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))"
        ))
    }

    fn load(&mut self, table: u32, rows: &[Row]) -> Result<(), DbError> {
        let mut ids = Vec::with_capacity(rows.len());
        let mut ks = Vec::with_capacity(rows.len());
        for r in rows {
            for v in [r.id, r.k] {
                if i32::try_from(v).is_err() {
                    return Err(DbError::new(ErrorClass::Other, format!("{v} does not fit the INTEGER columns")));
                }
            }
            ids.push(r.id as i32);
            ks.push(r.k as i32);
        }
        let cs: Vec<&str> = rows.iter().map(|r| r.c.as_str()).collect();
        let pads: Vec<&str> = rows.iter().map(|r| r.pad.as_str()).collect();
        let text = format!(
            "INSERT INTO sbtest{table} (id, k, c, pad) SELECT * FROM unnest($1::int4[], $2::int4[], $3::text[], $4::text[])"
        );
        on_client!(self, c => c.execute(&text, &[&ids, &ks, &cs, &pads]))?;
        Ok(())
    }

    fn create_index(&mut self, table: u32) -> Result<(), DbError> {
        self.simple(&format!("CREATE INDEX k_{table} ON sbtest{table}(k)"))?;
        // The ids came with the rows: move the SERIAL sequence past them, as sysbench's own load
        // (which lets the sequence number the rows) leaves it.
        self.simple(&format!(
            "SELECT setval(pg_get_serial_sequence('sbtest{table}', 'id'), GREATEST(COALESCE(MAX(id), 0), 1)) FROM sbtest{table}"
        ))
    }

    fn drop_table(&mut self, table: u32) -> Result<(), DbError> {
        self.forget(table);
        self.simple(&format!("DROP TABLE IF EXISTS sbtest{table}"))
    }

    fn table_rows(&mut self, table: u32) -> Result<Option<u64>, DbError> {
        let name = format!("sbtest{table}");
        let exists: bool = on_client!(self, c => async {
            c.query_one("SELECT to_regclass($1::text) IS NOT NULL", &[&name]).await?.try_get(0)
        })?;
        if !exists {
            return Ok(None);
        }
        let text = format!("SELECT COUNT(*) FROM sbtest{table}");
        let n: i64 = on_client!(self, c => async { c.query_one(&text, &[]).await?.try_get(0) })?;
        Ok(Some(n.max(0) as u64))
    }
}

impl Drop for PgConn {
    fn drop(&mut self) {
        // Dropping the client ends the connection task, which says goodbye (Terminate) to the
        // server; give it a moment so the server does not log an unexpected EOF.
        drop(self.client.take());
        if let Some(task) = self.task.take() {
            let _ = self.rt.block_on(async { tokio::time::timeout(Duration::from_secs(1), task).await });
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
        assert!(err.message.starts_with("postgres://bob@127.0.0.1:notaport/sb: not a PostgreSQL URL"), "{}", err.message);
        assert!(!err.message.contains("hunter2"));
    }

    #[test]
    fn describe_hides_the_password() {
        let db = open("postgres://bob:hunter2@127.0.0.1:5432/sb").expect("parses");
        assert_eq!(db.describe(), "postgres://bob@127.0.0.1:5432/sb");
    }

    #[test]
    fn every_statement_has_its_own_slot_and_sql() {
        let slots: std::collections::HashSet<usize> = Stmt::ALL.iter().map(|s| slot(*s)).collect();
        assert_eq!(slots.len(), Stmt::ALL.len());
        assert_eq!(sql(Stmt::NonIndexUpdate, 3), "UPDATE sbtest3 SET c = $2 WHERE id = $1");
        assert!(params(&[Arg::Int(1 << 40)]).is_err());
    }

    #[test]
    fn nothing_listening_is_a_lost_connection_not_a_hang() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
        let db = open(&format!("postgres://u@127.0.0.1:{port}/sb")).expect("parses");
        let err = db.connect().err().expect("refused");
        assert_eq!(err.class, ErrorClass::ConnectionLost, "{err}");
        assert!(err.message.starts_with(&format!("cannot connect to postgres://u@127.0.0.1:{port}/sb")));
    }
}
