//! A dependent random pointer chase (lmbench's lat_mem_rd with a random walk): one pointer per
//! 64-byte line of a working set, linked in one random cycle (Sattolo's algorithm), so that every
//! load depends on the previous one and no prefetcher can guess the next line. The time of a chase
//! divided by its loads is the latency of one access at that working-set size.

use std::hint::black_box;

/// Bytes per line: one pointer per cache line.
pub const LINE: usize = 64;
const WORDS: usize = LINE / 8;
/// Loads per operation.
pub const ACCESSES: u64 = 1 << 18;

pub struct Chase {
    next: Vec<u64>,
    at: usize,
}

impl Chase {
    /// A cycle over `bytes / 64` lines (at least 2), shuffled by `seed`.
    pub fn new(bytes: u64, seed: u64) -> Chase {
        let lines = ((bytes as usize) / LINE).max(2);
        let mut order: Vec<usize> = (0..lines).collect();
        let mut r = crate::util::rng::Rng::seeded(seed);
        // Sattolo: a random permutation that is one single cycle.
        for i in (1..lines).rev() {
            let j = r.below(i as u64) as usize;
            order.swap(i, j);
        }
        let mut next = vec![0u64; lines * WORDS];
        for w in 0..lines {
            let from = order[w];
            let to = order[(w + 1) % lines];
            next[from * WORDS] = (to * WORDS) as u64;
        }
        Chase { next, at: 0 }
    }

    pub fn lines(&self) -> usize {
        self.next.len() / WORDS
    }

    /// Follow `n` pointers.
    pub fn run(&mut self, n: u64) {
        let mut at = self.at;
        for _ in 0..n {
            at = self.next[at] as usize;
        }
        self.at = black_box(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chase_is_one_cycle_through_every_line() {
        let mut c = Chase::new(64 * 1000, 9);
        assert_eq!(c.lines(), 1000);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            assert!(seen.insert(c.at), "a line came back before the cycle ended");
            c.run(1);
        }
        assert_eq!(c.at, 0, "back at the start after every line");
    }
}
