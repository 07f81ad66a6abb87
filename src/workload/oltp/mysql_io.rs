//! The MySQL client's socket: a blocking TCP or Unix stream with one read buffer and one write
//! buffer, packets framed in place (a payload is a range of the read buffer, never copied), and
//! the connection phase (handshake and authentication).

use std::io::{Read, Write};
use std::ops::Range;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use super::backend::{connect_tcp, cut_or, DbError, ErrorClass, Session};
use super::mysql_wire::{self as wire, MAX_PAYLOAD};
use super::tls::{self, DbStream, TlsSettings};
use crate::util::cut::Watched;
use mysql_common::constants::CapabilityFlags;

/// How long one statement may take before the connection is declared lost.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);

/// Where the server listens.
#[derive(Clone, Debug)]
pub enum Endpoint {
    Tcp(String, u16),
    Unix(String),
}

/// Who logs in, to which database, and how TLS is used.
#[derive(Clone, Debug)]
pub struct Login {
    pub user: String,
    pub password: Vec<u8>,
    pub database: Option<String>,
    pub ssl: Ssl,
}

/// The mysql client's `ssl-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    Disabled,
    Preferred,
    Required,
    VerifyCa,
    VerifyIdentity,
}

/// TLS as the URL asks for it (over TCP only: a Unix socket is already private).
#[derive(Clone, Debug)]
pub struct Ssl {
    pub mode: SslMode,
    /// The TLS settings and client configuration (None with DISABLED).
    pub tls: Option<(TlsSettings, std::sync::Arc<rustls::ClientConfig>)>,
}

enum Stream {
    Tcp(Watched<DbStream>),
    Unix(Watched<UnixStream>),
}

impl Stream {
    fn set_read_timeout(&self, t: Duration) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.tcp().set_read_timeout(Some(t)),
            Stream::Unix(s) => s.set_read_timeout(Some(t)),
        }
    }

    fn set_write_timeout(&self, t: Duration) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.tcp().set_write_timeout(Some(t)),
            Stream::Unix(s) => s.set_write_timeout(Some(t)),
        }
    }
}

/// A broken or silent socket.
pub fn lost(e: std::io::Error) -> DbError {
    lost_within(e, STATEMENT_TIMEOUT)
}

/// A broken socket, or one silent for `timeout` (its read timeout then).
fn lost_within(e: std::io::Error, timeout: Duration) -> DbError {
    use std::io::ErrorKind::{TimedOut, WouldBlock};
    let message = match e.kind() {
        WouldBlock | TimedOut => format!("no answer from the server within {}", crate::util::duration::format(timeout)),
        _ => e.to_string(),
    };
    DbError::new(ErrorClass::ConnectionLost, cut_or(message))
}

/// The socket and its buffers.
pub struct Wire {
    sock: Stream,
    /// The socket's read timeout (for the message that says it ran out).
    timeout: Duration,
    rbuf: Vec<u8>,
    rpos: usize,
    rend: usize,
    pub wbuf: Vec<u8>,
    /// The sequence id of the last packet read.
    seq: u8,
}

impl Wire {
    /// Connect, read the greeting, log in; the socket then waits for commands. Also how the
    /// connection is secured and authenticated.
    pub fn connect(at: &Endpoint, login: &Login, timeout: Duration) -> Result<(Wire, Session), DbError> {
        let sock = match at {
            Endpoint::Tcp(host, port) => {
                let sock = connect_tcp(host, *port, timeout)?;
                Stream::Tcp(sock.map(DbStream::Plain))
            }
            Endpoint::Unix(path) => Stream::Unix(Watched::new(
                UnixStream::connect(path).map_err(|e| DbError::new(ErrorClass::ConnectionLost, format!("{path}: {e}")))?,
            )),
        };
        sock.set_read_timeout(timeout).map_err(lost)?;
        sock.set_write_timeout(STATEMENT_TIMEOUT).map_err(lost)?;
        let w = Wire {
            sock,
            timeout,
            rbuf: vec![0; 64 * 1024],
            rpos: 0,
            rend: 0,
            wbuf: Vec::with_capacity(4 * 1024),
            seq: 0,
        };
        let host = match at {
            Endpoint::Tcp(host, _) => Some(host.as_str()),
            Endpoint::Unix(_) => None,
        };
        let (mut w, auth) = w.log_in(login, host)?;
        w.sock.set_read_timeout(STATEMENT_TIMEOUT).map_err(lost)?;
        w.timeout = STATEMENT_TIMEOUT;
        let tls = match &w.sock {
            Stream::Tcp(s) => s.tls_facts(),
            Stream::Unix(_) => None,
        };
        Ok((w, Session { tls, auth }))
    }

