//! `udp`: isochronous UDP echo, as irtt measures it. Each datagram carries a magic word, its
//! sequence number and its send time (ns since the epoch), padded to `size` bytes; any echo service
//! (`perflab serve --udp-echo PORT`, or the echo of inetd) sends it back unchanged. Replies are
//! matched by sequence, so loss, reordering, duplicates and late replies are told apart.

use super::clock::Instant;
use super::spec::resolve_host_port;
use super::{sys, Datagram, Driver, Opened, ProbeSpec, Received, Traffic};
use crate::error::usage;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};

/// The first bytes of every probe datagram.
pub const MAGIC: &[u8; 4] = b"PLPb";
/// Magic, sequence number and send time.
const HEADER: usize = 4 + 8 + 8;
const DEFAULT_SIZE: usize = 64;
const MAX_SIZE: usize = 65_000;

pub(crate) fn open(spec: &ProbeSpec) -> anyhow::Result<Opened> {
    let addr = resolve_host_port(&spec.target.to_string(), spec.kind)?;
    let size = spec.size.unwrap_or(DEFAULT_SIZE);
    if !(HEADER..=MAX_SIZE).contains(&size) {
        return Err(usage(format!("udp probe: size must be {HEADER} to {MAX_SIZE} bytes")));
    }
    let local: SocketAddr = if addr.is_ipv4() {
        ([0, 0, 0, 0], 0).into()
    } else {
        ([0u16; 8], 0).into()
    };
    let sock = UdpSocket::bind(local)?;
    sock.connect(addr)
        .map_err(|e| usage(format!("udp probe: cannot reach {addr}: {e}")))?;
    sock.set_nonblocking(true)?;
    let stamped = sys::enable_rx_timestamps(sock.as_raw_fd());
    Ok(Opened {
        driver: Driver::Datagram(Box::new(Udp {
            sock,
            stamped,
            out: vec![0; size],
            buf: vec![0; MAX_SIZE + 1],
        })),
        detail: format!(
            "echo from {addr}, {size}-byte datagrams{}",
            if stamped { "" } else { ", user-space receive times" }
        ),
        parts: &[],
    })
}

struct Udp {
    sock: UdpSocket,
    stamped: bool,
    out: Vec<u8>,
    buf: Vec<u8>,
}

/// The sequence number and send time a probe datagram carries; None for anything else.
pub fn parse(d: &[u8]) -> Option<(u64, i64)> {
    if d.len() < HEADER || &d[..4] != MAGIC {
        return None;
    }
    let seq = u64::from_be_bytes(d[4..12].try_into().ok()?);
    let tx = i64::from_be_bytes(d[12..20].try_into().ok()?);
    Some((seq, tx))
}

impl Datagram for Udp {
    fn fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }

    fn kernel_stamps(&self) -> bool {
        self.stamped
    }

    fn send(&mut self, seq: u64, tx_ns: i64) -> io::Result<Traffic> {
        self.out[..4].copy_from_slice(MAGIC);
        self.out[4..12].copy_from_slice(&seq.to_be_bytes());
        self.out[12..20].copy_from_slice(&tx_ns.to_be_bytes());
        let n = sys::send(self.sock.as_raw_fd(), &self.out)?;
        Ok(Traffic {
            packets_out: 1,
            bytes_out: n as u64,
            ..Traffic::default()
        })
    }

    fn recv(&mut self) -> io::Result<Option<Received>> {
        match sys::recv_stamped(self.sock.as_raw_fd(), &mut self.buf) {
            Ok(None) => Ok(None),
            Ok(Some((n, kernel_ns))) => {
                let at = Instant::now();
                Ok(Some(match parse(&self.buf[..n]) {
                    Some((seq, _)) if n == self.out.len() => Received::Reply {
                        seq,
                        at,
                        kernel_ns,
                        bytes: n as u64,
                    },
                    _ => Received::Stray,
                }))
            }
            // An ICMP port unreachable comes back on a connected socket as ECONNREFUSED.
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => Ok(Some(Received::Error("port unreachable".into()))),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_datagram_carries_its_sequence_and_send_time() {
        let mut d = vec![0u8; 64];
        d[..4].copy_from_slice(MAGIC);
        d[4..12].copy_from_slice(&7u64.to_be_bytes());
        d[12..20].copy_from_slice(&123_456_789i64.to_be_bytes());
        assert_eq!(parse(&d), Some((7, 123_456_789)));
        assert_eq!(parse(&d[..10]), None);
        d[0] = b'x';
        assert_eq!(parse(&d), None);
    }
}
