//! The PostgreSQL client's socket: one blocking TCP stream with its read and write buffers,
//! messages decoded by `postgres-protocol`, server errors sorted into classes by their SQLSTATE.

use std::io::{Read, Write};

use bytes::BytesMut;
use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::{DataRowBody, ErrorResponseBody, Message};

use super::backend::{cut_or, DbError, ErrorClass};
use super::tls::DbStream;
use crate::util::cut::Watched;

/// How long one statement may take before the connection is declared lost.
pub const STATEMENT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// A broken or silent socket.
pub fn lost(e: std::io::Error) -> DbError {
    lost_within(e, STATEMENT_TIMEOUT)
}

/// A broken socket, or one silent for `timeout` (its read timeout then).
fn lost_within(e: std::io::Error, timeout: std::time::Duration) -> DbError {
    use std::io::ErrorKind::{TimedOut, WouldBlock};
    let message = match e.kind() {
        WouldBlock | TimedOut => format!("no answer from the server within {}", crate::util::duration::format(timeout)),
        _ => e.to_string(),
    };
    DbError::new(ErrorClass::ConnectionLost, cut_or(message))
}

/// The first byte of every message a PostgreSQL server sends (its type): anything else is another
/// protocol, refused before its "length" is waited for (`xxxx` would ask for 2 GB).
const BACKEND_TAGS: &[u8] = b"123ACDEGHIKNRSTWZcdnstv";

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

/// What the read buffer holds at first; it grows only for a message larger than that.
const READ_BUFFER: usize = 64 * 1024;

/// The socket and its buffers.
pub struct Wire {
    pub sock: Watched<DbStream>,
    /// The socket's read timeout (for the message that says it ran out).
    timeout: std::time::Duration,
    /// What the socket gave and is not consumed yet: `rbuf[head..tail]` (allocated and zeroed once;
    /// a read goes straight into `rbuf[tail..]`, with no copy).
    rbuf: Vec<u8>,
    head: usize,
    tail: usize,
    pub wbuf: BytesMut,
}

/// One whole backend message in the read buffer: its type and where its body lies.
#[derive(Clone, Copy)]
struct Frame {
    tag: u8,
    body: usize,
    end: usize,
}

impl Wire {
    /// A connected socket, its reads waiting at most `timeout`.
    pub fn new(sock: Watched<DbStream>, timeout: std::time::Duration) -> std::io::Result<Wire> {
        sock.tcp().set_read_timeout(Some(timeout))?;
        Ok(Wire {
            sock,
            timeout,
            rbuf: vec![0; READ_BUFFER],
            head: 0,
            tail: 0,
            wbuf: BytesMut::with_capacity(4 * 1024),
        })
    }

    /// Let reads wait at most `timeout` from now on.
    pub fn set_read_timeout(&mut self, timeout: std::time::Duration) -> Result<(), DbError> {
        self.sock.tcp().set_read_timeout(Some(timeout)).map_err(lost)?;
        self.timeout = timeout;
        Ok(())
    }

    pub fn send(&mut self) -> Result<(), DbError> {
        let result = self.sock.write_all(&self.wbuf);
        self.wbuf.clear();
        result.map_err(lost)
    }

    /// The next whole message (its header read, its body in the buffer), consumed. One `read` per
    /// call at most when the buffer holds nothing of it, so one statement's answer is usually one
    /// system call.
    fn frame(&mut self) -> Result<Frame, DbError> {
        loop {
            let have = self.tail - self.head;
            let mut need = 5;
            if have >= 1 && !BACKEND_TAGS.contains(&self.rbuf[self.head]) {
                return Err(DbError::new(
                    ErrorClass::Other,
                    format!(
                        "the server speaks another protocol than PostgreSQL's (a message of type {:#04x})",
                        self.rbuf[self.head]
                    ),
                ));
            }
            if have >= 5 {
                let h = self.head;
                let len = u32::from_be_bytes([self.rbuf[h + 1], self.rbuf[h + 2], self.rbuf[h + 3], self.rbuf[h + 4]]);
                let len = len as usize;
                if len < 4 {
                    return Err(DbError::new(ErrorClass::ConnectionLost, "the server sent a malformed message"));
                }
                need = 1 + len;
                if have >= need {
                    self.head += need;
                    if self.head == self.tail {
                        (self.head, self.tail) = (0, 0);
                    }
                    return Ok(Frame {
                        tag: self.rbuf[h],
                        body: h + 5,
                        end: h + need,
                    });
                }
            }
            if self.rbuf.len() - self.head < need {
                self.rbuf.copy_within(self.head..self.tail, 0);
                (self.head, self.tail) = (0, have);
                if self.rbuf.len() < need {
                    self.rbuf.resize(need.next_power_of_two(), 0);
                }
            }
            let n = match self.sock.read(&mut self.rbuf[self.tail..]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(lost_within(e, self.timeout)),
            };
            if n == 0 {
                return Err(DbError::new(
                    ErrorClass::ConnectionLost,
                    cut_or("the server closed the connection".into()),
                ));
            }
            self.tail += n;
        }
    }

