//! The wire format between `perflab load net` (the client) and `perflab serve --net` (its server),
//! shared by both ends. Every TCP connection opens with a [`Header`] of [`HEADER_LEN`] bytes; UDP
//! datagrams start with a [`Datagram`] stamp; at the end of a UDP test the server sends a
//! [`UdpReport`] on the test's TCP control connection. All integers are big-endian.

/// The first bytes of every header and datagram.
pub const MAGIC: [u8; 4] = *b"PLN1";
pub const HEADER_LEN: usize = 24;
/// The smallest UDP datagram (its stamp).
pub const DATAGRAM_MIN: usize = 32;
pub const REPORT_LEN: usize = 48;

/// What a connection is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The client sends; the server counts until EOF, then answers its count as 8 bytes.
    Upload = 1,
    /// The server sends `size`-byte blocks (`limit` bytes in all when not 0), until the client closes.
    Download = 2,
    /// Round trips: the server reads `size` bytes and writes `size` bytes back, until EOF.
    RoundTrip = 3,
    /// The control connection of a UDP test `limit` (its session): the client closes its side when
    /// it has sent, the server answers a [`UdpReport`].
    UdpControl = 4,
}

impl Mode {
    fn from_u8(b: u8) -> Option<Mode> {
        Some(match b {
            1 => Mode::Upload,
            2 => Mode::Download,
            3 => Mode::RoundTrip,
            4 => Mode::UdpControl,
            _ => return None,
        })
    }
}

/// A connection's opening.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub mode: Mode,
    /// Block (stream), request (round trip) or datagram size, in bytes.
    pub size: u32,
    /// The server's socket buffers (SO_SNDBUF and SO_RCVBUF), bytes; 0 = the kernel's default.
    pub buffer: u32,
    /// Download: the bytes to send (0 = until the client closes). UDP: the session.
    pub limit: u64,
}

impl Header {
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[..4].copy_from_slice(&MAGIC);
        b[4] = self.mode as u8;
        b[8..12].copy_from_slice(&self.size.to_be_bytes());
        b[12..16].copy_from_slice(&self.buffer.to_be_bytes());
        b[16..24].copy_from_slice(&self.limit.to_be_bytes());
        b
    }

    pub fn decode(b: &[u8; HEADER_LEN]) -> Result<Header, String> {
        if b[..4] != MAGIC {
            return Err("not a perflab net client (bad magic)".into());
        }
        let mode = Mode::from_u8(b[4]).ok_or_else(|| format!("unknown mode {}", b[4]))?;
        let u32_at = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        Ok(Header {
            mode,
            size: u32_at(8),
            buffer: u32_at(12),
            limit: u64_at(b, 16),
        })
    }
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[i..i + 8]);
    u64::from_be_bytes(a)
}

/// The stamp at the start of a UDP datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Datagram {
    /// Sent in the warm-up: not counted.
    pub warmup: bool,
    pub session: u64,
    /// 0, 1, 2, ... per session, over the measured datagrams.
    pub seq: u64,
    /// The sender's wall clock, ns since the Unix epoch (only differences are used: jitter).
    pub sent_ns: u64,
}

impl Datagram {
    pub fn write(&self, b: &mut [u8]) {
        b[..4].copy_from_slice(&MAGIC);
        b[4..8].copy_from_slice(&u32::from(self.warmup).to_be_bytes());
        b[8..16].copy_from_slice(&self.session.to_be_bytes());
        b[16..24].copy_from_slice(&self.seq.to_be_bytes());
        b[24..32].copy_from_slice(&self.sent_ns.to_be_bytes());
    }

    pub fn read(b: &[u8]) -> Option<Datagram> {
        if b.len() < DATAGRAM_MIN || b[..4] != MAGIC {
            return None;
        }
        Some(Datagram {
            warmup: b[7] & 1 == 1,
            session: u64_at(b, 8),
            seq: u64_at(b, 16),
            sent_ns: u64_at(b, 24),
        })
    }
}

/// What the server received of one UDP session's measured datagrams.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UdpReport {
    pub received: u64,
    pub bytes: u64,
    /// Arrivals with a sequence number below one already seen (RFC 3550 / iperf3's count).
    pub out_of_order: u64,
    /// Gaps in the sequence numbers, less the late arrivals that filled them.
    pub gap_lost: u64,
    /// RFC 3550 interarrival jitter, ns.
    pub jitter_ns: u64,
    /// Dropped on purpose by the server's testing aid (`--net-drop-every`).
    pub dropped_by_aid: u64,
}

