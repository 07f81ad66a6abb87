//! A region of memory allocated, touched page by page (so that the kernel really gives it) and held;
//! the two halves the pattern tests compare.

use std::time::{Duration, Instant};

/// Pages touched per call, so that the touch can be followed (and stopped) as it goes.
const CHUNK_BYTES: usize = 64 << 20;

pub struct Region {
    words: Vec<u64>,
    page_words: usize,
    /// Words touched so far (a multiple of the page's words, or all).
    touched: usize,
    /// How long touching took, once done.
    pub touch_time: Duration,
}

/// The system's page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf takes an integer and touches no memory of ours.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as usize
    } else {
        4096
    }
}

impl Region {
    /// Reserve `bytes` (rounded down to whole words); nothing is touched yet: the allocation is a
    /// zeroed mapping whose pages the kernel gives when first written. The size was checked against
    /// the memory available before the run.
    pub fn new(bytes: u64) -> anyhow::Result<Region> {
        let n = usize::try_from(bytes / 8)
            .map_err(|_| anyhow::anyhow!("cannot allocate {} for the mem workload", super::size::human(bytes)))?;
        // A zeroed allocation this large is a fresh mapping: no page is written here.
        let words = vec![0u64; n];
        Ok(Region {
            words,
            page_words: (page_size() / 8).max(1),
            touched: 0,
            touch_time: Duration::ZERO,
        })
    }

    pub fn bytes(&self) -> u64 {
        (self.words.len() * 8) as u64
    }

    pub fn touched_bytes(&self) -> u64 {
        (self.touched.min(self.words.len()) * 8) as u64
    }

    pub fn fully_touched(&self) -> bool {
        self.touched >= self.words.len()
    }

    /// Write one word in each page of the next chunk; the time is added to `touch_time`.
    pub fn touch_chunk(&mut self) {
        let t = Instant::now();
        let end = (self.touched + CHUNK_BYTES / 8).min(self.words.len());
        let mut i = self.touched;
        while i < end {
            self.words[i] = i as u64 | 1;
            i += self.page_words;
        }
        std::hint::black_box(&mut self.words);
        self.touched = end;
        self.touch_time += t.elapsed();
    }

    /// The two halves the pattern tests compare.
    pub fn halves(&mut self) -> (&mut [u64], &mut [u64]) {
        let half = self.words.len() / 2;
        let (a, b) = self.words.split_at_mut(half);
        (a, &mut b[..half])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touching_goes_chunk_by_chunk_to_the_end() {
        let mut r = Region::new(3 * CHUNK_BYTES as u64 / 2).expect("region");
        assert_eq!(r.touched_bytes(), 0);
        r.touch_chunk();
        assert_eq!(r.touched_bytes(), CHUNK_BYTES as u64);
        assert!(!r.fully_touched());
        r.touch_chunk();
        assert!(r.fully_touched());
        assert_eq!(r.touched_bytes(), r.bytes());
        let (a, b) = r.halves();
        assert_eq!(a.len(), b.len());
    }
}
