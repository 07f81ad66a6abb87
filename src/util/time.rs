//! Wall-clock helpers without a date crate: unix time now, and UTC timestamps for names and logs.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch, as f64.
pub fn unix_now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

/// (year, month, day, hour, minute, second) in UTC for a unix time.
pub fn utc_parts(unix: f64) -> (i64, u32, u32, u32, u32, u32) {
    let secs = unix.floor() as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = if m <= 2 { y + 1 } else { y };
    (y, m, d, (rem / 3600) as u32, (rem % 3600 / 60) as u32, (rem % 60) as u32)
}

/// `20261123-020455` (UTC), for directory names.
pub fn compact_utc(unix: f64) -> String {
    let (y, mo, d, h, mi, s) = utc_parts(unix);
    format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}")
}

/// `2026-11-23T02:04:55.123Z` (UTC), for CSV/JSON timestamps.
pub fn iso_utc(unix: f64) -> String {
    let (y, mo, d, h, mi, s) = utc_parts(unix);
    let ms = ((unix - unix.floor()) * 1000.0).floor() as u32;
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
}

/// `HH:MM:SS` (UTC), for table rows.
pub fn hms_utc(unix: f64) -> String {
    let (_, _, _, h, mi, s) = utc_parts(unix);
    format!("{h:02}:{mi:02}:{s:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(iso_utc(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_utc(951_782_400.5), "2000-02-29T00:00:00.500Z");
        assert_eq!(compact_utc(1_795_403_095.0), "20261123-030455");
    }
}
