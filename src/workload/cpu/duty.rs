//! The duty cycle that holds a worker at `load` % of its CPU: after each operation, the worker
//! compares the CPU time its thread has used (CLOCK_THREAD_CPUTIME_ID, measured, not assumed) with
//! `load` × the wall time since its reference point, and sleeps off any surplus of a slice or more.
//! The comparison is cumulative, so a sleep that oversleeps or an operation that overruns is paid
//! back in the next slices and the load converges; a debt (the thread got less CPU than asked, on a
//! busy machine) is forgiven beyond [`MAX_DEBT`], so that the worker never bursts to catch up.

use std::time::{Duration, Instant};

/// A worker sleeps only once it is this far ahead: busy and idle come in slices of about this length.
pub const SLICE: Duration = Duration::from_millis(2);
/// The most CPU time a worker tries to catch up after getting less than asked.
pub const MAX_DEBT: Duration = Duration::from_millis(50);

pub struct Duty {
    /// The load asked, as a fraction (0, 1].
    load: f64,
    t_ref: Instant,
    cpu_ref: Duration,
}

impl Duty {
    pub fn new(load: f64, now: Instant, cpu: Duration) -> Duty {
        Duty {
            load,
            t_ref: now,
            cpu_ref: cpu,
        }
    }

    /// How long to sleep now, given the thread's CPU time `cpu` at `now`; zero to go on working.
    pub fn pause(&mut self, now: Instant, cpu: Duration) -> Duration {
        if self.load >= 1.0 {
            return Duration::ZERO;
        }
        let used = cpu.saturating_sub(self.cpu_ref).as_secs_f64();
        let wall = now.saturating_duration_since(self.t_ref).as_secs_f64();
        let ahead = used / self.load - wall;
        if ahead >= SLICE.as_secs_f64() {
            return Duration::from_secs_f64(ahead.min(1.0));
        }
        // Behind by more than the debt allowed: move the reference so that only that much is owed.
        let debt = -ahead * self.load;
        if debt > MAX_DEBT.as_secs_f64() {
            let forgive = (debt - MAX_DEBT.as_secs_f64()) / self.load;
            self.t_ref += Duration::from_secs_f64(forgive);
        }
        Duration::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A simulated worker: works in operations of `op` CPU time, sleeps what `pause` says (plus an
    /// oversleep), and returns its load over `secs` seconds.
    fn simulate(load: f64, op: Duration, oversleep: Duration, secs: f64) -> f64 {
        let t0 = Instant::now();
        let (mut wall, mut cpu) = (Duration::ZERO, Duration::ZERO);
        let mut d = Duty::new(load, t0, cpu);
        while wall.as_secs_f64() < secs {
            cpu += op;
            wall += op;
            let p = d.pause(t0 + wall, cpu);
            if !p.is_zero() {
                wall += p + oversleep;
            }
        }
        cpu.as_secs_f64() / wall.as_secs_f64()
    }

    #[test]
    fn the_load_converges_to_the_asked_one_despite_oversleeping() {
        for load in [0.1, 0.25, 0.5, 0.75, 0.9] {
            let got = simulate(load, Duration::from_micros(40), Duration::from_micros(80), 2.0);
            assert!((got - load).abs() < 0.005, "asked {load}, got {got}");
        }
        assert_eq!(simulate(1.0, Duration::from_micros(40), Duration::ZERO, 0.1), 1.0);
    }

    #[test]
    fn a_debt_is_forgiven_beyond_the_limit() {
        let t0 = Instant::now();
        let mut d = Duty::new(0.5, t0, Duration::ZERO);
        // One second without CPU (the machine was busy): owed 0.5 s, only MAX_DEBT is kept.
        assert!(d.pause(t0 + Duration::from_secs(1), Duration::ZERO).is_zero());
        // Only MAX_DEBT is owed: using it at once leaves the worker on budget, a slice more is ahead.
        let at = t0 + Duration::from_secs(1);
        assert!(d.pause(at, MAX_DEBT).is_zero());
        let p = d.pause(at, MAX_DEBT + SLICE);
        assert!((p.as_secs_f64() - 2.0 * SLICE.as_secs_f64()).abs() < 1e-6, "{p:?}");
    }
}
