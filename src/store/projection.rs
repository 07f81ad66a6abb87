//! How much a run will store, projected before it starts (the dry run warns when sampling is faster
//! than can be stored or drawn).

use std::time::Duration;

/// Values in one monitor sample, about (the system and process metrics of a small VM with one disk
/// and one network interface; more devices add more).
pub const VALUES_PER_SAMPLE: u64 = 110;

/// Bytes a sampled value takes in the store, about (packed: measured with `bench/store_scale.sh`,
/// 10 ms sampling; slower sampling packs a little less tightly, timestamps and summaries included).
pub const BYTES_PER_VALUE: f64 = 3.0;

/// More samples per trial than a chart has pixels across: the charts cannot show them.
pub const DRAWN_SAMPLES: u64 = 2_000;

/// A run storing more than this gets the warning too.
pub const LARGE_STORE_BYTES: f64 = 1024.0 * 1024.0 * 1024.0;

/// Monitor samples per trial and the projected store size in bytes, for `trials` trials of
/// `per_trial` sampled every `interval`.
pub fn projected(per_trial: Duration, interval: Duration, trials: usize) -> (u64, f64) {
    let samples = (per_trial.as_secs_f64() / interval.as_secs_f64().max(1e-3)).floor() as u64 + 1;
    let bytes = samples as f64 * trials as f64 * VALUES_PER_SAMPLE as f64 * BYTES_PER_VALUE;
    (samples, bytes)
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
    fn seed_sized_sampling_every_10ms_is_warned_about() {
        // 5 + 10 + 2 minutes at 10 ms: 102 001 samples per trial.
        let w = sampling_warning(Duration::from_secs(17 * 60), Duration::from_millis(10), 240).unwrap();
        assert!(w.contains("102001 samples per trial"), "{w}");
        assert!(w.contains("a chart draws at most about 2000"), "{w}");
        assert!(w.contains("17m per trial"), "{w}");
        assert_eq!(projected(Duration::from_secs(17 * 60), Duration::from_secs(1), 240).0, 1021);
    }

    #[test]
    fn ordinary_sampling_is_not() {
        assert_eq!(sampling_warning(Duration::from_secs(17 * 60), Duration::from_secs(1), 240), None);
        assert_eq!(sampling_warning(Duration::from_secs(2), Duration::from_millis(10), 400), None);
    }
}
