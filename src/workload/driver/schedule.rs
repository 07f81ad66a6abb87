//! The open model's send schedule: each worker's intended send times when `rate` operations per
//! second are spread over its workers, and what counts as late or dropped.

use crate::model::Segment;
use std::time::{Duration, Instant};

/// Late means sent more than this after the intended time.
pub const LATE_TOLERANCE: Duration = Duration::from_millis(1);

/// The most intended sends a worker keeps waiting (open model); later ones are counted as dropped,
/// so a rate the worker cannot follow never grows memory without bound.
pub const QUEUE_CAP: usize = 1 << 20;

/// How the open model spaces its sends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrival {
    Constant,
    Poisson,
}

/// One worker's open-model schedule, a slice of the one global schedule of the load: arrival `k`
/// (from 0) is due `t_k` after the start, with `t_k = k / rate` (constant) or the sum of `k`
/// exponential gaps of mean `1 / rate` drawn in order from one generator seeded by the run's seed
/// (Poisson), each gap rounded to whole nanoseconds first, so that every `t_k` is exact. Of a load split
/// into segments, arrival `k` is segment `k mod N`'s; of a segment's `W` workers, its arrival `i + N·j`
/// is worker `j mod W`'s. So worker `w` of segment `i` sends arrivals `i + N·w + m·N·W`, the workers'
/// sends interleave evenly, the union of all workers of all segments is exactly the global schedule,
/// and the same seed gives the same schedule whatever the number of workers or segments.
pub struct Schedule {
    rate: f64,
    arrival: Arrival,
    /// The global number of this worker's next arrival, and the step to the one after.
    k: u64,
    stride: u64,
    /// Poisson: the global generator, drawn up to arrival `k`, and `t_k` in nanoseconds.
    rng: crate::util::rng::Rng,
    t_ns: u64,
}

impl Schedule {
    /// The schedule of worker `id` of `workers` sharing `rate` operations per second (the whole load).
    pub fn new(rate: f64, workers: usize, arrival: Arrival, seed: u64, id: usize) -> Schedule {
        Schedule::segmented(rate, workers, arrival, seed, id, Segment::WHOLE)
    }

