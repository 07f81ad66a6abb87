//! `tcp`: the time to connect to HOST:PORT (SYN sent to the handshake done), as tcping measures.
//! The name is resolved once, at the start; each probe opens a new connection (non-blocking, its
//! end seen by the probe scheduler's poller) and closes it.

use super::spec::resolve_host_port;
use super::{sys, Driver, Exchanged, Flow, Opened, Outcome, ProbeSpec, Ready, Traffic};
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

pub(crate) fn open(spec: &ProbeSpec) -> anyhow::Result<Opened> {
    let addr = resolve_host_port(&spec.target.to_string(), spec.kind)?;
    Ok(Opened {
        driver: Driver::Flow(Box::new(Tcp { addr, current: None })),
        detail: format!("connect to {addr}"),
        parts: &[],
    })
}

struct Tcp {
    addr: SocketAddr,
    /// The connect in progress and when it began.
    current: Option<(TcpStream, Instant)>,
}

impl Flow for Tcp {
    fn begin(&mut self) -> Result<RawFd, Exchanged> {
        let t0 = Instant::now();
        match sys::connect_start(&self.addr) {
            Ok(s) => {
                let fd = s.as_raw_fd();
                self.current = Some((s, t0));
                Ok(fd)
            }
            Err(e) => Err(Exchanged {
                outcome: connect_error(&e),
                parts: Vec::new(),
                traffic: Traffic::default(),
            }),
        }
    }

    fn ready(&mut self, r: Ready) -> Option<Exchanged> {
        let (s, t0) = self.current.as_ref()?;
        let (outcome, traffic) = if r.error {
            (connect_error(&sys::connect_failure(s)), Traffic::default())
        } else if r.writable {
            (Outcome::Reply { rtt: t0.elapsed() }, traffic_of(s))
        } else {
            return None;
        };
        self.current = None;
        Some(Exchanged {
            outcome,
            parts: Vec::new(),
            traffic,
        })
    }

    fn give_up(&mut self) -> Exchanged {
        self.current = None;
        Exchanged {
            outcome: Outcome::Timeout,
            parts: Vec::new(),
            traffic: Traffic::default(),
        }
    }
}

/// A connection's segments and payload bytes so far.
pub(crate) fn traffic_of(s: &TcpStream) -> Traffic {
    let (packets_out, packets_in, bytes_out, bytes_in) = sys::tcp_counts(s);
    Traffic {
        packets_out,
        packets_in,
        // The SYN takes one sequence number, which TCP_INFO counts as a byte acknowledged.
        bytes_out: bytes_out.saturating_sub(1),
        bytes_in,
    }
}

/// A failed connect: a timeout is a loss without answer; anything else is an error with its reason.
pub(crate) fn connect_error(e: &io::Error) -> Outcome {
    match e.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => Outcome::Timeout,
        io::ErrorKind::ConnectionRefused => Outcome::Error("connection refused".into()),
        _ => Outcome::Error(format!("connect: {e}")),
    }
}
