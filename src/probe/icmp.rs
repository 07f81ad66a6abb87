//! `icmp`: echo requests to a host, as ping sends them. A raw socket where allowed (root or
//! CAP_NET_RAW); otherwise an ICMP datagram socket, which Linux gives to the groups in
//! `net.ipv4.ping_group_range` (IPv4 and IPv6 alike); otherwise one line naming that sysctl.
//! Each request carries a magic word, a 64-bit sequence number and its send time; the reply's
//! receive time is the kernel's (`SO_TIMESTAMPNS`), as ping's is.

use super::clock::Instant;
use super::{sys, Datagram, Driver, IcmpSocket, Opened, ProbeSpec, Received, Traffic};
use crate::error::usage;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU16, Ordering};

const MAGIC: &[u8; 4] = b"PLPi";
/// Magic, sequence number and send time.
const HEADER: usize = 4 + 8 + 8;
/// ping's default payload: 56 bytes, 64 with the ICMP header.
const DEFAULT_SIZE: usize = 56;
const MAX_SIZE: usize = 65_000;
/// `ICMP_FILTER` of `SOL_RAW` (linux/icmp.h): a mask of the ICMP types a raw socket drops.
const ICMP_FILTER: libc::c_int = 1;
/// `ICMP6_FILTER` of `IPPROTO_ICMPV6` (linux/icmpv6.h): 256 bits, a set bit drops that type.
const ICMP6_FILTER: libc::c_int = 1;
const ECHO_REPLY_V4: u8 = 0;
const ECHO_REQUEST_V4: u8 = 8;
const ECHO_REQUEST_V6: u8 = 128;
const ECHO_REPLY_V6: u8 = 129;

/// Distinct echo identifiers for the raw sockets of one process.
static NEXT_ID: AtomicU16 = AtomicU16::new(0);

pub(crate) fn open(spec: &ProbeSpec) -> anyhow::Result<Opened> {
    let host = spec.target.to_string();
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let ip = crate::util::url::resolve(bare, 0)
        .map_err(|e| usage(format!("icmp probe: {e} (give a host name or an address, no port)")))?
        .ip();
    let size = spec.size.unwrap_or(DEFAULT_SIZE);
    if !(HEADER..=MAX_SIZE).contains(&size) {
        return Err(usage(format!("icmp probe: size must be {HEADER} to {MAX_SIZE} bytes")));
    }
    let v6 = ip.is_ipv6();
    let (domain, proto) = if v6 {
        (libc::AF_INET6, libc::IPPROTO_ICMPV6)
    } else {
        (libc::AF_INET, libc::IPPROTO_ICMP)
    };
    let raw = match spec.icmp_socket {
        IcmpSocket::Datagram => None,
        mode => match sys::socket(domain, libc::SOCK_RAW, proto) {
            Ok(fd) => Some(fd),
            Err(e) if is_denied(&e) && mode == IcmpSocket::Auto => None,
            Err(e) if is_denied(&e) => return Err(usage(
                "icmp probe: a raw socket needs root or CAP_NET_RAW (the datagram socket needs your group in net.ipv4.ping_group_range)",
            )),
            Err(e) => return Err(anyhow::anyhow!("icmp probe: cannot open a raw socket: {e}")),
        },
    };
    let (fd, is_raw) = match raw {
        Some(fd) => (fd, true),
        None => match sys::socket(domain, libc::SOCK_DGRAM, proto) {
            Ok(fd) => (fd, false),
            Err(e) if is_denied(&e) => return Err(no_datagram_socket(spec.icmp_socket)),
            Err(e) => return Err(anyhow::anyhow!("icmp probe: cannot open an ICMP datagram socket: {e}")),
        },
    };
    sys::connect(fd.as_raw_fd(), &SocketAddr::new(ip, 0)).map_err(|e| usage(format!("icmp probe: cannot reach {ip}: {e}")))?;
    if is_raw {
        filter_echo_replies(&fd, v6)?;
    }
    let stamped = sys::enable_rx_timestamps(fd.as_raw_fd());
    let id = if is_raw {
        (std::process::id() as u16)
            .wrapping_mul(31)
            .wrapping_add(NEXT_ID.fetch_add(1, Ordering::Relaxed))
    } else {
        0
    };
    if is_raw {
        // Other pings' replies are dropped by the kernel, not after waking us (as ping does too).
        sys::attach_filter(fd.as_raw_fd(), &ident_filter(id, v6));
    }
    let kind = if is_raw { "raw socket" } else { "datagram socket" };
    Ok(Opened {
        driver: Driver::Datagram(Box::new(Icmp {
            fd,
            ip,
            raw: is_raw,
            id,
            stamped,
            out: vec![0; 8 + size],
            buf: vec![0; MAX_SIZE + 128],
        })),
        detail: format!(
            "echo to {ip}, {kind}, {size}-byte payload{}",
            if stamped { "" } else { ", user-space receive times" }
        ),
        parts: &[],
    })
}