    /// The schedule of worker `id` of the `workers` of `segment`, of a load of `rate` operations per
    /// second over all segments.
    pub fn segmented(rate: f64, workers: usize, arrival: Arrival, seed: u64, id: usize, segment: Segment) -> Schedule {
        let n = u64::from(segment.count);
        let mut s = Schedule {
            rate,
            arrival,
            k: 0,
            stride: n * workers.max(1) as u64,
            rng: crate::util::rng::Rng::seeded(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1)),
            t_ns: 0,
        };
        s.advance(u64::from(segment.index) + n * id as u64);
        s
    }

    /// Arrival `k`'s time from the start, in nanoseconds (constant arrivals).
    fn constant_ns(&self, k: u64) -> u64 {
        (k as f64 * 1e9 / self.rate).round() as u64
    }

    /// Move to the global arrival `steps` further on.
    fn advance(&mut self, steps: u64) {
        self.k += steps;
        match self.arrival {
            Arrival::Constant => self.t_ns = self.constant_ns(self.k),
            Arrival::Poisson => {
                for _ in 0..steps {
                    // Inverse transform: -ln(U) for U uniform in (0, 1) is exponential with mean 1.
                    let gap = (-self.rng.unit().ln() * 1e9 / self.rate).round() as u64;
                    self.t_ns = self.t_ns.saturating_add(gap);
                }
            }
        }
    }

    /// The first intended send time of this worker, for a run that starts at `start` (asked before
    /// the first [`gap`](Self::gap)).
    pub fn first(&self, start: Instant) -> Instant {
        crate::util::duration::deadline(start, Duration::from_nanos(self.t_ns))
    }

    /// The gap from one intended send to the next.
    pub fn gap(&mut self) -> Duration {
        let before = self.t_ns;
        self.advance(self.stride);
        Duration::from_nanos(self.t_ns - before)
    }

    /// This worker's intended sends as offsets from the start, in nanoseconds, below `horizon_ns`:
    /// its slice of the global schedule (for the tests that the slices make up the whole).
    pub fn offsets_below(mut self, horizon_ns: u64) -> Vec<u64> {
        let mut out = Vec::new();
        while self.t_ns < horizon_ns {
            out.push(self.t_ns);
            self.gap();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_gaps_are_workers_over_rate_and_workers_interleave() {
        // 4 workers at 400/s in all: each sends every 10 ms, worker i offset by i * 2.5 ms.
        let t0 = Instant::now();
        for id in 0..4 {
            let mut s = Schedule::new(400.0, 4, Arrival::Constant, 1, id);
            assert_eq!(s.first(t0) - t0, Duration::from_micros(2500 * id as u64));
            assert_eq!(s.gap(), Duration::from_millis(10));
            assert_eq!(s.gap(), Duration::from_millis(10));
        }
    }

    #[test]
    fn poisson_gaps_have_the_mean_gap_and_depend_only_on_the_seed() {
        // One worker walks the global schedule: exponential gaps of mean 10 ms at 100/s.
        let draw = |seed, workers, id| {
            let mut s = Schedule::new(100.0, workers, Arrival::Poisson, seed, id);
            (0..20_000).map(|_| s.gap().as_secs_f64()).collect::<Vec<_>>()
        };
        let a = draw(7, 1, 0);
        assert_eq!(a, draw(7, 1, 0), "same seed, same gaps");
        assert_ne!(a, draw(8, 1, 0), "another seed draws other gaps");
        assert_ne!(draw(7, 4, 0), draw(7, 4, 1), "workers take other arrivals");
        let mean = a.iter().sum::<f64>() / a.len() as f64;
        // Exponential with mean 10 ms: the standard error of 20 000 draws is 0.07 ms.
        assert!((mean - 0.010).abs() < 0.0005, "mean gap {mean}");
        let sd = (a.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / a.len() as f64).sqrt();
        assert!((sd - 0.010).abs() < 0.001, "an exponential's sd equals its mean: {sd}");
        assert!(a.iter().all(|g| g.is_finite() && *g >= 0.0));
    }

    /// Every intended send below `horizon_ns` of every worker of every segment, sorted.
    fn union(rate: f64, arrival: Arrival, seed: u64, workers: usize, n: u32, horizon_ns: u64) -> Vec<u64> {
        let mut all = Vec::new();
        for i in 0..n {
            let seg = Segment::new(i, n).unwrap();
            for id in 0..workers {
                all.extend(Schedule::segmented(rate, workers, arrival, seed, id, seg).offsets_below(horizon_ns));
            }
        }
        all.sort_unstable();
        all
    }

    #[test]
    fn a_segment_takes_every_nth_arrival_of_the_global_schedule() {
        // 1000/s constant, 3 segments of 2 workers: segment 1 worker 1 sends arrivals 4, 10, 16...
        let seg = Segment::new(1, 3).unwrap();
        let s = Schedule::segmented(1000.0, 2, Arrival::Constant, 1, 1, seg);
        assert_eq!(s.offsets_below(20_000_000), vec![4_000_000, 10_000_000, 16_000_000]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// The union of the slices of N segments (each with its own number of workers, all equal
        /// here) is exactly the schedule of one worker of the whole load, constant and Poisson alike.
        #[test]
        fn the_slices_of_n_segments_make_up_the_unsegmented_schedule(
            rate in 1.0f64..20_000.0,
            poisson in proptest::bool::ANY,
            seed in proptest::num::u64::ANY,
            workers in 1usize..8,
            n in 1u32..16,
        ) {
            let arrival = if poisson { Arrival::Poisson } else { Arrival::Constant };
            // About 400 arrivals of the global schedule.
            let horizon_ns = (400.0 / rate * 1e9) as u64;
            let whole = Schedule::new(rate, 1, arrival, seed, 0).offsets_below(horizon_ns);
            proptest::prop_assert_eq!(&union(rate, arrival, seed, workers, n, horizon_ns), &whole);
            proptest::prop_assert_eq!(&union(rate, arrival, seed, workers, 1, horizon_ns), &whole);
        }
    }
}
