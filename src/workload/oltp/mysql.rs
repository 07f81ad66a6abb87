//! MySQL and MariaDB as an OLTP [`Database`].
//!
//! Each [`Conn`] speaks the MySQL protocol itself over a blocking socket on the worker's own
//! thread (`mysql_io.rs`: the socket, framing and login; `mysql_wire.rs`: the encodings), as
//! sysbench's libmysqlclient does: statements are server-side prepared once per connection and run
//! with COM_STMT_EXECUTE (binary protocol); a statement is one write and one read, and its rows are
//! counted, not decoded. `BEGIN` is held back and sent in the same write as the transaction's first
//! statement (the server runs commands in order), which saves a round trip per transaction. The
//! connection is TCP, or a Unix socket when the URL says `?socket=PATH`.

use std::sync::Mutex;
use std::time::Duration;

use super::backend::{Arg, Conn, Database, DbError, ErrorClass, Row, Session, Stmt};
use super::db_url;
use super::mysql_io::{Endpoint, Login, Ssl, SslMode, Wire};
use super::mysql_wire::{self as wire, com, Command};
use super::tls::{self, Roots, TlsSettings, Verify};
use crate::util::redact::redact_url;

/// How long a connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Rows per INSERT of the bulk load.
const LOAD_CHUNK: usize = 1000;

/// Open `mysql://user:password@host:port/dbname[?socket=PATH]` (MySQL or MariaDB), with the
/// mysql client's `ssl-mode`, `ssl-ca`, `ssl-cert`, `ssl-key` and `connect-timeout`.
pub fn open(url: &str) -> Result<Box<dyn Database>, DbError> {
    let shown = redact_url(url);
    let bad = |e: String| DbError::new(ErrorClass::Other, format!("{shown}: not a MySQL URL ({e})"));
    let u = db_url::parse(url).map_err(bad)?;
    u.only_params(&["socket", "ssl-mode", "ssl-ca", "ssl-cert", "ssl-key", "connect-timeout"])
        .map_err(bad)?;
    let ssl = ssl_settings(&u).map_err(|e| DbError::new(ErrorClass::Other, format!("{shown}: {e}")))?;
    let connect_timeout = match u.param("connect-timeout") {
        None => CONNECT_TIMEOUT,
        Some(t) => match t.parse::<u64>() {
            Ok(0) => CONNECT_TIMEOUT,
            Ok(secs) => Duration::from_secs(secs),
            Err(_) => return Err(bad(format!("connect-timeout={t}: not a number of seconds"))),
        },
    };
    let at = match u.param("socket") {
        Some(path) => Endpoint::Unix(path.to_string()),
        None if u.host.is_empty() => Endpoint::Tcp("localhost".into(), u.port.unwrap_or(3306)),
        None => Endpoint::Tcp(u.host.clone(), u.port.unwrap_or(3306)),
    };
    let login = Login {
        user: u.user.unwrap_or_default(),
        password: u.password.unwrap_or_default(),
        database: u.database,
        ssl,
    };
    Ok(Box::new(Mysql {
        at,
        login,
        shown,
        connect_timeout,
        session: Mutex::new(None),
    }))
}

/// The mysql client's TLS options: `ssl-mode` (PREFERRED by default, VERIFY_CA when only
/// `ssl-ca` is given, as the mysql client does), `ssl-ca`, `ssl-cert`, `ssl-key`.
fn ssl_settings(u: &db_url::DbUrl) -> Result<Ssl, String> {
    let ca = u.param("ssl-ca");
    let given = u.param("ssl-mode").map(str::to_ascii_uppercase);
    let mode = match given.as_deref() {
        None if ca.is_some() => SslMode::VerifyCa,
        None | Some("PREFERRED") => SslMode::Preferred,
        Some("DISABLED") => SslMode::Disabled,
        Some("REQUIRED") => SslMode::Required,
        Some("VERIFY_CA") => SslMode::VerifyCa,
        Some("VERIFY_IDENTITY") => SslMode::VerifyIdentity,
        Some(m) => {
            return Err(format!(
                "ssl-mode={m}: not one of DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY"
            ))
        }
    };
    let mode_text = format!(
        "ssl-mode={}",
        given.as_deref().unwrap_or(if ca.is_some() { "VERIFY_CA" } else { "PREFERRED" })
    );
    let verify = match mode {
        SslMode::VerifyCa => Verify::Ca,
        SslMode::VerifyIdentity => Verify::Full,
        _ => Verify::None,
    };
    if verify != Verify::None && ca.is_none() {
        return Err(format!("{mode_text} checks the server's certificate: give its CA with ssl-ca=FILE"));
    }
    let client = match (u.param("ssl-cert"), u.param("ssl-key")) {
        (Some(c), Some(k)) => Some((c.into(), k.into())),
        (None, None) => None,
        (Some(_), None) => return Err("ssl-cert without ssl-key".to_string()),
        (None, Some(_)) => return Err("ssl-key without ssl-cert".to_string()),
    };
    if mode == SslMode::Disabled {
        return Ok(Ssl { mode, tls: None });
    }
    let settings = TlsSettings {
        verify,
        roots: ca.map(|c| Roots::File(c.into())),
        client,
        roots_key: "ssl-ca",
        mode: mode_text,
        alpn: None,
    };
    let config = tls::client_config(&settings)?;
    Ok(Ssl {
        mode,
        tls: Some((settings, config)),
    })
}

