//! The io_uring plumbing of the HTTP/1.1 io_uring engine (`uring`): the ring itself (one per
//! worker thread, with the flags that keep completions in the thread that asks for them), the
//! provided-buffer ring that multishot receives fill, and what each submission's `user_data` says.
//! A leaf: it knows nothing of HTTP.

use io_uring::{squeue, types, IoUring};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::sync::atomic::{AtomicU16, Ordering};

/// What a completion is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Connect,
    Send,
    Recv,
    Cancel,
}

/// `user_data`: the connection's generation (bits 32-63), its index (8-31), the operation (0-7).
/// A completion whose generation is not the connection's current one belongs to a socket that was
/// already dropped, and is ignored (its buffer still goes back to the ring).
pub fn tag(gen: u32, idx: usize, op: Op) -> u64 {
    let k = match op {
        Op::Connect => 1,
        Op::Send => 2,
        Op::Recv => 3,
        Op::Cancel => 4,
    };
    (u64::from(gen) << 32) | ((idx as u64 & 0xff_ffff) << 8) | k
}

/// The inverse of [`tag`]: `None` for a tag it never made.
pub fn untag(data: u64) -> Option<(u32, usize, Op)> {
    let op = match data & 0xff {
        1 => Op::Connect,
        2 => Op::Send,
        3 => Op::Recv,
        4 => Op::Cancel,
        _ => return None,
    };
    Some(((data >> 32) as u32, ((data >> 8) & 0xff_ffff) as usize, op))
}

/// A ring for `conns` connections: room for a send and a receive re-arm per connection at once,
/// twice as many completion slots. SINGLE_ISSUER + DEFER_TASKRUN (6.1) where the kernel has them:
/// completions are then only run when this thread enters the ring to wait, one batch per turn.
pub fn ring(conns: usize) -> std::io::Result<IoUring> {
    let n = (2 * conns + 16).next_power_of_two().min(1 << 15) as u32;
    IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_cqsize(4 * n)
        .build(n)
        .or_else(|_| IoUring::builder().setup_cqsize(4 * n).build(n))
        .or_else(|_| IoUring::new(n))
}

/// Can this process use io_uring as the engine does (a ring, a fixed-file table, a provided-buffer
/// ring)? The error says why not (a sysctl, seccomp in a container, a kernel before 5.19).
pub fn probe() -> Result<(), String> {
    let check = || -> std::io::Result<()> {
        let r = ring(1)?;
        r.submitter().register_files_sparse(1)?;
        let b = BufRing::new(&r, 16, 64)?;
        drop(r);
        drop(b);
        Ok(())
    };
    check().map_err(|e| e.to_string())
}

/// The buffer group of the provided-buffer ring.
pub const GROUP: u16 = 0;

/// A provided-buffer ring (5.19): `count` buffers of `size` bytes the kernel picks from for each
/// multishot receive. A buffer comes back to the ring when its data has been parsed.
pub struct BufRing {
    entries: *mut types::BufRingEntry,
    layout: Layout,
    data: Box<[u8]>,
    size: usize,
    mask: u16,
    /// The tail the kernel has not been told yet.
    tail: u16,
}

impl BufRing {
    /// Make the ring and register it with `ring` as buffer group [`GROUP`]; all buffers start in it.
    pub fn new(ring: &IoUring, count: u16, size: usize) -> std::io::Result<BufRing> {
        assert!(count.is_power_of_two(), "a buffer ring's size is a power of two");
        let layout = Layout::from_size_align(usize::from(count) * std::mem::size_of::<types::BufRingEntry>(), 4096)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        // SAFETY: the layout has a non-zero size (count >= 1, 16-byte entries).
        let entries = unsafe { alloc_zeroed(layout) }.cast::<types::BufRingEntry>();
        if entries.is_null() {
            return Err(std::io::Error::from(std::io::ErrorKind::OutOfMemory));
        }
        let mut b = BufRing {
            entries,
            layout,
            data: vec![0u8; usize::from(count) * size].into_boxed_slice(),
            size,
            mask: count - 1,
            tail: 0,
        };
        for bid in 0..count {
            b.give_back(bid);
        }
        b.publish();
        // SAFETY: the entries and the buffers they point to live in `b`, which the caller keeps
        // until after the ring is dropped (the ring is declared before it in the worker, so it is
        // dropped first); dropping the ring unregisters the group.
        unsafe { ring.submitter().register_buf_ring_with_flags(b.entries as u64, count, GROUP, 0)? };
        Ok(b)
    }

