//! `http`: one GET over a fresh connection per probe, its time cut into parts as `curl -w` reports
//! them: `dns` (name lookup), `connect` (TCP), `tls` (the handshake; 0 for http://), `wait` (request
//! sent to the first response byte) and `transfer` (first byte to the last). The parts add up to the
//! total; curl's `time_starttransfer` is dns + connect + tls + wait. HTTP/1.1 with `Connection:
//! close`; the request, the URL checks and the TLS client (rustls: `insecure`, `cacert`) are those
//! of `perflab http`, and so is the response's parser: a status >= 400 is an answer that failed; a
//! body is read to its Content-Length, its last chunk, or the connection's end when unframed.

use super::{sys, tcp, Driver, Exchange, Exchanged, Opened, Outcome, ProbeSpec, Traffic};
use crate::workload::http::response::{Fed, HeadCache, Parser};
use crate::workload::http::{prepare, tls, HttpConfig};
use anyhow::Context;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

/// The parts of an http probe's time, in order.
pub const PARTS: &[&str] = &["dns", "connect", "tls", "wait", "transfer"];

pub(crate) fn open(spec: &ProbeSpec) -> anyhow::Result<Opened> {
    let url = spec.target.to_string();
    let mut cfg = HttpConfig::new(&url);
    cfg.keepalive = false;
    cfg.connections = 1;
    cfg.requests = Some(1);
    cfg.insecure = spec.insecure;
    cfg.cacert = spec.cacert.clone();
    let p = prepare(&cfg).context("http probe")?;
    // `prepare` has checked the URL: this parse succeeds.
    let parsed = crate::util::url::Url::parse(&url).map_err(|e| crate::error::usage(format!("http probe: {e}")))?;
    let port = parsed.port_or(if p.tls.is_some() { 443 } else { 80 });
    let host = parsed.host;
    Ok(Opened {
        detail: format!(
            "GET {} over {}, a new connection each",
            p.path,
            if p.tls.is_some() { "TLS" } else { "TCP" }
        ),
        driver: Driver::Exchange(Box::new(Get {
            literal: host.parse::<IpAddr>().ok().map(|ip| SocketAddr::new(ip, port)),
            host,
            port,
            request: p.request,
            tls: p.tls,
            buf: vec![0; 64 << 10],
        })),
        parts: PARTS,
    })
}

struct Get {
    host: String,
    port: u16,
    /// The address when the URL gives one (no name to look up at each probe; `dns` is ~0).
    literal: Option<SocketAddr>,
    request: Vec<u8>,
    tls: Option<tls::Client>,
    buf: Vec<u8>,
}

/// Why a probe gave no answer.
enum Fail {
    Timeout,
    Error(String),
}

fn io_fail(step: &str, e: &io::Error) -> Fail {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Fail::Timeout,
        _ => Fail::Error(format!("{step}: {e}")),
    }
}

impl Exchange for Get {
    fn exchange(&mut self, timeout: Duration) -> Exchanged {
        let t0 = Instant::now();
        let mut marks = [t0; 6];
        let mut traffic = Traffic::default();
        let outcome = match self.get(t0 + timeout, &mut marks, &mut traffic) {
            Ok(status) => {
                let rtt = marks[5] - t0;
                if status >= 400 {
                    Outcome::Failed {
                        rtt,
                        status: status as i32,
                    }
                } else {
                    Outcome::Reply { rtt }
                }
            }
            Err(Fail::Timeout) => Outcome::Timeout,
            Err(Fail::Error(e)) => Outcome::Error(e),
        };
        let parts = match outcome {
            Outcome::Reply { .. } | Outcome::Failed { .. } => marks.windows(2).map(|w| w[1] - w[0]).collect(),
            _ => Vec::new(),
        };
        Exchanged { outcome, parts, traffic }
    }
}

impl Get {
    /// One GET; `marks` are t0, name resolved, connected, TLS done, first byte, last byte.
    fn get(&mut self, deadline: Instant, marks: &mut [Instant; 6], traffic: &mut Traffic) -> Result<u16, Fail> {
        let addr = match self.literal {
            Some(a) => a,
            None => (self.host.as_str(), self.port)
                .to_socket_addrs()
                .map_err(|e| Fail::Error(format!("dns: {e}")))?
                .next()
                .ok_or_else(|| Fail::Error(format!("dns: {} has no address", self.host)))?,
        };
        marks[1] = Instant::now();
        let left = deadline
            .checked_duration_since(marks[1])
            .filter(|d| !d.is_zero())
            .ok_or(Fail::Timeout)?;
        let mut sock = sys::connect_stream(&addr, left).map_err(|e| match tcp::connect_error(&e) {
            Outcome::Timeout => Fail::Timeout,
            o => Fail::Error(match o {
                Outcome::Error(s) => s,
                _ => "connect failed".into(),
            }),
        })?;
        marks[2] = Instant::now();
        // Reads and writes block, each bounded by the time left (SO_RCVTIMEO, SO_SNDTIMEO).
        sock.set_nonblocking(false).map_err(|e| Fail::Error(format!("socket: {e}")))?;
        let fd = sock.as_raw_fd();
        let r = match &self.tls {
            None => {
                // One write of the whole request: no small write waits behind another (Nagle),
                // so no TCP_NODELAY to set.
                marks[3] = marks[2];
                set_timeout(fd, libc::SO_SNDTIMEO, deadline)?;
                sock.write_all(&self.request).map_err(|e| io_fail("send", &e))?;
                read_response(&mut sock, false, fd, deadline, &mut self.buf, marks)
            }
            Some(client) => {
                let _ = sock.set_nodelay(true);
                let mut conn = rustls::ClientConnection::new(client.config.clone(), client.name.clone())
                    .map_err(|e| Fail::Error(format!("tls: {e}")))?;
                while conn.is_handshaking() {
                    set_timeouts(fd, deadline)?;
                    conn.complete_io(&mut sock).map_err(|e| io_fail("tls", &e))?;
                }
                marks[3] = Instant::now();
                let mut stream = rustls::Stream::new(&mut conn, &mut sock);
                set_timeouts(fd, deadline)?;
                stream.write_all(&self.request).map_err(|e| io_fail("send", &e))?;
                stream.flush().map_err(|e| io_fail("send", &e))?;
                read_response(&mut stream, true, fd, deadline, &mut self.buf, marks)
            }
        };
        *traffic = tcp::traffic_of(&sock);
        r
    }
}

