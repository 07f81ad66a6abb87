//! The PostgreSQL client's socket: one blocking TCP stream with its read and write buffers,
//! messages decoded by `postgres-protocol`, server errors sorted into classes by their SQLSTATE.

use std::io::{Read, Write};
use std::net::TcpStream;

use bytes::BytesMut;
use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::{DataRowBody, ErrorResponseBody, Message};

use super::backend::{DbError, ErrorClass};

/// How long one statement may take before the connection is declared lost.
pub const STATEMENT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// A broken or silent socket.
pub fn lost(e: std::io::Error) -> DbError {
    use std::io::ErrorKind::{TimedOut, WouldBlock};
    let message = match e.kind() {
        WouldBlock | TimedOut => format!("no answer from the server within {STATEMENT_TIMEOUT:?}"),
        _ => e.to_string(),
    };
    DbError::new(ErrorClass::ConnectionLost, message)
}

/// Sort a server error by its SQLSTATE.
fn classify(code: &str) -> ErrorClass {
    match code {
        "40P01" | "40001" => ErrorClass::Deadlock,
        "23505" => ErrorClass::DuplicateKey,
        "53300" => ErrorClass::TooManyConnections,
        // connection exceptions and operator intervention (admin or crash shutdown)
        c if c.starts_with("08") || c.starts_with("57P") => ErrorClass::ConnectionLost,
        _ => ErrorClass::Other,
    }
}

pub fn server_error(body: &ErrorResponseBody) -> DbError {
    let (mut code, mut message) = (String::new(), String::new());
    let mut fields = body.fields();
    while let Ok(Some(f)) = fields.next() {
        match f.type_() {
            b'C' => code = String::from_utf8_lossy(f.value_bytes()).into_owned(),
            b'M' => message = String::from_utf8_lossy(f.value_bytes()).into_owned(),
            _ => {}
        }
    }
    DbError::new(classify(&code), format!("{message} (SQLSTATE {code})"))
}

/// The socket and its buffers.
pub struct Wire {
    pub sock: TcpStream,
    pub rbuf: BytesMut,
    pub wbuf: BytesMut,
    /// What one read takes from the socket (allocated and zeroed once).
    pub chunk: Vec<u8>,
}

impl Wire {
    pub fn send(&mut self) -> Result<(), DbError> {
        let result = self.sock.write_all(&self.wbuf);
        self.wbuf.clear();
        result.map_err(lost)
    }

    pub fn next(&mut self) -> Result<Message, DbError> {
        loop {
            if let Some(m) = Message::parse(&mut self.rbuf).map_err(lost)? {
                return Ok(m);
            }
            let n = self.sock.read(&mut self.chunk).map_err(lost)?;
            if n == 0 {
                return Err(DbError::new(ErrorClass::ConnectionLost, "the server closed the connection"));
            }
            self.rbuf.extend_from_slice(&self.chunk[..n]);
        }
    }

    /// Read up to ReadyForQuery: the rows of the last command tag, or the first error. A server
    /// error followed by a closed socket (a FATAL) is the server's error.
    pub fn until_ready(&mut self, mut on_row: impl FnMut(&DataRowBody)) -> Result<u64, DbError> {
        let mut error: Option<DbError> = None;
        let mut rows = 0;
        loop {
            let message = match self.next() {
                Ok(m) => m,
                Err(lost) => {
                    return Err(match error {
                        Some(e) => DbError::new(ErrorClass::ConnectionLost, e.message),
                        None => lost,
                    })
                }
            };
            match message {
                Message::ReadyForQuery(_) => return error.map_or(Ok(rows), Err),
                Message::CommandComplete(body) => {
                    rows = body.tag().ok().and_then(|t| t.rsplit(' ').next()?.parse().ok()).unwrap_or(0);
                }
                Message::DataRow(body) => on_row(&body),
                Message::ErrorResponse(body) if error.is_none() => error = Some(server_error(&body)),
                _ => {}
            }
        }
    }
}
