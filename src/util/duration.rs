//! Durations as users write them: `500ms`, `10s`, `2m`, `1h30m`, or a bare number of seconds.
//!
//! Every duration a user gives is at most [`MAX`] (365 days): far beyond any sensible phase or
//! timeout, and small enough that sums and products of durations (phases × trials for an estimate,
//! `Instant` + a timeout) never overflow.

use std::time::{Duration, Instant};

/// The longest duration perflab accepts anywhere (365 days).
pub const MAX: Duration = Duration::from_secs(365 * 24 * 3600);

/// The shortest measured duration a load accepts (`-d`): an operation, a request and its answer,
/// needs some time, and nothing shorter measures anything.
pub const MIN_MEASURED: Duration = Duration::from_millis(1);

/// A load's measured duration (`-d`, named `what` in the message): a duration of at least
/// [`MIN_MEASURED`].
pub fn measured(s: &str, what: &str) -> Result<Duration, String> {
    let d = parse(s).map_err(|e| format!("{what}: {e}"))?;
    if d < MIN_MEASURED {
        return Err(format!(
            "{what} must be at least {} (nothing is measured in less), not {}",
            format(MIN_MEASURED),
            crate::util::text::clip(s.trim())
        ));
    }
    Ok(d)
}

/// Parse a duration; a bare number means seconds. Negative, not-a-number and longer-than-[`MAX`]
/// values are rejected with a message in the user's words.
pub fn parse(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty duration (try 500ms, 10s, 2m)".into());
    }
    let shown = crate::util::text::clip(t);
    if t.starts_with('-') {
        return Err(format!("\"{shown}\" is negative: a duration is 0 or more"));
    }
    if let Ok(secs) = t.parse::<f64>() {
        return from_secs(secs).map_err(|e| format!("\"{shown}\" {e}"));
    }
    let d = humantime::parse_duration(t).map_err(|_| format!("invalid duration \"{shown}\" (try 500ms, 10s, 2m, 1h30m)"))?;
    within_max(d).map_err(|e| format!("\"{shown}\" {e}"))
}

/// A number of seconds as a duration: finite, not negative, at most [`MAX`]. The error completes
/// a sentence about the value ("1e20 s is longer than ...").
pub fn from_secs(secs: f64) -> Result<Duration, String> {
    if secs.is_nan() {
        return Err("is not a number of seconds".into());
    }
    if secs < 0.0 {
        return Err("is negative: a duration is 0 or more".into());
    }
    if secs > MAX.as_secs_f64() {
        return Err(too_long());
    }
    Ok(Duration::from_secs_f64(secs))
}

fn within_max(d: Duration) -> Result<Duration, String> {
    if d > MAX {
        Err(too_long())
    } else {
        Ok(d)
    }
}

fn too_long() -> String {
    "is longer than the longest duration perflab accepts (365 days)".to_string()
}

/// `d` seconds as a duration, for computed values (rates, gaps): never panics; NaN and negative
/// values give zero, values too large for a `Duration` give [`MAX`].
pub fn saturating_from_secs(secs: f64) -> Duration {
    if secs.is_nan() || secs <= 0.0 {
        Duration::ZERO
    } else {
        Duration::try_from_secs_f64(secs).unwrap_or(MAX).min(MAX)
    }
}

/// `now + d`, or a moment far in the future when that cannot be represented.
pub fn deadline(now: Instant, d: Duration) -> Instant {
    now.checked_add(d).or_else(|| now.checked_add(MAX)).unwrap_or(now)
}

/// Format a duration compactly for humans (`1.5s`, `250ms`, `2m30s`).
pub fn format(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1.0 {
        format!("{}ms", (s * 1000.0).round() as u64)
    } else if s < 60.0 {
        let r = (s * 10.0).round() / 10.0;
        if r.fract() == 0.0 {
            format!("{}s", r as u64)
        } else {
            format!("{r:.1}s")
        }
    } else {
        let total = s.round() as u64;
        let (h, m, sec) = (total / 3600, (total % 3600) / 60, total % 60);
        let mut out = String::new();
        if h > 0 {
            out.push_str(&format!("{h}h"));
        }
        if m > 0 {
            out.push_str(&format!("{m}m"));
        }
        if sec > 0 || out.is_empty() {
            out.push_str(&format!("{sec}s"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_forms() {
        assert_eq!(parse("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse("1.5").unwrap(), Duration::from_millis(1500));
        assert!(parse("-1s").is_err());
        assert!(parse("abc").is_err());
        assert!(parse("nan").is_err());
        assert!(parse("inf").is_err());
        assert!(parse("1e20").is_err());
        assert!(parse("18446744073709551615s").is_err());
        assert!(parse("9e18").is_err());
        assert_eq!(parse("365d").unwrap(), MAX);
        assert!(parse("366d").unwrap_err().contains("longest"));
        assert_eq!(saturating_from_secs(1e300), MAX);
        assert_eq!(saturating_from_secs(f64::NAN), Duration::ZERO);
    }

    #[test]
    fn absurd_lengths_are_errors_not_panics() {
        assert_eq!(
            parse("1e20"),
            Err("\"1e20\" is longer than the longest duration perflab accepts (365 days)".into())
        );
        assert!(parse("18446744073709551615s").is_err());
        assert!(parse("400days").is_err());
        assert_eq!(parse("365days"), Ok(MAX));
        assert!(parse("nan").is_err());
        assert!(parse("inf").is_err());
    }

    #[test]
    fn formats_compactly() {
        assert_eq!(format(Duration::from_millis(250)), "250ms");
        assert_eq!(format(Duration::from_secs(10)), "10s");
        assert_eq!(format(Duration::from_secs(150)), "2m30s");
    }
}
