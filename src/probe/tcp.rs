//! `tcp`: the time to connect to HOST:PORT (SYN sent to the handshake done), as tcping measures.
//! The name is resolved once, at the start; each probe opens a new connection (non-blocking) and
//! closes it. To this machine (loopback, a peer in a network namespace) the handshake is done
//! within the `connect` call, and the `TCP_INFO` read for the probe's traffic says so: the probe
//! ends there, with no wait in the poller; else the probe scheduler's poller sees the connect end.

use super::clock::Instant;
use super::spec::resolve_host_port;
use super::{sys, Begun, Driver, Exchanged, Flow, Opened, Outcome, Parts, ProbeSpec, Ready, Traffic};
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;

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
    fn begin(&mut self) -> Begun {
        let t0 = Instant::now();
        match sys::connect_start(&self.addr) {
            Ok(s) => {
                let at = Instant::now();
                if let Some(info) = sys::tcp_info(&s).filter(|i| i.established) {
                    // Connected within the call; the socket closes here.
                    return Begun::Done(Exchanged {
                        outcome: Outcome::Reply { rtt: at - t0 },
                        parts: Parts::NONE,
                        traffic: traffic(info),
                    });
                }
                let fd = s.as_raw_fd();
                self.current = Some((s, t0));
                Begun::Wait(fd)
            }
            Err(e) => Begun::Done(Exchanged {
                outcome: connect_error(&e),
                parts: Parts::NONE,
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
            parts: Parts::NONE,
            traffic,
        })
    }

    fn give_up(&mut self) -> Exchanged {
        self.current = None;
        Exchanged {
            outcome: Outcome::Timeout,
            parts: Parts::NONE,
            traffic: Traffic::default(),
        }
    }
}

/// A connection's segments and payload bytes so far.
pub(crate) fn traffic_of(s: &TcpStream) -> Traffic {
    sys::tcp_info(s).map(traffic).unwrap_or_default()
}

fn traffic(i: sys::TcpInfo) -> Traffic {
    Traffic {
        packets_out: i.segs_out,
        packets_in: i.segs_in,
        // The SYN takes one sequence number, which TCP_INFO counts as a byte acknowledged.
        bytes_out: i.bytes_acked.saturating_sub(1),
        bytes_in: i.bytes_received,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(addr: SocketAddr) -> Tcp {
        Tcp { addr, current: None }
    }

    #[test]
    fn a_connect_done_within_its_call_ends_the_probe_with_its_traffic() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut t = tcp(l.local_addr().unwrap());
        match t.begin() {
            // On loopback the handshake is done before connect returns.
            Begun::Done(d) => {
                assert!(matches!(d.outcome, Outcome::Reply { .. }), "{:?}", d.outcome);
                // SYN and ACK out, SYN-ACK in, as the poller's path counts them; no payload.
                assert_eq!((d.traffic.packets_out, d.traffic.packets_in), (2, 1), "{:?}", d.traffic);
                assert_eq!((d.traffic.bytes_out, d.traffic.bytes_in), (0, 0));
                assert!(t.current.is_none(), "nothing left for the poller");
            }
            Begun::Wait(_) | Begun::Reading(_) => panic!("a loopback connect still in progress after its call"),
        }
        assert!(l.accept().is_ok(), "the connection was made");
    }

    #[test]
    fn a_refused_connect_is_left_to_the_poller_and_ends_as_an_error() {
        let addr = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap()
        };
        let mut t = tcp(addr);
        let d = match t.begin() {
            Begun::Done(d) => d,
            Begun::Wait(fd) | Begun::Reading(fd) => {
                assert_eq!(
                    super::super::sys::poll_in(&[fd], Some(std::time::Duration::from_secs(5))).unwrap(),
                    1
                );
                t.ready(Ready {
                    readable: true,
                    writable: false,
                    error: true,
                })
                .expect("the refusal ends the probe")
            }
        };
        assert_eq!(d.outcome, Outcome::Error("connection refused".into()));
    }
}
