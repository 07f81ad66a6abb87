//! `http`: one GET over a fresh connection per probe, its time cut into parts as `curl -w` reports
//! them: `dns` (name lookup), `connect` (TCP), `tls` (the handshake; 0 for http://), `wait` (request
//! sent to the first response byte) and `transfer` (first byte to the last). The parts add up to the
//! total; curl's `time_starttransfer` is dns + connect + tls + wait. HTTP/1.1 with `Connection:
//! close`; the request, the URL checks and the TLS client (rustls: `insecure`, `cacert`) are those
//! of `perflab http`, and so is the response's parser: a status >= 400 is an answer that failed; a
//! body is read to its Content-Length, its last chunk, or the connection's end when unframed.

use super::clock::Instant;
use super::{sys, tcp, Begun, Driver, Exchanged, Flow, Opened, Outcome, Parts, ProbeSpec, Ready, Traffic};
use crate::workload::http::response::{Fed, HeadCache, Parser};
use crate::workload::http::{prepare, tls, HttpConfig};
use anyhow::Context;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;

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
        driver: Driver::Flow(Box::new(Get {
            literal: host.parse::<IpAddr>().ok().map(|ip| SocketAddr::new(ip, port)),
            host,
            port,
            request: p.request,
            tls: p.tls,
            scratch: Scratch::new(64 << 10),
            current: None,
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
    scratch: Scratch,
    /// The GET in progress.
    current: Option<Conn>,
}

/// What every GET of a probe reuses: the read buffer, and the last response head with its parse,
/// kept from one GET to the next: a server's head is most often the same bytes each time,
/// recognised by one comparison instead of parsed again (less code for each probe to run, see
/// docs/probes.md, Cost).
struct Scratch {
    buf: Vec<u8>,
    cache: HeadCache,
}

impl Scratch {
    fn new(len: usize) -> Scratch {
        Scratch {
            buf: vec![0; len],
            cache: HeadCache::default(),
        }
    }
}

/// A probe over before its socket went to the poller.
fn failed(outcome: Outcome) -> Begun {
    Begun::Done(Exchanged {
        outcome,
        parts: Parts::NONE,
        traffic: Traffic::default(),
    })
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

/// Where a GET is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    Connecting,
    Handshake,
    Sending,
    Reading,
}

/// One GET on its connection: `marks` are t0, name resolved, connected, TLS done, first byte,
/// last byte.
struct Conn {
    sock: TcpStream,
    tls: Option<rustls::ClientConnection>,
    stage: Stage,
    marks: [Instant; 6],
    /// Bytes of the request written (plain http).
    sent: usize,
    response: Response,
}

impl Flow for Get {
    fn begin(&mut self) -> Begun {
        let t0 = Instant::now();
        let addr = match self.literal {
            Some(a) => Ok(a),
            None => (self.host.as_str(), self.port)
                .to_socket_addrs()
                .map_err(|e| format!("dns: {e}"))
                .and_then(|mut a| a.next().ok_or_else(|| format!("dns: {} has no address", self.host))),
        };
        let resolved = Instant::now();
        let sock = addr.and_then(|a| {
            sys::connect_start(&a).map_err(|e| match tcp::connect_error(&e) {
                Outcome::Error(s) => s,
                _ => "connect failed".into(),
            })
        });
        let mut c = match sock {
            Ok(sock) => {
                let mut marks = [t0; 6];
                marks[1] = resolved;
                Conn {
                    sock,
                    tls: None,
                    stage: Stage::Connecting,
                    marks,
                    sent: 0,
                    response: Response::default(),
                }
            }
            Err(e) => return failed(Outcome::Error(e)),
        };
        let begun = match self.tls {
            None => c.send_at_once(&self.request),
            Some(_) => Ok(Begun::Wait(c.sock.as_raw_fd())),
        };
        match begun {
            Ok(b) => {
                self.current = Some(c);
                b
            }
            Err(outcome) => failed(outcome),
        }
    }

    fn ready(&mut self, r: Ready) -> Option<Exchanged> {
        let c = self.current.as_mut()?;
        let status = match c.advance(r, &self.request, self.tls.as_ref(), &mut self.scratch) {
            Ok(None) => return None,
            Ok(Some(status)) => Ok(status),
            Err(f) => Err(f),
        };
        let c = self.current.take()?;
        let t0 = c.marks[0];
        let outcome = match status {
            Ok(status) if status >= 400 => Outcome::Failed {
                rtt: c.marks[5] - t0,
                status: status as i32,
            },
            Ok(_) => Outcome::Reply { rtt: c.marks[5] - t0 },
            Err(Fail::Timeout) => Outcome::Timeout,
            Err(Fail::Error(e)) => Outcome::Error(e),
        };
        let parts = match outcome {
            Outcome::Reply { .. } | Outcome::Failed { .. } => c.marks.windows(2).map(|w| w[1] - w[0]).collect(),
            _ => Parts::NONE,
        };
        Some(Exchanged {
            outcome,
            parts,
            traffic: c.traffic(),
        })
    }

    fn give_up(&mut self) -> Exchanged {
        let traffic = self.current.take().map(|c| c.traffic()).unwrap_or_default();
        Exchanged {
            outcome: Outcome::Timeout,
            parts: Parts::NONE,
            traffic,
        }
    }
}

impl Conn {
    /// The connection's traffic: none before it was made.
    fn traffic(&self) -> Traffic {
        if self.stage == Stage::Connecting {
            Traffic::default()
        } else {
            tcp::traffic_of(&self.sock)
        }
    }

    /// Go as far as the socket lets: the status once the response has ended, None when the
    /// socket would block.
    fn advance(&mut self, r: Ready, request: &[u8], client: Option<&tls::Client>, scratch: &mut Scratch) -> Result<Option<u16>, Fail> {
        if self.stage == Stage::Connecting {
            if r.error {
                return Err(match tcp::connect_error(&sys::connect_failure(&self.sock)) {
                    Outcome::Error(s) => Fail::Error(s),
                    _ => Fail::Error("connect failed".into()),
                });
            }
            if !r.writable {
                return Ok(None);
            }
            self.marks[2] = Instant::now();
            match client {
                None => {
                    // One write of the whole request: no small write waits behind another
                    // (Nagle), so no TCP_NODELAY to set.
                    self.marks[3] = self.marks[2];
                    self.stage = Stage::Sending;
                }
                Some(client) => {
                    let _ = self.sock.set_nodelay(true);
                    let conn = rustls::ClientConnection::new(client.config.clone(), client.name.clone())
                        .map_err(|e| Fail::Error(format!("tls: {e}")))?;
                    self.tls = Some(conn);
                    self.stage = Stage::Handshake;
                }
            }
        }
        match self.tls.as_mut() {
            None => self.advance_plain(request, scratch),
            Some(conn) => advance_tls(
                conn,
                &mut self.sock,
                &mut self.stage,
                &mut self.marks,
                request,
                &mut self.response,
                scratch,
            ),
        }
    }

    /// Send the request right after `connect` (plain http): where the handshake was done within
    /// that call (loopback, a peer on this host) the write goes through, the connection's time
    /// is exact, and the poller need only wake for the response; where it is still in progress
    /// the write would block and the poller waits for the connection as before. An error here is
    /// most often the connection's (a refusal seen within the call): the probe's outcome.
    fn send_at_once(&mut self, request: &[u8]) -> Result<Begun, Outcome> {
        let fd = self.sock.as_raw_fd();
        let connected = Instant::now();
        loop {
            match self.sock.write(request) {
                Ok(n) => {
                    self.marks[2] = connected;
                    self.marks[3] = connected;
                    self.sent = n;
                    if n == request.len() {
                        self.stage = Stage::Reading;
                        return Ok(Begun::Reading(fd));
                    }
                    self.stage = Stage::Sending;
                    return Ok(Begun::Wait(fd));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Begun::Wait(fd)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(match e.kind() {
                        io::ErrorKind::ConnectionRefused
                        | io::ErrorKind::HostUnreachable
                        | io::ErrorKind::NetworkUnreachable
                        | io::ErrorKind::TimedOut => tcp::connect_error(&e),
                        _ => Outcome::Error(format!("send: {e}")),
                    })
                }
            }
        }
    }

    fn advance_plain(&mut self, request: &[u8], scratch: &mut Scratch) -> Result<Option<u16>, Fail> {
        while self.stage == Stage::Sending {
            match self.sock.write(&request[self.sent..]) {
                Ok(n) => {
                    self.sent += n;
                    if self.sent == request.len() {
                        // The response cannot be there yet: its arrival is the next readiness
                        // (edge-triggered, it comes even if it arrived before this returns).
                        self.stage = Stage::Reading;
                        return Ok(None);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_fail("send", &e)),
            }
        }
        self.response.read(&mut self.sock, scratch, &mut self.marks)
    }
}

/// The TLS side of [`Conn::advance`]: the handshake, the request, the response, each as far as
/// the socket lets.
fn advance_tls(
    conn: &mut rustls::ClientConnection,
    sock: &mut TcpStream,
    stage: &mut Stage,
    marks: &mut [Instant; 6],
    request: &[u8],
    response: &mut Response,
    scratch: &mut Scratch,
) -> Result<Option<u16>, Fail> {
    if *stage == Stage::Handshake {
        while conn.is_handshaking() {
            match conn.complete_io(sock) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_fail("tls", &e)),
            }
        }
        marks[3] = Instant::now();
        conn.writer().write_all(request).map_err(|e| io_fail("send", &e))?;
        *stage = Stage::Sending;
    }
    if *stage == Stage::Sending {
        while conn.wants_write() {
            match conn.write_tls(sock) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_fail("send", &e)),
            }
        }
        *stage = Stage::Reading;
    }
    response.read(&mut TlsReader { conn, sock }, scratch, marks)
}

