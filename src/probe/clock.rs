//! The probes' monotonic clock: std's `Instant` with its arithmetic inlined.
//!
//! A probe at 100 Hz wakes after 10 ms of idle and finds its code cold; every 4 KiB page of code it
//! runs costs a TLB miss or more on a virtual machine (docs/probes.md, Cost). std's `Instant` reads
//! the same clock (`CLOCK_MONOTONIC`), but its `now`, its `+ Duration` and its `duration_since` are
//! compiled apart from perflab and never inlined into it: four more pages a probe. This one is a
//! count of nanoseconds whose every operation inlines into its caller; it saturates where std's
//! would panic (an `Instant` before the clock's origin, or 584 years past it).

use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// A reading of `CLOCK_MONOTONIC`, in nanoseconds since its origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Instant(u64);

/// A duration in whole nanoseconds, at most `u64::MAX`.
#[inline]
fn nanos(d: Duration) -> u64 {
    d.as_secs()
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::from(d.subsec_nanos()))
}

impl Instant {
    /// Now, on the monotonic clock.
    #[inline]
    pub fn now() -> Instant {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: ts is a live timespec; CLOCK_MONOTONIC always exists on Linux (a failure leaves 0).
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        Instant((ts.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.tv_nsec as u64))
    }

    /// The time from `earlier` to this one, zero if `earlier` is later.
    #[inline]
    pub fn duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// Sleep until this instant (at once if it has passed); a signal may end the sleep sooner.
    pub fn sleep_until(self) {
        let ts = libc::timespec {
            tv_sec: (self.0 / 1_000_000_000) as libc::time_t,
            tv_nsec: (self.0 % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: ts is a live timespec; no remainder is asked for with TIMER_ABSTIME.
        unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
    }

    /// The nanoseconds from `earlier` to this one, zero if `earlier` is later.
    #[inline]
    pub fn nanos_since(self, earlier: Instant) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// As [`Instant::duration_since`] (std's name for the saturating one).
    #[inline]
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        self.duration_since(earlier)
    }

    /// `ns` nanoseconds after this one (saturating).
    #[inline]
    pub fn add_nanos(self, ns: u64) -> Instant {
        Instant(self.0.saturating_add(ns))
    }

    /// `ns` nanoseconds before this one, the clock's origin at the earliest.
    #[inline]
    pub fn sub_nanos(self, ns: u64) -> Instant {
        Instant(self.0.saturating_sub(ns))
    }

    /// The time since this one.
    #[inline]
    pub fn elapsed(self) -> Duration {
        Instant::now().duration_since(self)
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    #[inline]
    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(nanos(d)))
    }
}

impl AddAssign<Duration> for Instant {
    #[inline]
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;
    #[inline]
    fn sub(self, d: Duration) -> Instant {
        Instant(self.0.saturating_sub(nanos(d)))
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    #[inline]
    fn sub(self, earlier: Instant) -> Duration {
        self.duration_since(earlier)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_reads_the_clock_std_reads_and_its_arithmetic_is_std_s() {
        let (std0, ours, std1) = (std::time::Instant::now(), Instant::now(), std::time::Instant::now());
        std::thread::sleep(Duration::from_millis(20));
        let (std2, later, std3) = (std::time::Instant::now(), Instant::now(), std::time::Instant::now());
        // The same clock: our interval lies within std's outer one and contains its inner one.
        let ours_took = later.duration_since(ours);
        assert!(ours_took <= std3 - std0, "{ours_took:?}");
        assert!(ours_took >= std2 - std1 && ours_took >= Duration::from_millis(20), "{ours_took:?}");
        let d = Duration::new(3, 250_000_001);
        assert_eq!((ours + d).duration_since(ours), d);
        assert_eq!((ours + d).nanos_since(ours), 3_250_000_001);
        assert_eq!(ours.nanos_since(ours + d), 0);
        assert_eq!((ours + d) - d, ours);
        assert_eq!((ours + d) - ours, d);
        assert_eq!(ours.add_nanos(3_250_000_001), ours + d);
        assert_eq!((ours + d).sub_nanos(3_250_000_001), ours);
        let mut t = ours;
        t += d;
        assert_eq!(t, ours + d);
        // Saturating where std would panic or say None.
        assert_eq!(ours.duration_since(ours + d), Duration::ZERO);
        assert_eq!(Instant(5).sub_nanos(6), Instant(0));
        assert_eq!(Instant(u64::MAX - 1).add_nanos(2), Instant(u64::MAX));
        assert_eq!(Instant(5) - Duration::from_nanos(6), Instant(0));
        assert_eq!(Instant(u64::MAX - 1) + Duration::MAX, Instant(u64::MAX));
        assert!(ours < ours + Duration::from_nanos(1));
    }
}