    /// The frame decoded by `postgres-protocol` (a copy: for the start-up, errors and the rows
    /// of administrative queries, not for the statements of a run).
    fn decode(&self, f: Frame) -> Result<Message, DbError> {
        let mut one = BytesMut::from(&self.rbuf[f.body - 5..f.end]);
        match Message::parse(&mut one).map_err(lost)? {
            Some(m) => Ok(m),
            None => Err(DbError::new(ErrorClass::ConnectionLost, "the server sent a malformed message")),
        }
    }

    pub fn next(&mut self) -> Result<Message, DbError> {
        let f = self.frame()?;
        self.decode(f)
    }

    /// Read up to ReadyForQuery: the row count of the last command tag, or the first error. Rows
    /// are skipped unread. A server error followed by a closed socket (a FATAL) is the server's
    /// error.
    pub fn until_ready(&mut self) -> Result<u64, DbError> {
        self.until_ready_rows(None)
    }

    /// [`Wire::until_ready`], handing each row to `on_row` (decoded) when there is one.
    pub fn until_ready_rows(&mut self, mut on_row: Option<&mut dyn FnMut(&DataRowBody)>) -> Result<u64, DbError> {
        let mut error: Option<DbError> = None;
        let mut rows = 0;
        loop {
            let f = match self.frame() {
                Ok(f) => f,
                Err(lost) => {
                    return Err(match error {
                        Some(e) => DbError::new(ErrorClass::ConnectionLost, e.message),
                        None => lost,
                    })
                }
            };
            match f.tag {
                b'Z' => return error.map_or(Ok(rows), Err),
                b'C' => rows = tag_rows(&self.rbuf[f.body..f.end]),
                b'D' => {
                    if let Some(on_row) = on_row.as_mut() {
                        if let Message::DataRow(body) = self.decode(f)? {
                            on_row(&body);
                        }
                    }
                }
                b'E' if error.is_none() => {
                    if let Message::ErrorResponse(body) = self.decode(f)? {
                        error = Some(server_error(&body));
                    }
                }
                _ => {}
            }
        }
    }
}

/// The row count at the end of a command tag (`SELECT 100`, `INSERT 0 1`; NUL-terminated), 0 when
/// it has none.
fn tag_rows(tag: &[u8]) -> u64 {
    let tag = tag.strip_suffix(&[0]).unwrap_or(tag);
    let digits = tag.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits == tag.len() || tag[tag.len() - digits - 1] != b' ' {
        return 0;
    }
    tag[tag.len() - digits..]
        .iter()
        .fold(0u64, |n, d| n.wrapping_mul(10).wrapping_add(u64::from(d - b'0')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_tag_gives_its_row_count() {
        assert_eq!(tag_rows(b"SELECT 100\0"), 100);
        assert_eq!(tag_rows(b"INSERT 0 1\0"), 1);
        assert_eq!(tag_rows(b"UPDATE 0\0"), 0);
        assert_eq!(tag_rows(b"BEGIN\0"), 0);
        assert_eq!(tag_rows(b"COMMIT"), 0);
        assert_eq!(tag_rows(b"42\0"), 0);
    }

    #[test]
    fn messages_split_across_reads_and_larger_than_the_buffer_come_whole() {
        use std::io::Write as _;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let big = vec![b'x'; READ_BUFFER * 2];
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().expect("accept");
            let mut out = Vec::new();
            // a DataRow with one column larger than the read buffer, a tag, ReadyForQuery
            let body_len = 4 + 2 + 4 + big.len();
            out.push(b'D');
            out.extend_from_slice(&(body_len as u32).to_be_bytes());
            out.extend_from_slice(&1u16.to_be_bytes());
            out.extend_from_slice(&(big.len() as u32).to_be_bytes());
            out.extend_from_slice(&big);
            let tag = b"SELECT 1\0";
            out.push(b'C');
            out.extend_from_slice(&((4 + tag.len()) as u32).to_be_bytes());
            out.extend_from_slice(tag);
            out.extend_from_slice(&[b'Z', 0, 0, 0, 5, b'I']);
            // in small pieces, so that headers and bodies are split between reads
            for piece in out.chunks(7777) {
                s.write_all(piece).expect("write");
                s.flush().expect("flush");
            }
        });
        let sock = Watched::new(std::net::TcpStream::connect(addr).expect("connect")).map(DbStream::Plain);
        let mut wire = Wire::new(sock, STATEMENT_TIMEOUT).expect("wire");
        let mut seen = Vec::new();
        let mut on_row = |row: &DataRowBody| {
            if let Ok(Some(Some(range))) = row.ranges().next() {
                seen.push(range.len());
            }
        };
        assert_eq!(wire.until_ready_rows(Some(&mut on_row)).expect("read"), 1);
        assert_eq!(seen, vec![READ_BUFFER * 2]);
        server.join().expect("server");
    }
}