/// Give the socket's reads and writes the time left until `deadline`; none left is a timeout.
fn set_timeouts(fd: RawFd, deadline: Instant) -> Result<(), Fail> {
    set_timeout(fd, libc::SO_RCVTIMEO, deadline)?;
    set_timeout(fd, libc::SO_SNDTIMEO, deadline)
}

/// Give the socket's reads (`SO_RCVTIMEO`) or writes (`SO_SNDTIMEO`) the time left until
/// `deadline`; none left is a timeout.
fn set_timeout(fd: RawFd, opt: libc::c_int, deadline: Instant) -> Result<(), Fail> {
    let left = deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
        .ok_or(Fail::Timeout)?;
    let tv = libc::timeval {
        tv_sec: left.as_secs() as libc::time_t,
        tv_usec: left.subsec_micros().max(1) as libc::suseconds_t,
    };
    sys::setsockopt(fd, libc::SOL_SOCKET, opt, &tv).map_err(|e| Fail::Error(format!("socket: {e}")))
}

/// Read one response (over TLS or not) to its end, framed by the load generator's own parser
/// (Content-Length, chunked, or the connection's end); marks[4] at the first byte, marks[5] at the
/// last.
fn read_response(r: &mut dyn Read, tls: bool, fd: RawFd, deadline: Instant, buf: &mut [u8], marks: &mut [Instant; 6]) -> Result<u16, Fail> {
    let mut parser = Parser::default();
    let mut head: Vec<u8> = Vec::new();
    let mut cache = HeadCache::default();
    let mut first = true;
    loop {
        // A TLS read may write (a key update): give writes the time left too.
        if tls {
            set_timeouts(fd, deadline)?;
        } else {
            set_timeout(fd, libc::SO_RCVTIMEO, deadline)?;
        }
        let n = match r.read(buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => 0,
            Err(e) => return Err(io_fail("receive", &e)),
        };
        let now = Instant::now();
        if n == 0 {
            return match parser.at_eof() {
                Ok(()) => {
                    marks[5] = now;
                    Ok(parser.status)
                }
                Err(_) => Err(Fail::Error("the server closed the connection before the response ended".into())),
            };
        }
        if first {
            marks[4] = now;
            first = false;
        }
        match parser.feed_read(&buf[..n], &mut head, &mut cache) {
            Ok(Fed::Done { .. }) => {
                marks[5] = now;
                return Ok(parser.status);
            }
            Ok(Fed::More) => {}
            Err(e) => return Err(Fail::Error(format!("bad response: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A response given in reads of `step` bytes.
    struct Reads<'a>(&'a [u8], usize);

    impl Read for Reads<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.1.min(self.0.len()).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn read_all(bytes: &[u8], step: usize) -> Result<u16, String> {
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").expect("a socket for the timeouts");
        let mut buf = vec![0; 64 << 10];
        let mut marks = [Instant::now(); 6];
        let deadline = Instant::now() + Duration::from_secs(5);
        read_response(&mut Reads(bytes, step), false, sock.as_raw_fd(), deadline, &mut buf, &mut marks).map_err(|e| match e {
            Fail::Timeout => "timeout".into(),
            Fail::Error(e) => e,
        })
    }

    #[test]
    fn responses_are_read_to_their_end_however_they_are_framed() {
        for step in [1, 7, 1 << 16] {
            assert_eq!(read_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", step), Ok(200));
            let chunked = b"HTTP/1.1 503 Busy\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n0\r\n\r\n";
            assert_eq!(read_all(chunked, step), Ok(503));
            assert_eq!(read_all(b"HTTP/1.0 200 OK\r\n\r\nuntil the end", step), Ok(200));
            assert_eq!(read_all(b"HTTP/1.1 204 No Content\r\n\r\n", step), Ok(204));
            assert!(read_all(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort", step).is_err());
            assert!(read_all(b"garbage\r\n\r\n", step).is_err());
        }
    }
}
