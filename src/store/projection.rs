//! How much a run will store, projected before it starts (the dry run warns when sampling is faster
//! than can be stored or drawn).

use std::time::Duration;

/// Values in one monitor sample, about (the system and process metrics of a small VM with one disk
/// and one network interface; more devices add more).
pub const VALUES_PER_SAMPLE: u64 = 110;

/// Bytes a sampled value takes in `sample_series` (its packed value and its share of the row and
/// page), measured with `bench/store_scale.sh`: sampling every 10 ms (201 samples per trial,
/// successive values often equal) and every 1 s (51 samples per trial, values that change more
/// between samples). Between the two, interpolated on the logarithm of the interval.
pub const SERIES_BYTES_10MS: f64 = 1.9;
/// See [`SERIES_BYTES_10MS`].
pub const SERIES_BYTES_1S: f64 = 3.7;

/// Bytes a sample's time, Unix time and phase take in `sample_clock`, measured (both rates).
pub const CLOCK_BYTES: f64 = 23.0;

/// Bytes a trial's per-phase summary of one metric takes in `phase_summary`, measured.
pub const SUMMARY_BYTES: f64 = 70.0;

/// The store's fixed part: schema, the run's tables, their first pages (measured, 4 trials).
pub const FIXED_BYTES: f64 = 100.0 * 1024.0;

/// Bytes a sampled value takes in `sample_series` when sampling every `interval`.
pub fn series_bytes(interval: Duration) -> f64 {
    let (lo, hi) = (0.01f64.ln(), 1.0f64.ln());
    let x = ((interval.as_secs_f64().max(1e-3).ln() - lo) / (hi - lo)).clamp(0.0, 1.0);
    SERIES_BYTES_10MS + x * (SERIES_BYTES_1S - SERIES_BYTES_10MS)
}

/// More samples per trial than a chart has pixels across: the charts cannot show them.
pub const DRAWN_SAMPLES: u64 = 2_000;

/// A run storing more than this gets the warning too.
pub const LARGE_STORE_BYTES: f64 = 1024.0 * 1024.0 * 1024.0;

/// Monitor samples per trial and the projected store size in bytes, for `trials` trials of
/// `per_trial` sampled every `interval`: per trial, each sample's values and clock, and each
/// metric's summary; plus the store's fixed part.
pub fn projected(per_trial: Duration, interval: Duration, trials: usize) -> (u64, f64) {
    let samples = (per_trial.as_secs_f64() / interval.as_secs_f64().max(1e-3)).floor() as u64 + 1;
    let values = VALUES_PER_SAMPLE as f64;
    let per_trial = samples as f64 * (values * series_bytes(interval) + CLOCK_BYTES) + values * SUMMARY_BYTES;
    (samples, FIXED_BYTES + trials as f64 * per_trial)
}

/// The dry run's warning when sampling makes more samples per trial than a chart can draw, or a
/// store over 1 GB; None otherwise.
pub fn sampling_warning(per_trial: Duration, interval: Duration, trials: usize) -> Option<String> {
    let (samples, bytes) = projected(per_trial, interval, trials);
    if samples <= DRAWN_SAMPLES && bytes <= LARGE_STORE_BYTES {
        return None;
    }
    let at_1s = projected(per_trial, Duration::from_secs(1), trials).1;
    Some(format!(
        "warning: sampling every {} for {} per trial makes {samples} samples per trial ({}); {trials} trial(s) \
         will store about {} (about {VALUES_PER_SAMPLE} values per sample); every 1s it would be about {}",
        humantime::format_duration(interval),
        humantime::format_duration(Duration::from_secs(per_trial.as_secs())),
        if samples > DRAWN_SAMPLES {
            format!("a chart draws at most about {DRAWN_SAMPLES}")
        } else {
            "allowed".to_string()
        },
        size(bytes),
        size(at_1s)
    ))
}

fn size(bytes: f64) -> String {
    const MB: f64 = 1024.0 * 1024.0;
    if bytes >= 1024.0 * MB {
        format!("{:.1} GB", bytes / (1024.0 * MB))
    } else if bytes >= MB {
        format!("{:.0} MB", bytes / MB)
    } else {
        format!("{:.0} KB", (bytes / 1024.0).max(1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_experiment_sampling_every_10ms_is_warned_about() {
        // 5 + 10 + 2 minutes at 10 ms: 102 001 samples per trial.
        let w = sampling_warning(Duration::from_secs(17 * 60), Duration::from_millis(10), 240).unwrap();
        assert!(w.contains("102001 samples per trial"), "{w}");
        assert!(w.contains("a chart draws at most about 2000"), "{w}");
        assert!(w.contains("17m per trial"), "{w}");
        assert_eq!(projected(Duration::from_secs(17 * 60), Duration::from_secs(1), 240).0, 1021);
    }

    #[test]
    fn the_projection_matches_the_measured_stores() {
        // bench/store_scale.sh: 400 trials of 2 s every 10 ms stored 21 827 584 bytes; 4 trials
        // of 51 s every 1 s, 221 184 bytes (about half of it the fixed part).
        let fast = projected(Duration::from_secs(2), Duration::from_millis(10), 400).1;
        assert!((fast / 21_827_584.0 - 1.0).abs() < 0.05, "{fast}");
        let slow = projected(Duration::from_secs(51), Duration::from_secs(1), 4).1;
        assert!((slow / 221_184.0 - 1.0).abs() < 0.15, "{slow}");
        // An hour-long experiment's plan at 1 Hz: 240 trials of 1 021 samples, about 100 MB.
        let long = projected(Duration::from_secs(17 * 60), Duration::from_secs(1), 240).1;
        assert!((95.0..115.0).contains(&(long / 1024.0 / 1024.0)), "{long}");
        assert!(series_bytes(Duration::from_millis(100)) > SERIES_BYTES_10MS);
        assert!(series_bytes(Duration::from_millis(100)) < SERIES_BYTES_1S);
    }

    #[test]
    fn ordinary_sampling_is_not() {
        assert_eq!(sampling_warning(Duration::from_secs(17 * 60), Duration::from_secs(1), 240), None);
        assert_eq!(sampling_warning(Duration::from_secs(2), Duration::from_millis(10), 400), None);
    }
}