    /// Log in (over TLS when `host` is a TCP host and the URL and server agree); the
    /// authentication plugin used.
    fn log_in(mut self, login: &Login, host: Option<&str>) -> Result<(Wire, String), DbError> {
        let r = self.packet()?;
        let hello = wire::parse_handshake(&self.rbuf[r])?;
        if !hello.capabilities.contains(CapabilityFlags::CLIENT_PROTOCOL_41) {
            return Err(DbError::new(ErrorClass::Other, "the server is older than MySQL 4.1"));
        }
        let mut caps = wire::client_capabilities(hello.capabilities, login.database.is_some());
        let mut secure = host.is_none();
        if let (Some(host), Some((settings, config))) = (host, &login.ssl.tls) {
            if hello.capabilities.contains(CapabilityFlags::CLIENT_SSL) {
                // the SSLRequest: the response's fixed part with CLIENT_SSL, then the handshake
                caps |= CapabilityFlags::CLIENT_SSL;
                let request = wire::ssl_request(caps);
                self.put_packet(1, |b| b.extend_from_slice(&request))?;
                self.send()?;
                self.seq = 1;
                let sock = match self.sock {
                    Stream::Tcp(s) => s,
                    Stream::Unix(_) => return Err(DbError::new(ErrorClass::Other, "TLS over a Unix socket")),
                };
                self.sock = Stream::Tcp(tls::handshake(sock, config, host, settings, self.timeout)?);
                secure = true;
            } else if login.ssl.mode != SslMode::Preferred {
                return Err(DbError::new(
                    ErrorClass::Other,
                    format!(
                        "the server does not offer TLS ({}): enable TLS on the server or use ssl-mode=DISABLED",
                        settings.mode
                    ),
                ));
            }
        }
        // DISABLED although the server offers TLS (MariaDB refuses such a login of a server that
        // requires secure transport as an access denial)
        let plain_by_choice = !secure && hello.capabilities.contains(CapabilityFlags::CLIENT_SSL) && login.ssl.mode == SslMode::Disabled;
        let mut plugin = hello.plugin.clone();
        let auth = wire::auth_response(&plugin, &login.password, &hello.nonce).unwrap_or_default();
        let response = wire::handshake_response(&hello, caps, &login.user, &auth, login.database.as_deref(), &plugin);
        let seq = self.seq.wrapping_add(1);
        self.put_packet(seq, |b| b.extend_from_slice(&response))?;
        self.send()?;
        loop {
            let r = self.packet()?;
            let p = &self.rbuf[r];
            match p.first() {
                Some(0x00) => return Ok((self, plugin)),
                Some(0xFF) => return Err(insecure_refused(wire::parse_err(p), plain_by_choice)),
                Some(0xFE) => {
                    let (next, nonce) = wire::parse_auth_switch(p)?;
                    let Some(auth) = wire::auth_response(&next, &login.password, &nonce) else {
                        return Err(unsupported(&next));
                    };
                    plugin = next;
                    self.reply(&auth)?;
                }
                // caching_sha2_password: 3 = the fast path succeeded (an OK follows), 4 = the
                // server wants the password itself.
                Some(0x01) if plugin == "caching_sha2_password" && p.get(1) == Some(&3) => {}
                Some(0x01) if plugin == "caching_sha2_password" && p.get(1) == Some(&4) => {
                    if !secure {
                        return Err(DbError::new(
                            ErrorClass::Other,
                            "the server offers only caching_sha2_password full authentication, which needs TLS: \
                             use ssl-mode=REQUIRED (perflab does not do its RSA key exchange without TLS)",
                        ));
                    }
                    let clear = [&login.password[..], &[0]].concat();
                    self.reply(&clear)?;
                }
                _ => return Err(unsupported(&plugin)),
            }
        }
    }

    /// Answer the packet just read (the next sequence id).
    fn reply(&mut self, data: &[u8]) -> Result<(), DbError> {
        let seq = self.seq.wrapping_add(1);
        self.put_packet(seq, |b| b.extend_from_slice(data))?;
        self.send()
    }

