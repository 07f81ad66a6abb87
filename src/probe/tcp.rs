//! `tcp`: the time to connect to HOST:PORT (SYN sent to the handshake done), as tcping measures.
//! The name is resolved once, at the start; each probe opens a new connection and closes it.

use super::spec::resolve_host_port;
use super::{sys, Driver, Exchange, Exchanged, Opened, Outcome, ProbeSpec, Traffic};
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

pub(crate) fn open(spec: &ProbeSpec) -> anyhow::Result<Opened> {
    let addr = resolve_host_port(&spec.target.to_string(), spec.kind)?;
    Ok(Opened {
        driver: Driver::Exchange(Box::new(Tcp { addr })),
        detail: format!("connect to {addr}"),
        parts: &[],
    })
}

struct Tcp {
    addr: SocketAddr,
}

impl Exchange for Tcp {
    fn exchange(&mut self, timeout: Duration) -> Exchanged {
        let t0 = Instant::now();
        let (outcome, traffic) = match sys::connect_stream(&self.addr, timeout) {
            Ok(s) => {
                let rtt = t0.elapsed();
                (Outcome::Reply { rtt }, traffic_of(&s))
            }
            Err(e) => (connect_error(&e), Traffic::default()),
        };
        Exchanged {
            outcome,
            parts: Vec::new(),
            traffic,
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
