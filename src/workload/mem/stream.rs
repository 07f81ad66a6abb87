//! STREAM (McCalpin) in one worker: copy `c = a`, scale `b = s·c`, add `c = a + b`, triad
//! `a = b + s·c` over three arrays of `n` doubles, each kernel timed alone. As STREAM reports it: the
//! best (shortest) time of each kernel over the iterations, its bytes counted as STREAM counts them
//! (2 arrays for copy and scale, 3 for add and triad), rates in MiB/s (2^20 bytes) and GB/s (10^9).

use std::hint::black_box;
use std::time::{Duration, Instant};

/// The kernels, in STREAM's order.
pub const KERNELS: [&str; 4] = ["copy", "scale", "add", "triad"];
/// Arrays each kernel moves (read + written).
pub const ARRAYS_MOVED: [u64; 4] = [2, 2, 3, 3];
/// Arrays each kernel reads.
pub const ARRAYS_READ: [u64; 4] = [1, 1, 2, 2];

pub struct Stream {
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    /// Per kernel: the best time, the total time and the iterations timed.
    pub best: [Duration; 4],
    pub total: [Duration; 4],
    pub iterations: u64,
}

impl Stream {
    /// Three arrays of `n` doubles, written once (so their pages are this thread's).
    pub fn new(n: usize) -> Stream {
        Stream {
            a: vec![1.0; n],
            b: vec![2.0; n],
            c: vec![0.0; n],
            best: [Duration::MAX; 4],
            total: [Duration::ZERO; 4],
            iterations: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.a.len()
    }

    pub fn is_empty(&self) -> bool {
        self.a.is_empty()
    }

    /// One iteration of the four kernels; `record`: count its times.
    pub fn iterate(&mut self, record: bool) {
        let s = 3.0;
        let mut times = [Duration::ZERO; 4];
        let t = Instant::now();
        self.c.copy_from_slice(&self.a);
        black_box(&mut self.c);
        times[0] = t.elapsed();
        let t = Instant::now();
        self.b.iter_mut().zip(&self.c).for_each(|(b, c)| *b = s * c);
        black_box(&mut self.b);
        times[1] = t.elapsed();
        let t = Instant::now();
        self.c.iter_mut().zip(self.a.iter().zip(&self.b)).for_each(|(c, (a, b))| *c = a + b);
        black_box(&mut self.c);
        times[2] = t.elapsed();
        let t = Instant::now();
        self.a
            .iter_mut()
            .zip(self.b.iter().zip(&self.c))
            .for_each(|(a, (b, c))| *a = b + s * c);
        black_box(&mut self.a);
        times[3] = t.elapsed();
        if record {
            for (k, t) in times.iter().enumerate() {
                self.best[k] = self.best[k].min(*t);
                self.total[k] += *t;
            }
            self.iterations += 1;
        }
    }

    /// Bytes of one array.
    pub fn array_bytes(&self) -> u64 {
        (self.a.len() * 8) as u64
    }

    /// Kernel `k`'s best rate in bytes per second.
    pub fn best_rate(&self, k: usize) -> f64 {
        if self.iterations == 0 {
            return f64::NAN;
        }
        (ARRAYS_MOVED[k] * self.array_bytes()) as f64 / self.best[k].as_secs_f64().max(1e-12)
    }

    /// Bytes read (or written) per second over every timed kernel run.
    pub fn mean_rates(&self) -> (f64, f64) {
        let time: f64 = self.total.iter().map(Duration::as_secs_f64).sum();
        let n = self.iterations as f64 * self.array_bytes() as f64;
        let read: u64 = ARRAYS_READ.iter().sum();
        let written = 4.0;
        (read as f64 * n / time.max(1e-12), written * n / time.max(1e-12))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_compute_streams_values() {
        let mut s = Stream::new(1000);
        s.iterate(true);
        // After one iteration from a = 1, b = 2: c = a = 1, b = 3c = 3, c = a + b = 4, a = b + 3c = 15.
        assert!(s.a.iter().all(|v| *v == 15.0) && s.b.iter().all(|v| *v == 3.0) && s.c.iter().all(|v| *v == 4.0));
        assert_eq!(s.iterations, 1);
        assert_eq!(s.array_bytes(), 8000);
        let copy = s.best_rate(0);
        assert!(copy.is_finite() && copy > 0.0);
        s.iterate(false);
        assert_eq!(s.iterations, 1, "an unrecorded iteration does not count");
    }
}
