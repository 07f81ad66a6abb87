//! The UDP sender's pacing and batching: a sender sleeps until a tick's worth of datagrams is due
//! (about 1 ms of them, at most `BATCH`, at least one), then sends what is due in one `sendmmsg`.
//! This is how iperf3 paces (`--pacing-timer`, 1 ms by default: a timer tick, then the datagrams
//! the rate allows so far, sent back to back) but with one system call per batch instead of one per
//! datagram; a slow rate (a datagram due less often than a tick) sleeps to each datagram's own due
//! time. The count sent never runs ahead of rate × elapsed time; after a late wake the datagrams
//! that fell behind go out in the next batches.

use std::os::fd::AsRawFd;
use std::time::Duration;

/// The most datagrams one `sendmmsg` carries (and so the longest burst).
pub const BATCH: usize = 64;

/// The pacing timer's tick: how much of the rate one wake sends.
pub const TICK: Duration = Duration::from_millis(1);

/// When datagrams are due, at `pps` datagrams a second from the sender's start.
#[derive(Clone, Copy, Debug)]
pub struct Pacer {
    pps: f64,
    /// Datagrams one wake waits for.
    per_wake: u64,
}

impl Pacer {
    pub fn new(pps: f64) -> Pacer {
        let per_wake = (pps * TICK.as_secs_f64()).floor().clamp(1.0, BATCH as f64) as u64;
        Pacer { pps, per_wake }
    }

    /// How many datagrams are due `elapsed` after the start (the rate's count, rounded down).
    pub fn due(&self, elapsed: Duration) -> u64 {
        (elapsed.as_secs_f64() * self.pps) as u64
    }

    /// With `issued` sent: when (after the start) the next wake's datagrams are all due.
    pub fn wake_at(&self, issued: u64) -> Duration {
        Duration::from_secs_f64((issued + self.per_wake) as f64 / self.pps)
    }

    pub fn per_wake(&self) -> u64 {
        self.per_wake
    }
}

/// `BATCH` datagram buffers of one size and the `sendmmsg` headers pointing at them.
pub struct Batch {
    bufs: Vec<Vec<u8>>,
    iov: Vec<libc::iovec>,
    msgs: Vec<libc::mmsghdr>,
}

// SAFETY: the raw pointers in `iov` and `msgs` point only into `bufs` and `iov`, which the Batch
// owns and never reallocates; moving the Batch to another thread moves them together.
unsafe impl Send for Batch {}

impl Batch {
    pub fn new(size: usize) -> Batch {
        let mut bufs: Vec<Vec<u8>> = (0..BATCH).map(|_| vec![0x3cu8; size]).collect();
        let mut iov: Vec<libc::iovec> = bufs
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        let msgs = iov
            .iter_mut()
            .map(|v| {
                // SAFETY: mmsghdr is a C struct of integers and pointers, for which all-zero is valid.
                let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
                m.msg_hdr.msg_iov = v;
                m.msg_hdr.msg_iovlen = 1;
                m
            })
            .collect();
        Batch { bufs, iov, msgs }
    }

    /// Datagram `i`'s bytes, to stamp before sending.
    pub fn buf(&mut self, i: usize) -> &mut [u8] {
        &mut self.bufs[i]
    }

    /// Send the first `n` buffers on the connected socket `s`: how many went (the first datagrams,
    /// in order), or the error that stopped the first.
    pub fn send(&mut self, s: &impl AsRawFd, n: usize) -> std::io::Result<usize> {
        let n = n.min(BATCH);
        debug_assert_eq!(self.iov.len(), BATCH);
        // SAFETY: `msgs[..n]` are valid headers, each pointing at one iovec of `iov` that points at
        // a live buffer of `bufs` of its length; all stay borrowed (`&mut self`) for the whole
        // call; the socket has a destination (connected), so no address is given.
        let r = unsafe { libc::sendmmsg(s.as_raw_fd(), self.msgs.as_mut_ptr(), n as libc::c_uint, 0) };
        if r < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(r as usize)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wake_waits_for_a_tick_of_datagrams_and_never_runs_ahead_of_the_rate() {
        // 1 Gbit/s of 1400-byte datagrams: 89 286 a second, 89 a tick, capped at one batch.
        let fast = Pacer::new(1e9 / (8.0 * 1400.0));
        assert_eq!(fast.per_wake(), BATCH as u64);
        // 100 Mbit/s: 8 a tick.
        let mid = Pacer::new(1e8 / (8.0 * 1400.0));
        assert_eq!(mid.per_wake(), 8);
        assert!((mid.wake_at(0).as_secs_f64() - 8.0 / 8928.571).abs() < 1e-6);
        // 1 Mbit/s: a datagram every 11.2 ms; each wake waits for one.
        let slow = Pacer::new(1e6 / (8.0 * 1400.0));
        assert_eq!(slow.per_wake(), 1);
        for p in [fast, mid, slow] {
            for ms in [0u64, 1, 7, 1000, 10_000] {
                let e = Duration::from_millis(ms);
                assert!(p.due(e) as f64 <= e.as_secs_f64() * p.pps + 1e-9);
                // At the wake time of `due` sent, per_wake more are due.
                let w = p.wake_at(p.due(e));
                assert!(p.due(w + Duration::from_nanos(1)) >= p.due(e) + p.per_wake());
            }
        }
    }

    #[test]
    fn a_batch_sends_its_datagrams_in_order() {
        let rx = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
        let tx = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
        tx.connect(rx.local_addr().expect("addr")).expect("connect");
        let mut b = Batch::new(100);
        for i in 0..5 {
            b.buf(i)[0] = i as u8;
        }
        assert_eq!(b.send(&tx, 5).expect("sendmmsg"), 5);
        let mut got = [0u8; 200];
        for i in 0..5 {
            assert_eq!(rx.recv(&mut got).expect("recv"), 100);
            assert_eq!(got[0], i as u8);
        }
    }
}