impl UdpReport {
    pub fn encode(&self) -> [u8; REPORT_LEN] {
        let mut b = [0u8; REPORT_LEN];
        for (i, v) in [
            self.received,
            self.bytes,
            self.out_of_order,
            self.gap_lost,
            self.jitter_ns,
            self.dropped_by_aid,
        ]
        .into_iter()
        .enumerate()
        {
            b[i * 8..i * 8 + 8].copy_from_slice(&v.to_be_bytes());
        }
        b
    }

    pub fn decode(b: &[u8; REPORT_LEN]) -> UdpReport {
        UdpReport {
            received: u64_at(b, 0),
            bytes: u64_at(b, 8),
            out_of_order: u64_at(b, 16),
            gap_lost: u64_at(b, 24),
            jitter_ns: u64_at(b, 32),
            dropped_by_aid: u64_at(b, 40),
        }
    }
}

/// The wall clock in ns since the Unix epoch.
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// A receiver's running account of one session's datagrams: loss and out-of-order as iperf3 counts
/// them, jitter as RFC 3550 (`J += (|D| - J) / 16`, D the change in transit time).
#[derive(Clone, Debug, Default)]
pub struct UdpAccount {
    pub report: UdpReport,
    next_seq: u64,
    last_transit_ns: Option<i128>,
    jitter_ns: f64,
}

impl UdpAccount {
    pub fn add(&mut self, d: &Datagram, len: usize, arrival_ns: u64) {
        let r = &mut self.report;
        r.received += 1;
        r.bytes += len as u64;
        if d.seq >= self.next_seq {
            r.gap_lost += d.seq - self.next_seq;
            self.next_seq = d.seq + 1;
        } else {
            r.out_of_order += 1;
            r.gap_lost = r.gap_lost.saturating_sub(1);
        }
        let transit = i128::from(arrival_ns) - i128::from(d.sent_ns);
        if let Some(prev) = self.last_transit_ns {
            let dd = (transit - prev).abs() as f64;
            self.jitter_ns += (dd - self.jitter_ns) / 16.0;
        }
        self.last_transit_ns = Some(transit);
        r.jitter_ns = self.jitter_ns as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_stamps_and_reports_round_trip() {
        let h = Header {
            mode: Mode::Download,
            size: 131072,
            buffer: 4 << 20,
            limit: 12345,
        };
        assert_eq!(Header::decode(&h.encode()), Ok(h));
        let mut bad = h.encode();
        bad[4] = 9;
        assert!(Header::decode(&bad).is_err());
        let d = Datagram {
            warmup: true,
            session: 7,
            seq: 42,
            sent_ns: 99,
        };
        let mut b = [0u8; 40];
        d.write(&mut b);
        assert_eq!(Datagram::read(&b), Some(d));
        assert_eq!(Datagram::read(&b[..20]), None);
        let r = UdpReport {
            received: 1,
            bytes: 2,
            out_of_order: 3,
            gap_lost: 4,
            jitter_ns: 5,
            dropped_by_aid: 6,
        };
        assert_eq!(UdpReport::decode(&r.encode()), r);
    }

    #[test]
    fn loss_out_of_order_and_jitter_count_as_iperf3() {
        let mut a = UdpAccount::default();
        // 0, 1, 3 (2 missing), 2 (late), 4; transit 10 µs then 20 µs once.
        for (seq, transit) in [(0, 10_000), (1, 10_000), (3, 20_000), (2, 10_000), (4, 10_000)] {
            let d = Datagram {
                warmup: false,
                session: 1,
                seq,
                sent_ns: 1_000_000,
            };
            a.add(&d, 100, 1_000_000 + transit);
        }
        assert_eq!(
            (a.report.received, a.report.bytes, a.report.gap_lost, a.report.out_of_order),
            (5, 500, 0, 1)
        );
        // D: 0, 10000, 10000, 0 -> J = 0, 625, 1210.9, 1135.3
        assert_eq!(a.report.jitter_ns, 1135);
    }
}
