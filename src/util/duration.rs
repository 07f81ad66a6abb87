//! Durations as users write them: `500ms`, `10s`, `2m`, `1h30m`, or a bare number of seconds.

use std::time::Duration;

/// The longest duration accepted anywhere (365 days): longer ones are typing mistakes, and would
/// overflow a clock.
pub const MAX: Duration = Duration::from_secs(365 * 24 * 3600);

/// `d` (written `shown`) if it is at most [`MAX`].
pub fn at_most_max(d: Duration, shown: &str) -> Result<Duration, String> {
    if d > MAX {
        return Err(format!("duration '{shown}' is too long (at most 365 days)"));
    }
    Ok(d)
}

/// Seconds as a duration, if at most [`MAX`] (`shown`: how the user wrote it).
pub fn from_secs_f64(secs: f64, shown: &str) -> Result<Duration, String> {
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!("invalid duration '{shown}'"));
    }
    if secs > MAX.as_secs_f64() {
        return at_most_max(Duration::MAX, shown);
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parse a duration; a bare number means seconds. Negative values, and values over [`MAX`], are
/// rejected.
pub fn parse(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty duration".into());
    }
    if t.starts_with('-') {
        return Err(format!("negative duration '{t}'"));
    }
    if let Ok(secs) = t.parse::<f64>() {
        return from_secs_f64(secs, t);
    }
    let d = humantime::parse_duration(t).map_err(|e| format!("invalid duration '{t}': {e} (try 500ms, 10s, 2m)"))?;
    at_most_max(d, t)
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
    }

    #[test]
    fn absurd_lengths_are_errors_not_panics() {
        assert_eq!(parse("1e20"), Err("duration '1e20' is too long (at most 365 days)".into()));
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