    /// The first `len` bytes of buffer `bid`, as the kernel filled them.
    pub fn data(&self, bid: u16, len: usize) -> &[u8] {
        let from = usize::from(bid & self.mask) * self.size;
        &self.data[from..from + len.min(self.size)]
    }

    /// Put buffer `bid` back in the ring (the kernel sees it at the next [`BufRing::publish`]).
    pub fn give_back(&mut self, bid: u16) {
        let bid = bid & self.mask;
        // SAFETY: the index is masked into the ring's `count` entries, allocated in `new`. The
        // kernel only reads entries between its head and the published tail, and this one is past
        // the published tail until `publish`.
        let e = unsafe { &mut *self.entries.add(usize::from(self.tail & self.mask)) };
        let addr = self.data.as_ptr() as u64 + (usize::from(bid) * self.size) as u64;
        e.set_addr(addr);
        e.set_len(self.size as u32);
        e.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Tell the kernel about the buffers given back since the last call.
    pub fn publish(&mut self) {
        // SAFETY: `BufRingEntry::tail` points into the first entry of our allocation (the ring's
        // shared tail field), which is 2-byte aligned; the kernel reads it with acquire semantics.
        let tail = unsafe { &*(types::BufRingEntry::tail(self.entries).cast_mut().cast::<AtomicU16>()) };
        tail.store(self.tail, Ordering::Release);
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this very layout, and freed once.
        unsafe { dealloc(self.entries.cast(), self.layout) };
    }
}

/// A send of the whole request; no completion when it all went (only a failure or a short send
/// posts one).
pub fn send(slot: u32, buf: &[u8], user_data: u64) -> squeue::Entry {
    io_uring::opcode::Send::new(types::Fixed(slot), buf.as_ptr(), buf.len() as u32)
        .flags(libc::MSG_NOSIGNAL | libc::MSG_WAITALL)
        .build()
        .flags(squeue::Flags::SKIP_SUCCESS)
        .user_data(user_data)
}

/// A multishot receive into the buffer ring: one completion per arrival, until the socket ends.
pub fn recv(slot: u32, user_data: u64) -> squeue::Entry {
    io_uring::opcode::RecvMulti::new(types::Fixed(slot), GROUP)
        .build()
        .user_data(user_data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip_and_unknown_ones_are_refused() {
        for (gen, idx, op) in [
            (0, 0, Op::Connect),
            (u32::MAX, 0xff_ffff, Op::Recv),
            (7, 12345, Op::Send),
            (1, 2, Op::Cancel),
        ] {
            assert_eq!(untag(tag(gen, idx, op)), Some((gen, idx, op)));
        }
        assert_eq!(untag(0), None);
        assert_eq!(untag(0x1_0000_0109), None);
    }

    #[test]
    fn buffers_given_back_wrap_around_the_ring() {
        let Ok(ring) = ring(4) else {
            eprintln!("SKIPPED: io_uring not permitted here");
            return;
        };
        let mut b = BufRing::new(&ring, 4, 64).expect("buffer ring");
        assert_eq!(b.tail, 4);
        for bid in [2, 0, 3, 1, 2] {
            b.give_back(bid);
        }
        b.publish();
        assert_eq!(b.tail, 9);
        assert_eq!(b.data(3, 100).len(), 64);
        drop(ring);
    }
}