fn is_denied(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES))
}

/// The line for a process that may open neither socket.
fn no_datagram_socket(mode: IcmpSocket) -> anyhow::Error {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ping_group_range")
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unreadable".into());
    // SAFETY: getegid takes no arguments and cannot fail.
    let gid = unsafe { libc::getegid() };
    let raw = if mode == IcmpSocket::Auto {
        "no raw socket (needs root or CAP_NET_RAW) and "
    } else {
        ""
    };
    usage(format!(
        "icmp probe: {raw}no ICMP datagram socket: net.ipv4.ping_group_range is \"{range}\", which leaves out group {gid}; allow it with: sysctl -w net.ipv4.ping_group_range=\"0 2147483647\""
    ))
}

/// A raw socket sees every ICMP message of the host: let only echo replies through.
fn filter_echo_replies(fd: &OwnedFd, v6: bool) -> anyhow::Result<()> {
    let r = if v6 {
        let mut mask = [u32::MAX; 8];
        mask[(ECHO_REPLY_V6 >> 5) as usize] &= !(1u32 << (ECHO_REPLY_V6 & 31));
        sys::setsockopt(fd.as_raw_fd(), libc::IPPROTO_ICMPV6, ICMP6_FILTER, &mask)
    } else {
        let mask: u32 = !(1u32 << ECHO_REPLY_V4);
        sys::setsockopt(fd.as_raw_fd(), libc::SOL_RAW, ICMP_FILTER, &mask)
    };
    r.map_err(|e| anyhow::anyhow!("icmp probe: cannot filter the raw socket: {e}"))
}

/// A classic BPF program that passes ICMP messages whose echo identifier is `id` and drops the
/// rest. A raw IPv4 socket's packets start at the IP header, a raw ICMPv6 socket's at the ICMP one.
fn ident_filter(id: u16, v6: bool) -> [libc::sock_filter; 5] {
    let op = |code: u32, jt: u8, jf: u8, k: u32| libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    [
        // X = the IP header's length (IPv4), or 0.
        if v6 {
            op(libc::BPF_LDX | libc::BPF_IMM, 0, 0, 0)
        } else {
            op(libc::BPF_LDX | libc::BPF_B | libc::BPF_MSH, 0, 0, 0)
        },
        // A = the identifier, 4 bytes into the ICMP header.
        op(libc::BPF_LD | libc::BPF_H | libc::BPF_IND, 0, 0, 4),
        op(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, 0, 1, id as u32),
        op(libc::BPF_RET | libc::BPF_K, 0, 0, u32::MAX),
        op(libc::BPF_RET | libc::BPF_K, 0, 0, 0),
    ]
}

struct Icmp {
    fd: OwnedFd,
    ip: IpAddr,
    raw: bool,
    id: u16,
    stamped: bool,
    out: Vec<u8>,
    buf: Vec<u8>,
}