struct Mysql {
    at: Endpoint,
    login: Login,
    shown: String,
    connect_timeout: Duration,
    /// How the last connection was secured and authenticated.
    session: Mutex<Option<Session>>,
}

impl Database for Mysql {
    fn describe(&self) -> String {
        self.shown.clone()
    }

    fn connect(&self) -> Result<Box<dyn Conn>, DbError> {
        match Wire::connect(&self.at, &self.login, self.connect_timeout) {
            Ok((wire, session)) => {
                if let Ok(mut last) = self.session.lock() {
                    *last = Some(session);
                }
                Ok(Box::new(MyConn {
                    wire,
                    stmts: Vec::new(),
                    begin_pending: false,
                    lost: None,
                }))
            }
            Err(e) => Err(DbError::new(e.class, format!("cannot connect to {}: {}", self.shown, e.message))),
        }
    }

    fn session(&self) -> Option<Session> {
        self.session.lock().ok()?.clone()
    }
}

/// The SQL of a statement on `sbtest<table>` in MySQL's dialect (`?`, bound in the order the
/// marks stand: `UPDATE ... SET c = ? WHERE id = ?` takes (c, id)).
fn sql(stmt: Stmt, table: u32) -> String {
    stmt.sql(table, |_| "?".into())
}

/// Append a COM_STMT_EXECUTE with the parameters in the order of the `?` marks of [`sql`].
fn put_execute(buf: &mut Vec<u8>, id: u32, stmt: Stmt, args: &[Arg]) {
    match (stmt, args) {
        (Stmt::NonIndexUpdate, [id_arg, c]) => wire::put_execute(buf, id, [c, id_arg].into_iter()),
        _ => wire::put_execute(buf, id, args.iter()),
    }
}

struct MyConn {
    wire: Wire,
    /// Server-side statement ids, `(table - 1) * 9 + slot`.
    stmts: Vec<Option<u32>>,
    /// `begin` was called: BEGIN goes out with the next command.
    begin_pending: bool,
    /// Set once the connection broke or timed out: every later call fails at once.
    lost: Option<String>,
}

