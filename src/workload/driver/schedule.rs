//! The open model's send schedule: each worker's intended send times when `rate` operations per
//! second are spread over its workers, and what counts as late or dropped.

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

/// One worker's open-model schedule. Each worker sends at `rate / workers`; its first send is offset
/// by `id / workers` of a gap so that the workers' sends interleave evenly. With Poisson arrivals the
/// gaps are exponentially distributed with the same mean, drawn from a generator seeded by the run's
/// seed and the worker's id, so the same seed gives the same schedule.
pub struct Schedule {
    /// The mean gap between two of this worker's sends, seconds.
    gap_s: f64,
    offset: Duration,
    arrival: Arrival,
    rng: crate::util::rng::Rng,
}

impl Schedule {
    /// The schedule of worker `id` of `workers` sharing `rate` operations per second.
    pub fn new(rate: f64, workers: usize, arrival: Arrival, seed: u64, id: usize) -> Schedule {
        let workers = workers.max(1) as f64;
        let gap_s = workers / rate;
        Schedule {
            gap_s,
            offset: crate::util::duration::saturating_from_secs(gap_s * id as f64 / workers),
            arrival,
            rng: crate::util::rng::Rng::seeded(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(id as u64 + 1)),
        }
    }

    /// The first intended send time of this worker, for a run that starts at `start`.
    pub fn first(&self, start: Instant) -> Instant {
        crate::util::duration::deadline(start, self.offset)
    }

    /// The gap from one intended send to the next.
    pub fn gap(&mut self) -> Duration {
        let gap = match self.arrival {
            Arrival::Constant => self.gap_s,
            // Inverse transform: -ln(U) for U uniform in (0, 1) is exponential with mean 1.
            Arrival::Poisson => -self.gap_s * self.rng.unit().ln(),
        };
        crate::util::duration::saturating_from_secs(gap)
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
    fn poisson_gaps_have_the_mean_gap_and_depend_only_on_seed_and_worker() {
        let draw = |seed, id| {
            let mut s = Schedule::new(400.0, 4, Arrival::Poisson, seed, id);
            (0..20_000).map(|_| s.gap().as_secs_f64()).collect::<Vec<_>>()
        };
        let a = draw(7, 0);
        assert_eq!(a, draw(7, 0), "same seed and worker, same gaps");
        assert_ne!(a, draw(7, 1), "another worker draws other gaps");
        assert_ne!(a, draw(8, 0), "another seed draws other gaps");
        let mean = a.iter().sum::<f64>() / a.len() as f64;
        // Exponential with mean 10 ms: the standard error of 20 000 draws is 0.07 ms.
        assert!((mean - 0.010).abs() < 0.0005, "mean gap {mean}");
        let sd = (a.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / a.len() as f64).sqrt();
        assert!((sd - 0.010).abs() < 0.001, "an exponential's sd equals its mean: {sd}");
        assert!(a.iter().all(|g| g.is_finite() && *g >= 0.0));
    }
}