/// The Internet checksum (RFC 1071).
fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        sum += (*last as u32) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl Icmp {
    /// The ICMP message of a received datagram (raw IPv4 sockets also give the IP header).
    fn message<'a>(&self, d: &'a [u8]) -> Option<&'a [u8]> {
        if self.raw && self.ip.is_ipv4() {
            let ihl = (*d.first()? & 0x0f) as usize * 4;
            d.get(ihl..)
        } else {
            Some(d)
        }
    }
}

impl Datagram for Icmp {
    fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn kernel_stamps(&self) -> bool {
        self.stamped
    }

    fn send(&mut self, seq: u64, tx_ns: i64) -> io::Result<Traffic> {
        let o = &mut self.out;
        o[0] = if self.ip.is_ipv6() { ECHO_REQUEST_V6 } else { ECHO_REQUEST_V4 };
        o[1] = 0;
        o[2..4].copy_from_slice(&[0, 0]);
        // A datagram socket's identifier is its port, which the kernel writes in.
        o[4..6].copy_from_slice(&self.id.to_be_bytes());
        o[6..8].copy_from_slice(&(seq as u16).to_be_bytes());
        o[8..12].copy_from_slice(MAGIC);
        o[12..20].copy_from_slice(&seq.to_be_bytes());
        o[20..28].copy_from_slice(&tx_ns.to_be_bytes());
        // The kernel computes the checksum for ICMPv6 and for datagram sockets.
        if self.raw && self.ip.is_ipv4() {
            let c = checksum(o);
            o[2..4].copy_from_slice(&c.to_be_bytes());
        }
        let n = sys::send(self.fd.as_raw_fd(), o)?;
        Ok(Traffic {
            packets_out: 1,
            bytes_out: n as u64,
            ..Traffic::default()
        })
    }

    fn recv(&mut self) -> io::Result<Option<Received>> {
        let mut buf = std::mem::take(&mut self.buf);
        let got = sys::recv_stamped(self.fd.as_raw_fd(), &mut buf);
        let r = match got {
            Ok(None) => Ok(None),
            Ok(Some((n, kernel_ns))) => {
                let at = Instant::now();
                Ok(Some(self.reply(&buf[..n], at, kernel_ns).unwrap_or(Received::Stray)))
            }
            Err(e) if matches!(e.raw_os_error(), Some(libc::EHOSTUNREACH) | Some(libc::ENETUNREACH)) => {
                Ok(Some(Received::Error("unreachable".into())))
            }
            Err(e) => Err(e),
        };
        self.buf = buf;
        r
    }
}

impl Icmp {
    fn reply(&self, d: &[u8], at: Instant, kernel_ns: Option<i64>) -> Option<Received> {
        let m = self.message(d)?;
        let reply_type = if self.ip.is_ipv6() { ECHO_REPLY_V6 } else { ECHO_REPLY_V4 };
        if m.len() < 8 + HEADER || m[0] != reply_type || &m[8..12] != MAGIC {
            return None;
        }
        if self.raw && m[4..6] != self.id.to_be_bytes() {
            return None;
        }
        let seq = u64::from_be_bytes(m[12..20].try_into().ok()?);
        if m[6..8] != (seq as u16).to_be_bytes() {
            return None;
        }
        Some(Received::Reply {
            seq,
            at,
            kernel_ns,
            bytes: m.len() as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_of_rfc1071_example() {
        // RFC 1071 section 3: the sum of 0001 f203 f4f5 f6f7 is ddf2, its complement 220d.
        assert_eq!(checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]), 0x220d);
        // A message with its checksum in place sums to zero.
        let mut m = vec![8, 0, 0, 0, 0x12, 0x34, 0, 1, b'a', b'b', b'c'];
        let c = checksum(&m);
        m[2..4].copy_from_slice(&c.to_be_bytes());
        assert_eq!(checksum(&m), 0);
    }
}