    /// Append one packet to the write buffer: `fill` writes its payload.
    pub fn put_packet(&mut self, seq: u8, fill: impl FnOnce(&mut Vec<u8>)) -> Result<(), DbError> {
        let start = self.wbuf.len();
        self.wbuf.extend_from_slice(&[0, 0, 0, seq]);
        fill(&mut self.wbuf);
        let len = self.wbuf.len() - start - 4;
        if len >= MAX_PAYLOAD {
            self.wbuf.truncate(start);
            return Err(DbError::new(ErrorClass::Other, "a command over 16 MB (load in smaller batches)"));
        }
        self.wbuf[start..start + 3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
        Ok(())
    }

    /// A command packet (sequence id 0).
    pub fn command(&mut self, fill: impl FnOnce(&mut Vec<u8>)) -> Result<(), DbError> {
        self.put_packet(0, fill)
    }

    pub fn send(&mut self) -> Result<(), DbError> {
        let result = match &mut self.sock {
            Stream::Tcp(s) => s.write_all(&self.wbuf),
            Stream::Unix(s) => s.write_all(&self.wbuf),
        };
        self.wbuf.clear();
        result.map_err(lost)
    }

    /// Make sure `need` unread bytes are in the buffer.
    fn fill(&mut self, need: usize) -> Result<(), DbError> {
        while self.rend - self.rpos < need {
            if self.rpos == self.rend {
                self.rpos = 0;
                self.rend = 0;
            } else if self.rbuf.len() - self.rpos < need {
                self.rbuf.copy_within(self.rpos..self.rend, 0);
                self.rend -= self.rpos;
                self.rpos = 0;
                if self.rbuf.len() < need {
                    self.rbuf.resize(need.next_power_of_two(), 0);
                }
            }
            let free = &mut self.rbuf[self.rend..];
            let n = match match &mut self.sock {
                Stream::Tcp(s) => s.read(free),
                Stream::Unix(s) => s.read(free),
            } {
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
            self.rend += n;
        }
        Ok(())
    }

    /// The next packet's payload, as a range of [`Wire::buf`] valid until the next read.
    pub fn packet(&mut self) -> Result<Range<usize>, DbError> {
        self.fill(4)?;
        let h = &self.rbuf[self.rpos..self.rpos + 4];
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        self.seq = h[3];
        if len == MAX_PAYLOAD {
            return Err(DbError::new(
                ErrorClass::Other,
                "a reply over 16 MB, more than the OLTP tables hold",
            ));
        }
        self.fill(4 + len)?;
        let start = self.rpos + 4;
        self.rpos = start + len;
        Ok(start..start + len)
    }

    /// The bytes of a range [`Wire::packet`] returned.
    pub fn buf(&self, r: Range<usize>) -> &[u8] {
        &self.rbuf[r]
    }

    /// Read one command's reply: an OK's affected rows, or a result set's row count (`on_row`
    /// sees each row's payload). An ERR is its error.
    pub fn result(&mut self, mut on_row: impl FnMut(&[u8])) -> Result<u64, DbError> {
        let r = self.packet()?;
        let p = &self.rbuf[r];
        match p.first() {
            Some(0x00) => return Ok(wire::ok_affected_rows(p)),
            Some(0xFF) => return Err(wire::parse_err(p)),
            Some(0xFB) | None => return Err(DbError::new(ErrorClass::Other, "an unexpected reply (LOCAL INFILE?)")),
            _ => {}
        }
        self.skip_definitions()?;
        let mut rows = 0;
        loop {
            let r = self.packet()?;
            let p = &self.rbuf[r];
            if wire::is_eof(p) {
                return Ok(rows);
            }
            if p.first() == Some(&0xFF) {
                return Err(wire::parse_err(p));
            }
            rows += 1;
            on_row(p);
        }
    }

    /// Skip column (or parameter) definitions up to their EOF packet.
    pub fn skip_definitions(&mut self) -> Result<(), DbError> {
        loop {
            let r = self.packet()?;
            let p = &self.rbuf[r];
            if wire::is_eof(p) {
                return Ok(());
            }
            if p.first() == Some(&0xFF) {
                return Err(wire::parse_err(p));
            }
        }
    }
}

/// A refusal without TLS of a server that accepts only TLS, in the user's terms: MySQL says so
/// (error 3159), MariaDB denies access (error 1045), which gets a hint when TLS was turned off.
fn insecure_refused(e: DbError, plain_by_choice: bool) -> DbError {
    if e.message.contains("insecure transport") {
        return DbError::new(e.class, "server requires TLS (require_secure_transport=ON): use ssl-mode=REQUIRED");
    }
    if plain_by_choice && e.message.contains("(error 1045)") {
        return DbError::new(
            e.class,
            format!(
                "{} (ssl-mode=DISABLED: if the server requires secure transport, use ssl-mode=REQUIRED)",
                e.message
            ),
        );
    }
    e
}

fn unsupported(plugin: &str) -> DbError {
    DbError::new(
        ErrorClass::Other,
        format!(
            "the server asks for the authentication plugin '{plugin}', which perflab does not speak \
             (mysql_native_password and caching_sha2_password are supported)"
        ),
    )
}
