//! `mode = "udp"`: datagrams of `size` bytes at `rate` bit/s (split over `streams` senders), each
//! sender a session of the server's: its datagrams carry a sequence number and the send time, the
//! server accounts loss, out-of-order and RFC 3550 jitter as iperf3 -u does, and answers its count
//! on the sender's TCP control connection when the sender is done. Pacing and batching: `pace`
//! (about 1 ms of datagrams per wake, one `sendmmsg` per batch; a batch's datagrams carry the same
//! send time).

use super::config::Prepared;
use super::pace::{Batch, Pacer, BATCH};
use super::seconds::Seconds;
use super::sock::{self, ErrorClass, NetError};
use crate::util::netwire::{now_ns, Datagram, Header, Mode, UdpReport, REPORT_LEN};
use crate::workload::driver::interval::Message;
use std::io::Read;
use std::net::{Shutdown, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What one sender sent and the server received of it (measured phase).
#[derive(Clone, Debug, Default)]
pub struct UdpStats {
    pub sent: u64,
    pub sent_bytes: u64,
    pub send_errors: u64,
    pub server: Option<UdpReport>,
    pub error: Option<NetError>,
    /// When this sender stopped sending.
    pub ended: Option<Instant>,
}

pub struct Shared {
    pub p: Prepared,
    pub measure_from: Instant,
    pub deadline: Instant,
    pub stop: Arc<AtomicBool>,
}

/// Run one sender until the end of the measured phase or a stop; then fetch the server's account.
pub fn run_sender(sh: &Shared, id: usize, tx: &Sender<Message>) -> UdpStats {
    let mut st = UdpStats::default();
    let session = (now_ns() ^ (u64::from(std::process::id()) << 32)).wrapping_add(id as u64 * 0x9e37_79b9_7f4a_7c15);
    let header = Header {
        mode: Mode::UdpControl,
        size: sh.p.size as u32,
        buffer: sh.p.buffer.unwrap_or(0),
        limit: session,
    };
    let r = sock::connect(sh.p.target, &header).and_then(|control| {
        send(sh, session, &mut st, tx)?;
        control
            .shutdown(Shutdown::Write)
            .map_err(|e| NetError::io(&e, false, "closing the control connection"))?;
        let _ = control.set_read_timeout(Some(sock::TIMEOUT));
        let mut b = [0u8; REPORT_LEN];
        let mut c = &control;
        c.read_exact(&mut b)
            .map_err(|e| NetError::io(&e, false, "reading the server's count"))?;
        st.server = Some(UdpReport::decode(&b));
        Ok(())
    });
    if let Err(e) = r {
        st.error = Some(NetError {
            class: e.class,
            message: format!("udp sender {id} after {} datagrams: {}", st.sent, e.message),
        });
        sh.stop.store(true, Ordering::Relaxed);
    }
    st
}

fn send(sh: &Shared, session: u64, st: &mut UdpStats, tx: &Sender<Message>) -> Result<(), NetError> {
    let local = if sh.p.target.is_ipv4() { "127.0.0.1:0" } else { "[::1]:0" };
    let u = UdpSocket::bind(local).map_err(|e| NetError::io(&e, true, "binding a UDP socket"))?;
    u.connect(sh.p.target)
        .map_err(|e| NetError::io(&e, true, "connecting the UDP socket"))?;
    if let Some(b) = sh.p.buffer {
        crate::workload::net::sock::set_send_buffer(&u, b);
    }
    let pacer = Pacer::new(sh.p.rate / (8.0 * sh.p.size as f64) / sh.p.streams as f64);
    let mut batch = Batch::new(sh.p.size);
    let mut secs = Seconds::new(sh.measure_from);
    let start = Instant::now();
    // `issued`: datagrams the pacer has let out (sent or failed); `seq`: the measured ones sent.
    let (mut issued, mut seq) = (0u64, 0u64);
    let mut refused = 0u32;
    loop {
        let now = Instant::now();
        if sh.stop.load(Ordering::Relaxed) || now >= sh.deadline {
            break;
        }
        secs.tick(now, tx);
        let due = pacer.due(now.duration_since(start));
        if issued >= due {
            // Sleep until a tick's worth is due (or the stop is looked at again).
            let gap = (start + pacer.wake_at(issued)).saturating_duration_since(now);
            std::thread::sleep(gap.min(Duration::from_millis(50)));
            continue;
        }
        let n = (due - issued).min(BATCH as u64) as usize;
        let measured = now >= sh.measure_from;
        let sent_ns = now_ns();
        for i in 0..n {
            let d = Datagram {
                warmup: !measured,
                session,
                seq: seq + i as u64,
                sent_ns,
            };
            d.write(batch.buf(i));
        }
        match batch.send(&u, n) {
            Ok(k) => {
                issued += k as u64;
                if measured {
                    seq += k as u64;
                    st.sent += k as u64;
                    st.sent_bytes += (k * sh.p.size) as u64;
                    secs.count += (k * sh.p.size) as u64;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                // ICMP port unreachable: the server is gone (a few in a row, not one stray).
                issued += 1;
                refused += 1;
                if refused >= 3 {
                    secs.finish(tx);
                    st.ended = Some(Instant::now());
                    return Err(NetError {
                        class: ErrorClass::ConnectRefused,
                        message: format!("sending: the server's UDP port is closed: {e}"),
                    });
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => {
                // This datagram is skipped (as one send() failing); the rest of the batch follows.
                issued += 1;
                st.send_errors += u64::from(measured);
            }
        }
    }
    secs.finish(tx);
    st.ended = Some(Instant::now());
    Ok(())
}
