//! MySQL and MariaDB as an OLTP [`Database`].
//!
//! Each [`Conn`] owns a mysql_async connection and a current-thread tokio runtime that drives it
//! (one `block_on` per statement on the worker's own thread). Statements are prepared once per
//! connection (binary protocol); `BEGIN`/`COMMIT` are text queries. The connection stays on TCP
//! (no switch to the server's Unix socket), as sysbench does with `--mysql-host`.

use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysql_async::{Opts, OptsBuilder, Params, Statement, Value};
use tokio::runtime::Runtime;

use super::backend::{Arg, Conn, Database, DbError, ErrorClass, Row, Stmt};
use crate::util::redact::redact_url;

/// How long a connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one statement may take before the connection is declared lost.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);
/// Rows per INSERT of the bulk load (4 placeholders each, well under the protocol's 65 535).
const LOAD_CHUNK: usize = 1000;

/// Open `mysql://user:password@host:port/dbname` (MySQL or MariaDB).
pub fn open(url: &str) -> Result<Box<dyn Database>, DbError> {
    let shown = redact_url(url);
    let opts = Opts::from_url(url).map_err(|e| DbError::new(ErrorClass::Other, format!("{shown}: not a MySQL URL ({e})")))?;
    // Prepared statements stay in the connection's cache (9 per table), on TCP.
    let opts: Opts = OptsBuilder::from_opts(opts).stmt_cache_size(4096).prefer_socket(false).into();
    Ok(Box::new(Mysql { opts, shown }))
}

struct Mysql {
    opts: Opts,
    shown: String,
}

impl Database for Mysql {
    fn describe(&self) -> String {
        self.shown.clone()
    }

    fn connect(&self) -> Result<Box<dyn Conn>, DbError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| DbError::new(ErrorClass::Other, format!("cannot start the client's event loop: {e}")))?;
        let connecting = async { tokio::time::timeout(CONNECT_TIMEOUT, mysql_async::Conn::new(self.opts.clone())).await };
        let conn = match rt.block_on(connecting) {
            Ok(Ok(conn)) => conn,
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
        Ok(Box::new(MyConn {
            rt,
            conn: Some(conn),
            stmts: Vec::new(),
            lost: None,
        }))
    }
}

/// Sort a mysql_async error into a class by the server's error number, or as a lost connection
/// when the socket broke.
fn classify(e: &mysql_async::Error) -> DbError {
    match e {
        mysql_async::Error::Server(s) => {
            let class = match s.code {
                1213 | 1205 => ErrorClass::Deadlock,
                1062 => ErrorClass::DuplicateKey,
                1040 => ErrorClass::TooManyConnections,
                // server shutdown in progress, connection killed, lost or gone away
                1053 | 1927 | 2006 | 2013 => ErrorClass::ConnectionLost,
                _ => ErrorClass::Other,
            };
            DbError::new(class, format!("{} (error {})", s.message, s.code))
        }
        mysql_async::Error::Io(io) => DbError::new(ErrorClass::ConnectionLost, io.to_string()),
        mysql_async::Error::Driver(d) => {
            let class = match d {
                mysql_async::DriverError::ConnectionClosed | mysql_async::DriverError::PacketOutOfOrder => ErrorClass::ConnectionLost,
                _ => ErrorClass::Other,
            };
            DbError::new(class, d.to_string())
        }
        other => DbError::new(ErrorClass::Other, other.to_string()),
    }
}

