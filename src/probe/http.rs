//! `http`: one GET over a fresh connection per probe, its time cut into parts as `curl -w` reports
//! them: `dns` (name lookup), `connect` (TCP), `tls` (the handshake; 0 for http://), `wait` (request
//! sent to the first response byte) and `transfer` (first byte to the last). The parts add up to the
//! total; curl's `time_starttransfer` is dns + connect + tls + wait. HTTP/1.1 with `Connection:
//! close`; the request, the URL checks and the TLS client (rustls: `insecure`, `cacert`) are those
//! of `perflab http`. A status >= 400 is an answer that failed; a body is read to its
//! Content-Length, or to the connection's end when chunked or unframed.

use super::{sys, tcp, Driver, Exchange, Exchanged, Opened, Outcome, ProbeSpec, Traffic};
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
    let authority = p.origin.split_once("://").map_or(p.origin.as_str(), |(_, a)| a);
    let (host, port) = split_authority(authority, if p.tls.is_some() { 443 } else { 80 });
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

/// `host:port`, `[v6]:port` or a bare host → (host without brackets, port).
fn split_authority(authority: &str, default_port: u16) -> (String, u16) {
    if let Some((h, p)) = authority.rsplit_once(':') {
        if let Ok(port) = p.parse::<u16>() {
            if !h.contains(':') || h.ends_with(']') {
                return (h.trim_start_matches('[').trim_end_matches(']').to_string(), port);
            }
        }
    }
    (authority.trim_start_matches('[').trim_end_matches(']').to_string(), default_port)
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

/// How the body ends.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Framing {
    /// This many body bytes.
    Length(usize),
    /// At the connection's end (chunked or unframed; the request asked for `Connection: close`).
    UntilEof,
}

/// The status, head length and framing of a complete head; None while incomplete.
fn parse_head(buf: &[u8]) -> Result<Option<(u16, usize, Framing)>, String> {
    let mut headers = [httparse::EMPTY_HEADER; 100];
    let mut r = httparse::Response::new(&mut headers);
    let len = match r.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(format!("bad response: {e}")),
    };
    let status = r.code.unwrap_or(0);
    let mut framing = Framing::UntilEof;
    for h in r.headers.iter() {
        if h.name.eq_ignore_ascii_case("transfer-encoding") {
            framing = Framing::UntilEof;
            break;
        }
        if h.name.eq_ignore_ascii_case("content-length") {
            let n = std::str::from_utf8(h.value).ok().and_then(|v| v.trim().parse().ok());
            framing = Framing::Length(n.ok_or("bad response: a Content-Length that is not a number")?);
        }
    }
    if matches!(status, 100..=199 | 204 | 304) {
        framing = Framing::Length(0);
    }
    Ok(Some((status, len, framing)))
}

/// Read one response (over TLS or not) to its end; marks[4] at the first byte, marks[5] at the last.
fn read_response(r: &mut dyn Read, tls: bool, fd: RawFd, deadline: Instant, buf: &mut [u8], marks: &mut [Instant; 6]) -> Result<u16, Fail> {
    let mut head: Vec<u8> = Vec::new();
    let mut parsed: Option<(u16, Framing)> = None;
    let mut body = 0usize;
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
            return match parsed {
                Some((status, Framing::UntilEof)) => {
                    marks[5] = now;
                    Ok(status)
                }
                _ => Err(Fail::Error("the server closed the connection before the response ended".into())),
            };
        }
        if head.is_empty() && parsed.is_none() {
            marks[4] = now;
        }
        match parsed {
            Some(_) => body += n,
            None => {
                head.extend_from_slice(&buf[..n]);
                if let Some((status, len, framing)) = parse_head(&head).map_err(Fail::Error)? {
                    body = head.len() - len;
                    parsed = Some((status, framing));
                } else if head.len() > 64 << 10 {
                    return Err(Fail::Error("bad response: a head over 64 KiB".into()));
                }
            }
        }
        if let Some((status, Framing::Length(want))) = parsed {
            if body >= want {
                marks[5] = now;
                return Ok(status);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities_split_into_host_and_port() {
        assert_eq!(split_authority("127.0.0.1:8080", 80), ("127.0.0.1".into(), 8080));
        assert_eq!(split_authority("example.com", 443), ("example.com".into(), 443));
        assert_eq!(split_authority("[::1]:9000", 80), ("::1".into(), 9000));
        assert_eq!(split_authority("[::1]", 80), ("::1".into(), 80));
    }

    #[test]
    fn heads_give_status_and_framing() {
        let h = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        assert_eq!(parse_head(h).unwrap(), Some((200, h.len() - 5, Framing::Length(5))));
        let h = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert_eq!(parse_head(h).unwrap().unwrap().2, Framing::UntilEof);
        assert_eq!(
            parse_head(b"HTTP/1.1 204 No Content\r\n\r\n").unwrap().unwrap().2,
            Framing::Length(0)
        );
        assert_eq!(parse_head(b"HTTP/1.1 200 OK\r\nConte").unwrap(), None);
        assert!(parse_head(b"garbage\r\n\r\n").is_err());
    }
}