/// The plaintext of a TLS connection on a non-blocking socket: what rustls has decrypted, then
/// more records read from the socket (WouldBlock when it has none; its end as 0).
struct TlsReader<'a> {
    conn: &'a mut rustls::ClientConnection,
    sock: &'a mut TcpStream,
}

impl Read for TlsReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.conn.reader().read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                other => return other,
            }
            // A read may have to write (a key update).
            while self.conn.wants_write() {
                self.conn.write_tls(self.sock)?;
            }
            if self.conn.read_tls(self.sock)? > 0 {
                self.conn
                    .process_new_packets()
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            } else {
                // The socket's end: the reader now says whether the peer closed cleanly.
                self.conn
                    .process_new_packets()
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                return match self.conn.reader().read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
                    other => other,
                };
            }
        }
    }
}

/// A response read as it comes, framed by the load generator's own parser (Content-Length,
/// chunked, or the connection's end).
#[derive(Default)]
struct Response {
    parser: Parser,
    head: Vec<u8>,
    started: bool,
}

impl Response {
    /// Read what `r` has: the status once the response has ended (marks[4] at its first byte,
    /// marks[5] at its last), None when `r` would block.
    fn read(&mut self, r: &mut dyn Read, scratch: &mut Scratch, marks: &mut [Instant; 6]) -> Result<Option<u16>, Fail> {
        let Scratch { buf, cache } = scratch;
        loop {
            let n = match r.read(buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => 0,
                Err(e) => return Err(io_fail("receive", &e)),
            };
            let now = Instant::now();
            if n == 0 {
                return match self.parser.at_eof() {
                    Ok(()) => {
                        marks[5] = now;
                        Ok(Some(self.parser.status))
                    }
                    Err(_) => Err(Fail::Error("the server closed the connection before the response ended".into())),
                };
            }
            if !self.started {
                marks[4] = now;
                self.started = true;
            }
            match self.parser.feed_read(&buf[..n], &mut self.head, cache) {
                Ok(Fed::Done { .. }) => {
                    marks[5] = now;
                    return Ok(Some(self.parser.status));
                }
                Ok(Fed::More) => {}
                Err(e) => return Err(Fail::Error(format!("bad response: {e}"))),
            }
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
        let mut marks = [Instant::now(); 6];
        match Response::default().read(&mut Reads(bytes, step), &mut Scratch::new(64 << 10), &mut marks) {
            Ok(Some(status)) => Ok(status),
            Ok(None) => Err("would block".into()),
            Err(Fail::Timeout) => Err("timeout".into()),
            Err(Fail::Error(e)) => Err(e),
        }
    }

    fn get(addr: SocketAddr) -> Get {
        Get {
            host: addr.ip().to_string(),
            port: addr.port(),
            literal: Some(addr),
            request: b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".to_vec(),
            tls: None,
            scratch: Scratch::new(4096),
            current: None,
        }
    }

    #[test]
    fn a_connection_made_within_its_call_carries_the_request_at_once() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut g = get(l.local_addr().unwrap());
        // On loopback the handshake is done before connect returns: the request goes with it and
        // the poller is to wake for the response only.
        let Begun::Reading(fd) = g.begin() else {
            panic!("a loopback connect still in progress after its call")
        };
        let c = g.current.as_ref().unwrap();
        assert!(c.stage == Stage::Reading && c.sent == g.request.len());
        assert!(
            c.marks[2] >= c.marks[1] && c.marks[3] == c.marks[2],
            "connect ends where the request is sent"
        );
        let (mut s, _) = l.accept().unwrap();
        let mut got = vec![0; g.request.len()];
        s.read_exact(&mut got).unwrap();
        assert_eq!(got, g.request);
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").unwrap();
        let ready = Ready {
            readable: true,
            writable: false,
            error: false,
        };
        let timeout = Some(std::time::Duration::from_secs(5));
        assert_eq!(super::super::sys::poll_in(&[fd], timeout).unwrap(), 1, "the response came");
        let done = g.ready(ready).expect("the response ends the probe");
        assert!(matches!(done.outcome, Outcome::Reply { .. }), "{:?}", done.outcome);
        assert_eq!(done.parts.len(), PARTS.len());
    }

