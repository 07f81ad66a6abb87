//! Small helpers for adapters that read a tool's text report.

use super::ParseError;
use crate::workload::{Better, Metric, MetricKind, WorkloadResult};

/// The text after the first line (trimmed) that starts with `label`, trimmed.
pub fn after<'a>(text: &'a str, label: &str) -> Option<&'a str> {
    text.lines().map(str::trim_start).find_map(|l| l.strip_prefix(label)).map(str::trim)
}

/// The first number (`12`, `-3.5`, `1e3`) in `s`.
pub fn first_number(s: &str) -> Option<f64> {
    numbers(s).into_iter().next()
}

/// Every number in `s`, in order (digits with an optional sign, `.` and exponent).
pub fn numbers(s: &str) -> Vec<f64> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit() || (b[i] == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit));
        // A digit glued to a word (`p95`, `sd`) or another number is not the start of a number.
        let glued = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'.' || b[i - 1] == b'_');
        if !starts || glued {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.') {
            j += 1;
        }
        if j + 1 < b.len() && (b[j] == b'e' || b[j] == b'E') && (b[j + 1].is_ascii_digit() || b[j + 1] == b'-' || b[j + 1] == b'+') {
            let mut k = j + 2;
            while k < b.len() && b[k].is_ascii_digit() {
                k += 1;
            }
            if b[k - 1].is_ascii_digit() {
                j = k;
            }
        }
        if let Ok(v) = s[i..j].trim_end_matches('.').parse::<f64>() {
            out.push(v);
        }
        i = j;
    }
    out
}

/// Collects metrics and remembers which expected ones were missing.
#[derive(Default)]
pub struct Metrics {
    pub result: WorkloadResult,
}

impl Metrics {
    pub fn push(&mut self, name: impl Into<String>, unit: &str, value: f64, better: Better) {
        self.result.metrics.push(Metric::new(name, unit, value, better));
    }

    /// Push when the value was found.
    pub fn opt(&mut self, name: impl Into<String>, unit: &str, value: Option<f64>, better: Better) {
        if let Some(v) = value {
            self.push(name, unit, v, better);
        }
    }

    /// State the kind of a metric already pushed, where its name and unit would imply another.
    pub fn state(&mut self, name: &str, kind: MetricKind) {
        if let Some(m) = self.result.metrics.iter_mut().find(|m| m.name == name) {
            m.kind = kind;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.result.metrics.is_empty()
    }

    pub fn has(&self, name: &str) -> bool {
        self.result.metric(name).is_some()
    }

    /// The result, or a parse error when no figure at all was found.
    pub fn finish(self, what: &str, text: &str) -> Result<WorkloadResult, ParseError> {
        if self.is_empty() {
            return Err(ParseError::with_raw(format!("no {what} found in the output"), text));
        }
        Ok(self.result)
    }
}

/// A metric-name fragment: lower case, runs of other characters → `_`.
pub fn snake(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

/// A duration with a unit as tools print it (`231.81us`, `2.76ms`, `1.2s`, `3m`) → milliseconds.
pub fn duration_ms(s: &str) -> Option<f64> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let v: f64 = s[..split].parse().ok()?;
    match &s[split..] {
        "ns" => Some(v / 1e6),
        "us" | "µs" => Some(v / 1e3),
        "ms" => Some(v),
        "s" => Some(v * 1e3),
        "m" => Some(v * 60e3),
        "h" => Some(v * 3600e3),
        _ => None,
    }
}

/// A size with a binary unit as wrk prints it (`43.62MB`, `512.00KB`, `1.2GB`, `100B`) → bytes.
pub fn size_bytes(s: &str) -> Option<f64> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let v: f64 = s[..split].parse().ok()?;
    let scale = match &s[split..] {
        "B" => 1.0,
        "KB" => 1024.0,
        "MB" => 1024.0 * 1024.0,
        "GB" => 1024.0 * 1024.0 * 1024.0,
        "TB" => 1024f64.powi(4),
        _ => return None,
    };
    Some(v * scale)
}

/// A count with wrk's decimal suffix (`64.47k`, `1.2M`) → the number.
pub fn count(s: &str) -> Option<f64> {
    let s = s.trim();
    let (num, scale) = match s.chars().last()? {
        'k' => (&s[..s.len() - 1], 1e3),
        'M' => (&s[..s.len() - 1], 1e6),
        'G' => (&s[..s.len() - 1], 1e9),
        _ => (s, 1.0),
    };
    num.parse::<f64>().ok().map(|v| v * scale)
}

/// The tool's error lines (`FATAL:`, `error:`, ...) joined, or the last non-empty line.
pub fn error_message(text: &str, markers: &[&str]) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| markers.iter().any(|m| l.contains(m)))
        .collect();
    if lines.is_empty() {
        super::tail_lines(text, 1).pop().unwrap_or_default().trim().to_string()
    } else {
        lines.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_found_but_not_inside_words() {
        assert_eq!(numbers("Total operations: 2048 (25451.96 per second)"), vec![2048.0, 25451.96]);
        assert_eq!(numbers("p95 x -3.5 1e3 1.5e-2."), vec![-3.5, 1000.0, 0.015]);
        assert_eq!(first_number("2.0003s"), Some(2.0003));
        assert!((duration_ms("231.81us").unwrap_or(0.0) - 0.23181).abs() < 1e-15);
        assert_eq!(duration_ms("2.76ms"), Some(2.76));
        assert_eq!(size_bytes("43.62MB"), Some(43.62 * 1048576.0));
        assert_eq!(count("64.47k"), Some(64470.0));
        assert_eq!(snake("Walking Ones"), "walking_ones");
        assert_eq!(snake("8-bit Writes"), "8_bit_writes");
    }
}