/// The SQL of a statement on `sbtest<table>` in MySQL's dialect.
fn sql(stmt: Stmt, table: u32) -> String {
    match stmt {
        Stmt::PointSelect => format!("SELECT c FROM sbtest{table} WHERE id = ?"),
        Stmt::SimpleRange => format!("SELECT c FROM sbtest{table} WHERE id BETWEEN ? AND ?"),
        Stmt::SumRange => format!("SELECT SUM(k) FROM sbtest{table} WHERE id BETWEEN ? AND ?"),
        Stmt::OrderRange => format!("SELECT c FROM sbtest{table} WHERE id BETWEEN ? AND ? ORDER BY c"),
        Stmt::DistinctRange => format!("SELECT DISTINCT c FROM sbtest{table} WHERE id BETWEEN ? AND ? ORDER BY c"),
        Stmt::IndexUpdate => format!("UPDATE sbtest{table} SET k = k + 1 WHERE id = ?"),
        // `?2` comes first in the contract's order: bind (c, id) by reordering in `params`.
        Stmt::NonIndexUpdate => format!("UPDATE sbtest{table} SET c = ? WHERE id = ?"),
        Stmt::Delete => format!("DELETE FROM sbtest{table} WHERE id = ?"),
        Stmt::Insert => format!("INSERT INTO sbtest{table} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
    }
}

fn value(a: &Arg) -> Value {
    match a {
        Arg::Int(v) => Value::Int(*v),
        Arg::Text(s) => Value::Bytes(s.as_bytes().to_vec()),
    }
}

/// The parameters in the order of the `?` marks of [`sql`].
fn params(stmt: Stmt, args: &[Arg]) -> Params {
    let mut values: Vec<Value> = args.iter().map(value).collect();
    if stmt == Stmt::NonIndexUpdate && values.len() == 2 {
        values.swap(0, 1);
    }
    if values.is_empty() {
        Params::Empty
    } else {
        Params::Positional(values)
    }
}

fn slot(stmt: Stmt) -> usize {
    Stmt::ALL.iter().position(|s| *s == stmt).unwrap_or(0)
}

struct MyConn {
    rt: Runtime,
    conn: Option<mysql_async::Conn>,
    /// Prepared statements, `(table - 1) * 9 + slot`.
    stmts: Vec<Option<Statement>>,
    /// Set once the connection broke or timed out: every later call fails at once.
    lost: Option<String>,
}

/// Run one future of the connection on its runtime (`$c` is the connection), with the statement
/// timeout; a lost connection is remembered.
macro_rules! on_conn {
    ($self:ident, $c:ident => $fut:expr) => {{
        let result = match (&$self.lost, $self.conn.as_mut()) {
            (None, Some($c)) => match $self.rt.block_on(async { tokio::time::timeout(STATEMENT_TIMEOUT, $fut).await }) {
                Ok(Ok(v)) => Ok(v),
                Ok(Err(e)) => Err(classify(&e)),
                Err(_) => Err(DbError::new(
                    ErrorClass::ConnectionLost,
                    format!("no answer from the server within {STATEMENT_TIMEOUT:?}"),
                )),
            },
            (Some(why), _) => Err(DbError::new(ErrorClass::ConnectionLost, why.clone())),
            (None, None) => Err(DbError::new(ErrorClass::ConnectionLost, "the connection is closed")),
        };
        $self.note(result)
    }};
}

impl MyConn {
    fn note<T>(&mut self, result: Result<T, DbError>) -> Result<T, DbError> {
        if let Err(e) = &result {
            if e.class == ErrorClass::ConnectionLost && self.lost.is_none() {
                self.lost = Some(e.message.clone());
            }
        }
        result
    }

    fn text(&mut self, query: &str) -> Result<(), DbError> {
        on_conn!(self, c => c.query_drop(query))
    }

    fn statement(&mut self, table: u32, stmt: Stmt) -> Result<Statement, DbError> {
        let index = (table.max(1) as usize - 1) * Stmt::ALL.len() + slot(stmt);
        if let Some(Some(s)) = self.stmts.get(index) {
            return Ok(s.clone());
        }
        let text = sql(stmt, table);
        let prepared = on_conn!(self, c => c.prep(text.as_str()))?;
        if self.stmts.len() <= index {
            self.stmts.resize(index + 1, None);
        }
        self.stmts[index] = Some(prepared.clone());
        Ok(prepared)
    }

    /// Close the prepared statements of a table that is dropped or recreated.
    fn forget(&mut self, table: u32) {
        let start = (table.max(1) as usize - 1) * Stmt::ALL.len();
        let old: Vec<Statement> = self
            .stmts
            .iter_mut()
            .skip(start)
            .take(Stmt::ALL.len())
            .filter_map(Option::take)
            .collect();
        for s in old {
            let _ = on_conn!(self, c => c.close(s));
        }
    }
}

impl Conn for MyConn {
    fn begin(&mut self) -> Result<(), DbError> {
        self.text("BEGIN")
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.text("COMMIT")
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        self.text("ROLLBACK")
    }

    fn exec(&mut self, table: u32, stmt: Stmt, args: &[Arg]) -> Result<u64, DbError> {
        let prepared = self.statement(table, stmt)?;
        let params = params(stmt, args);
        if stmt.is_read() {
            on_conn!(self, c => async {
                let result = c.exec_iter(&prepared, params).await?;
                result.reduce_and_drop(0u64, |n, _row: mysql_async::Row| n + 1).await
            })
        } else {
            on_conn!(self, c => async {
                c.exec_drop(&prepared, params).await?;
                Ok::<u64, mysql_async::Error>(c.affected_rows())
            })
        }
    }

    fn create_table(&mut self, table: u32) -> Result<(), DbError> {
        self.forget(table);
        self.text(&format!("DROP TABLE IF EXISTS sbtest{table}"))?;
        self.text(&format!(
            "CREATE TABLE sbtest{table} (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, \
             c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) ENGINE = InnoDB"
        ))
    }

    fn load(&mut self, table: u32, rows: &[Row]) -> Result<(), DbError> {
        for chunk in rows.chunks(LOAD_CHUNK) {
            let marks = vec!["(?, ?, ?, ?)"; chunk.len()].join(", ");
            let text = format!("INSERT INTO sbtest{table} (id, k, c, pad) VALUES {marks}");
            let mut values = Vec::with_capacity(chunk.len() * 4);
            for r in chunk {
                values.push(Value::Int(r.id));
                values.push(Value::Int(r.k));
                values.push(Value::Bytes(r.c.as_bytes().to_vec()));
                values.push(Value::Bytes(r.pad.as_bytes().to_vec()));
            }
            // A one-off statement: prepared, run, closed (not kept in the cache).
            on_conn!(self, c => async {
                let stmt = c.prep(text.as_str()).await?;
                c.exec_drop(&stmt, Params::Positional(values)).await?;
                c.close(stmt).await
            })?;
        }
        Ok(())
    }

    fn create_index(&mut self, table: u32) -> Result<(), DbError> {
        self.text(&format!("CREATE INDEX k_{table} ON sbtest{table}(k)"))
    }

    fn drop_table(&mut self, table: u32) -> Result<(), DbError> {
        self.forget(table);
        self.text(&format!("DROP TABLE IF EXISTS sbtest{table}"))
    }

    fn table_rows(&mut self, table: u32) -> Result<Option<u64>, DbError> {
        let name = format!("sbtest{table}");
        let exists: Option<u64> = on_conn!(self, c => c.exec_first(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
            (name,),
        ))?;
        if exists.unwrap_or(0) == 0 {
            return Ok(None);
        }
        let count: Option<u64> = on_conn!(self, c => c.query_first(format!("SELECT COUNT(*) FROM sbtest{table}")))?;
        Ok(Some(count.unwrap_or(0)))
    }
}

impl Drop for MyConn {
    fn drop(&mut self) {
        // Say goodbye (COM_QUIT) so the server does not count an aborted connection.
        if let Some(conn) = self.conn.take() {
            if self.lost.is_none() {
                let _ = self
                    .rt
                    .block_on(async { tokio::time::timeout(Duration::from_secs(1), conn.disconnect()).await });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_hides_the_password() {
        let db = open("mysql://root:hunter2@127.0.0.1:3306/sb").expect("parses");
        assert_eq!(db.describe(), "mysql://root:[redacted]@127.0.0.1:3306/sb");
        let err = open("mysql://root:hunter2@127.0.0.1:3306/sb?bogus=1").err().expect("refused");
        assert!(!err.message.contains("hunter2"), "{}", err.message);
        assert!(
            err.message
                .starts_with("mysql://root:[redacted]@127.0.0.1:3306/sb?bogus=1: not a MySQL URL"),
            "{}",
            err.message
        );
    }

    #[test]
    fn the_non_index_update_binds_c_before_id() {
        let p = params(Stmt::NonIndexUpdate, &[Arg::Int(7), Arg::Text("x".into())]);
        assert_eq!(p, Params::Positional(vec![Value::Bytes(b"x".to_vec()), Value::Int(7)]));
        assert_eq!(sql(Stmt::NonIndexUpdate, 2), "UPDATE sbtest2 SET c = ? WHERE id = ?");
    }

    #[test]
    fn nothing_listening_is_a_lost_connection_not_a_hang() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("bind")
            .local_addr()
            .expect("addr")
            .port();
        let db = open(&format!("mysql://u@127.0.0.1:{port}/sb")).expect("parses");
        let err = db.connect().err().expect("refused");
        assert_eq!(err.class, ErrorClass::ConnectionLost, "{err}");
    }
}