    #[test]
    fn a_connection_still_being_made_waits_for_the_poller_with_nothing_sent() {
        // A listener whose accept queue is full drops new SYNs: the connect stays in progress.
        // SAFETY: plain socket calls on a descriptor owned here; the address is a live sockaddr_in.
        let (fd, addr) = unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            assert!(fd >= 0);
            let mut sa: libc::sockaddr_in = std::mem::zeroed();
            sa.sin_family = libc::AF_INET as libc::sa_family_t;
            sa.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
            let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            assert_eq!(libc::bind(fd, (&sa as *const libc::sockaddr_in).cast(), len), 0);
            assert_eq!(libc::listen(fd, 0), 0);
            let mut got = sa;
            let mut glen = len;
            assert_eq!(libc::getsockname(fd, (&mut got as *mut libc::sockaddr_in).cast(), &mut glen), 0);
            (
                <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd),
                SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, u16::from_be(got.sin_port))),
            )
        };
        // Fill the queue (its size is the backlog + 1), then probe.
        let _held: Vec<TcpStream> = (0..2)
            .filter_map(|_| TcpStream::connect_timeout(&addr, std::time::Duration::from_millis(200)).ok())
            .collect();
        let mut g = get(addr);
        match g.begin() {
            Begun::Wait(_) => {
                let c = g.current.as_ref().unwrap();
                assert!(c.stage == Stage::Connecting && c.sent == 0, "nothing written yet");
                assert_eq!(c.marks[2], c.marks[0], "no connect time yet");
            }
            Begun::Reading(_) => panic!("a SYN to a full queue cannot have been answered"),
            Begun::Done(d) => panic!("{:?}", d.outcome),
        }
        drop(fd);
    }

    #[test]
    fn a_connection_refused_within_its_call_ends_the_probe_as_refused() {
        let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let mut g = get(addr);
        match g.begin() {
            Begun::Done(d) => assert_eq!(d.outcome, Outcome::Error("connection refused".into())),
            // Refused after the call returned: the poller sees it, as before.
            Begun::Wait(_) => assert!(g.current.is_some()),
            Begun::Reading(_) => panic!("nothing listens there"),
        }
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
