//! The clocks the driver reads: this process's and the calling thread's CPU time, and durations in
//! the unit the latency histograms record.

use std::time::Duration;

/// This process's CPU time (user + system).
pub fn process_cpu() -> Duration {
    // SAFETY: rusage is a C struct of integers, for which all-zero bytes are a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage for the whole call; getrusage only fills it.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID).
pub fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the whole call; clock_gettime only fills it.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// A duration in whole microseconds, at least 1: the unit the latency histograms record (they start
/// at 1 µs, so an operation faster than that counts as 1 µs).
pub fn us(d: Duration) -> u64 {
    (d.as_micros() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spinning_thread_gains_cpu_time_and_a_sleeping_one_does_not() {
        let c0 = thread_cpu();
        let t0 = std::time::Instant::now();
        while t0.elapsed() < Duration::from_millis(30) {
            std::hint::black_box(0u64);
        }
        let spun = thread_cpu() - c0;
        assert!(spun >= Duration::from_millis(5), "spun {spun:?}");
        let c1 = thread_cpu();
        std::thread::sleep(Duration::from_millis(30));
        assert!(thread_cpu() - c1 < Duration::from_millis(5));
        assert!(process_cpu() >= spun);
        assert_eq!(us(Duration::from_nanos(10)), 1);
        assert_eq!(us(Duration::from_micros(1500)), 1500);
    }
}
