//! The sequential methods of `bandwidth` mode: `read` sums every 8-byte word of a block in order (a
//! load and an add per word, no store: sysbench's `memory --memory-oper=read`), `write` stores every
//! word of it in order (`--memory-oper=write`). One pass over the block is one operation; the bytes
//! counted are exactly the passes timed × the block's size, over the time those passes took.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Independent accumulators of the read loop: enough for the compiler to keep several vector adds
/// in flight, so the loop waits on memory and not on its own adds.
const LANES: usize = 16;

/// Which way a pass goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
}

pub struct Sequential {
    block: Vec<u64>,
    dir: Dir,
    /// Passes timed, and the time they took.
    pub passes: u64,
    pub time: Duration,
    /// The last read pass's sum (kept so that the loads are not optimised away).
    pub sum: u64,
}

impl Sequential {
    /// A block of `bytes` (rounded down to whole 8-byte words), written once so that its pages are
    /// this thread's before anything is timed.
    pub fn new(bytes: u64, dir: Dir) -> Sequential {
        let words = (bytes / 8) as usize;
        Sequential {
            block: (0..words as u64).collect(),
            dir,
            passes: 0,
            time: Duration::ZERO,
            sum: 0,
        }
    }

    /// Bytes of the block.
    pub fn block_bytes(&self) -> u64 {
        self.block.len() as u64 * 8
    }

    /// Bytes read (or written) by the timed passes.
    pub fn bytes(&self) -> u64 {
        self.passes * self.block_bytes()
    }

    /// Bytes per second over the timed passes.
    pub fn rate(&self) -> f64 {
        if self.passes == 0 {
            return f64::NAN;
        }
        self.bytes() as f64 / self.time.as_secs_f64().max(1e-12)
    }

    /// One pass over the block; `record`: count it and its time.
    pub fn pass(&mut self, record: bool) {
        let t = Instant::now();
        match self.dir {
            Dir::Read => self.sum = sum_words(black_box(&self.block)),
            Dir::Write => {
                let v = self.passes.wrapping_add(1);
                self.block.fill(v);
                black_box(&mut self.block);
            }
        }
        let took = t.elapsed();
        if record {
            self.passes += 1;
            self.time += took;
        }
    }
}

/// The wrapping sum of `words`, read once in order.
pub fn sum_words(words: &[u64]) -> u64 {
    let mut acc = [0u64; LANES];
    let chunks = words.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, w) in acc.iter_mut().zip(c) {
            *a = a.wrapping_add(*w);
        }
    }
    let tail = rest.iter().fold(0u64, |s, w| s.wrapping_add(*w));
    acc.iter().fold(tail, |s, a| s.wrapping_add(*a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_pass_sums_every_word_and_counts_the_block_exactly() {
        // 1000 words + 3 bytes: the 3 bytes are not a word and are not counted.
        let mut s = Sequential::new(8003, Dir::Read);
        assert_eq!(s.block_bytes(), 8000);
        s.pass(false);
        assert_eq!(s.sum, 999 * 1000 / 2, "0 + 1 + ... + 999");
        assert_eq!((s.passes, s.bytes()), (0, 0), "an unrecorded pass does not count");
        s.pass(true);
        s.pass(true);
        assert_eq!((s.passes, s.bytes()), (2, 16_000));
        assert!(s.rate().is_finite() && s.rate() > 0.0);
        assert_eq!(sum_words(&[u64::MAX, 2]), 1, "wrapping");
    }

    #[test]
    fn a_write_pass_stores_every_word() {
        let mut s = Sequential::new(4096, Dir::Write);
        s.pass(true);
        assert!(s.block.iter().all(|w| *w == 1));
        s.pass(true);
        assert!(s.block.iter().all(|w| *w == 2));
        assert_eq!(s.bytes(), 2 * 4096);
    }
}