impl MyConn {
    fn check(&mut self) -> Result<(), DbError> {
        match &self.lost {
            Some(why) => {
                self.wire.wbuf.clear();
                Err(DbError::new(ErrorClass::ConnectionLost, why.clone()))
            }
            None => Ok(()),
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

    /// Put the held-back BEGIN in front of the next command; whether there was one.
    fn queue_begin(&mut self) -> Result<bool, DbError> {
        if !std::mem::take(&mut self.begin_pending) {
            return Ok(false);
        }
        self.wire.command(|b| {
            b.push(com(Command::COM_QUERY));
            b.extend_from_slice(b"BEGIN");
        })?;
        Ok(true)
    }

    /// Send the queued command(s) and read the reply (after the held-back BEGIN's, if queued).
    fn round_trip(&mut self, began: bool, on_row: impl FnMut(&[u8])) -> Result<u64, DbError> {
        let result = self.wire.send().and_then(|()| {
            let begin = if began { self.wire.result(|_| {}).map(|_| ()) } else { Ok(()) };
            if let Err(e) = &begin {
                if e.class == ErrorClass::ConnectionLost {
                    return Err(e.clone());
                }
            }
            let rows = self.wire.result(on_row);
            begin.and(rows)
        });
        self.note(result)
    }

    fn query_rows(&mut self, text: &str, on_row: impl FnMut(&[u8])) -> Result<u64, DbError> {
        self.check()?;
        let began = self.queue_begin()?;
        self.wire.command(|b| {
            b.push(com(Command::COM_QUERY));
            b.extend_from_slice(text.as_bytes());
        })?;
        self.round_trip(began, on_row)
    }

    fn query(&mut self, text: &str) -> Result<u64, DbError> {
        self.query_rows(text, |_| {})
    }

    /// The first column of the first row of a text query.
    fn scalar(&mut self, text: &str) -> Result<Option<String>, DbError> {
        let mut value = None;
        self.query_rows(text, |row| {
            if value.is_none() {
                value = wire::first_text_column(row).map(|v| String::from_utf8_lossy(v).into_owned());
            }
        })?;
        Ok(value)
    }

    /// The server's id of a statement, prepared on first use.
    fn statement(&mut self, table: u32, stmt: Stmt) -> Result<u32, DbError> {
        let index = (table.max(1) as usize - 1) * Stmt::ALL.len() + stmt.slot();
        if let Some(Some(id)) = self.stmts.get(index) {
            return Ok(*id);
        }
        let text = sql(stmt, table);
        self.wire.command(|b| {
            b.push(com(Command::COM_STMT_PREPARE));
            b.extend_from_slice(text.as_bytes());
        })?;
        let prepared = self.wire.send().and_then(|()| {
            let r = self.wire.packet()?;
            let p = self.wire.buf(r);
            if p.first() == Some(&0xFF) {
                return Err(wire::parse_err(p));
            }
            let (id, columns, params) = wire::parse_prepare_ok(p)?;
            if params > 0 {
                self.wire.skip_definitions()?;
            }
            if columns > 0 {
                self.wire.skip_definitions()?;
            }
            Ok(id)
        });
        let id = self.note(prepared)?;
        if self.stmts.len() <= index {
            self.stmts.resize(index + 1, None);
        }
        self.stmts[index] = Some(id);
        Ok(id)
    }

    /// Close the prepared statements of a table that is dropped or recreated (COM_STMT_CLOSE
    /// has no reply: it goes out with the next command).
    fn forget(&mut self, table: u32) -> Result<(), DbError> {
        let start = (table.max(1) as usize - 1) * Stmt::ALL.len();
        let end = (start + Stmt::ALL.len()).min(self.stmts.len());
        for i in start..end {
            if let Some(id) = self.stmts[i].take() {
                self.wire.command(|b| {
                    b.push(com(Command::COM_STMT_CLOSE));
                    b.extend_from_slice(&id.to_le_bytes());
                })?;
            }
        }
        Ok(())
    }
}

impl Conn for MyConn {
    fn begin(&mut self) -> Result<(), DbError> {
        self.check()?;
        self.begin_pending = true;
        Ok(())
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.query("COMMIT").map(|_| ())
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        if std::mem::take(&mut self.begin_pending) {
            return Ok(());
        }
        self.query("ROLLBACK").map(|_| ())
    }

    fn exec(&mut self, table: u32, stmt: Stmt, args: &[Arg]) -> Result<u64, DbError> {
        self.check()?;
        let id = self.statement(table, stmt)?;
        let began = self.queue_begin()?;
        self.wire.command(|b| put_execute(b, id, stmt, args))?;
        self.round_trip(began, |_| {})
    }

    fn create_table(&mut self, table: u32) -> Result<(), DbError> {
        self.forget(table)?;
        self.query(&format!("DROP TABLE IF EXISTS sbtest{table}"))?;
        self.query(&format!(
            "CREATE TABLE sbtest{table} (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, \
             c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) ENGINE = InnoDB"
        ))
        .map(|_| ())
    }

    fn load(&mut self, table: u32, rows: &[Row]) -> Result<(), DbError> {
        for chunk in rows.chunks(LOAD_CHUNK) {
            let mut text = format!("INSERT INTO sbtest{table} (id, k, c, pad) VALUES ");
            for (i, r) in chunk.iter().enumerate() {
                if i > 0 {
                    text.push_str(", ");
                }
                text.push_str(&format!("({}, {}, ", r.id, r.k));
                wire::put_literal(&mut text, &r.c);
                text.push_str(", ");
                wire::put_literal(&mut text, &r.pad);
                text.push(')');
            }
            self.query(&text)?;
        }
        Ok(())
    }

    fn create_index(&mut self, table: u32) -> Result<(), DbError> {
        self.query(&format!("CREATE INDEX k_{table} ON sbtest{table}(k)")).map(|_| ())
    }

    fn drop_table(&mut self, table: u32) -> Result<(), DbError> {
        self.forget(table)?;
        self.query(&format!("DROP TABLE IF EXISTS sbtest{table}")).map(|_| ())
    }

    fn table_rows(&mut self, table: u32) -> Result<Option<u64>, DbError> {
        let exists = self.scalar(&format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'sbtest{table}'"
        ))?;
        if exists.as_deref().unwrap_or("0") == "0" {
            return Ok(None);
        }
        let n = self.scalar(&format!("SELECT COUNT(*) FROM sbtest{table}"))?;
        Ok(n.and_then(|n| n.parse().ok()))
    }
}

impl Drop for MyConn {
    fn drop(&mut self) {
        // Say goodbye (COM_QUIT) so the server does not count an aborted connection.
        if self.lost.is_none() {
            self.wire.wbuf.clear();
            if self.wire.command(|b| b.push(com(Command::COM_QUIT))).is_ok() {
                let _ = self.wire.send();
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
        let mut buf = Vec::new();
        put_execute(&mut buf, 1, Stmt::NonIndexUpdate, &[Arg::Int(7), Arg::Text("x".into())]);
        let mut want = Vec::new();
        wire::put_execute(&mut want, 1, [Arg::Text("x".into()), Arg::Int(7)].iter());
        assert_eq!(buf, want);
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
        let db = open("mysql://u@/sb?socket=/nonexistent/perflab.sock").expect("parses");
        let err = db.connect().err().expect("refused");
        assert_eq!(err.class, ErrorClass::ConnectionLost, "{err}");
    }
}
