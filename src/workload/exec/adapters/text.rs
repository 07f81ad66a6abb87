//! Small helpers for adapters that read a tool's text report. Figures are read by their label and
//! in the exact shape the tool prints them ([`Report::field`]): a field that is there but does not
//! read as a number fails the parse, naming the tool, the field and the text, so that a rate never
//! slides into a count's place and `nan` never becomes a figure.

use super::ParseError;
use crate::workload::{Better, Metric, MetricKind, WorkloadResult};

/// The text after the first line (trimmed) that starts with `label`, trimmed.
pub fn after<'a>(text: &'a str, label: &str) -> Option<&'a str> {
    text.lines().map(str::trim_start).find_map(|l| l.strip_prefix(label)).map(str::trim)
}

/// A number as tools print one, and nothing else: an optional sign, digits with an optional
/// fraction, an optional exponent; finite. `nan`, `inf`, `n/a`, `-`, `1,5`, `0x10`, `12abc` and
/// the empty text are not numbers.
pub fn number(s: &str) -> Option<f64> {
    let b = s.trim().as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    let int = digits(b, &mut i);
    let mut frac = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac = digits(b, &mut i);
    }
    if int + frac == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        if digits(b, &mut i) == 0 {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    s.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Skip ASCII digits from `*i`; how many.
fn digits(b: &[u8], i: &mut usize) -> usize {
    let start = *i;
    while b.get(*i).is_some_and(u8::is_ascii_digit) {
        *i += 1;
    }
    *i - start
}

/// Read `value` as `shape`, where each `{}` stands for a [`number`], a space for any run of
/// whitespace (or none) and every other character for itself: `"{} ({} per sec.)"` reads
/// `289    (124.49 per sec.)` as `[289, 124.49]`. None when the text has another shape.
pub fn shape(value: &str, shape: &str) -> Option<Vec<f64>> {
    let mut out = Vec::new();
    let mut v = value.trim();
    let mut p = shape.trim();
    while !p.is_empty() {
        if let Some(rest) = p.strip_prefix("{}") {
            let end = v
                .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
                .unwrap_or(v.len());
            out.push(number(&v[..end])?);
            v = &v[end..];
            p = rest;
        } else if p.starts_with(char::is_whitespace) {
            p = p.trim_start();
            v = v.trim_start();
        } else {
            let c = p.chars().next()?;
            v = v.strip_prefix(c)?;
            p = &p[c.len_utf8()..];
        }
    }
    v.trim().is_empty().then_some(out)
}

/// At most 80 characters of `s` on one line, runs of whitespace as one space, for a message.
pub fn excerpt(s: &str) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let one_line: String = one_line.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    match one_line.char_indices().nth(80) {
        Some((i, _)) => format!("{}...", &one_line[..i]),
        None => one_line,
    }
}

/// A tool's text report, read field by field.
#[derive(Clone, Copy)]
pub struct Report<'a> {
    pub tool: &'static str,
    pub text: &'a str,
}

impl<'a> Report<'a> {
    pub fn new(tool: &'static str, text: &'a str) -> Self {
        Report { tool, text }
    }

    /// The same tool, reading only `part` of the text (a block of the report); errors still keep
    /// the whole text.
    pub fn part(&self, part: &'a str) -> Part<'a> {
        Part { report: *self, text: part }
    }

    /// The text after `label` on the first line that starts with it (after indentation).
    pub fn line(&self, label: &str) -> Option<&'a str> {
        after(self.text, label)
    }

    /// The failure for field `label` whose text `value` is not a number in the expected shape.
    pub fn bad(&self, label: &str, value: &str) -> ParseError {
        ParseError::with_raw(
            format!(
                "{}: `{}` is not a number: `{}`",
                self.tool,
                label.trim_end_matches(':'),
                excerpt(value)
            ),
            self.text,
        )
    }

    /// The failure for output that ends before `what`.
    pub fn cut(&self, what: &str) -> ParseError {
        ParseError::with_raw(format!("{}: the output is cut short: {what}", self.tool), self.text)
    }

    /// The numbers of field `label`, read as `shape` (see [`shape`]): None when the field is
    /// absent, an error naming it when it is there in another shape.
    pub fn field(&self, label: &str, shape_: &str) -> Result<Option<Vec<f64>>, ParseError> {
        self.part(self.text).field(label, shape_)
    }

    /// The first number of [`Report::field`].
    pub fn num(&self, label: &str, shape_: &str) -> Result<Option<f64>, ParseError> {
        Ok(self.field(label, shape_)?.map(|v| v[0]))
    }

    /// As [`Report::field`], and a missing field is an error too (the output was cut short).
    pub fn need(&self, label: &str, shape_: &str) -> Result<Vec<f64>, ParseError> {
        self.field(label, shape_)?
            .ok_or_else(|| self.cut(&format!("no `{}` line", label.trim_end_matches(':'))))
    }

    /// Read `value` (the text of field `label`) as `shape`, or fail naming the field.
    pub fn read(&self, label: &str, value: &str, shape_: &str) -> Result<Vec<f64>, ParseError> {
        shape(value, shape_).ok_or_else(|| self.bad(label, value))
    }
}

/// A block of a [`Report`]: fields are looked up in it alone.
#[derive(Clone, Copy)]
pub struct Part<'a> {
    pub report: Report<'a>,
    pub text: &'a str,
}

impl<'a> Part<'a> {
    /// See [`Report::field`].
    pub fn field(&self, label: &str, shape_: &str) -> Result<Option<Vec<f64>>, ParseError> {
        match after(self.text, label) {
            None => Ok(None),
            Some(v) => self.report.read(label, v, shape_).map(Some),
        }
    }

    /// See [`Report::need`].
    pub fn need(&self, label: &str, shape_: &str) -> Result<Vec<f64>, ParseError> {
        self.field(label, shape_)?
            .ok_or_else(|| self.report.cut(&format!("no `{}` line", label.trim_end_matches(':'))))
    }
}

/// The lines after the line that starts with `header` (after indentation) up to the next blank
/// line or the end.
pub fn block<'a>(text: &'a str, header: &str) -> Option<&'a str> {
    let mut offset = 0;
    let mut start = None;
    for line in text.split_inclusive('\n') {
        offset += line.len();
        match start {
            None if line.trim_start().starts_with(header) => start = Some(offset),
            Some(s) if line.trim().is_empty() => return Some(&text[s..offset - line.len()]),
            _ => {}
        }
    }
    start.map(|s| &text[s..])
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
    let v = number(&s[..split])?;
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
    let v = number(&s[..split])?;
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
    number(num).map(|v| v * scale)
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
    fn numbers_are_strict() {
        assert_eq!(number("2048"), Some(2048.0));
        assert_eq!(number(" -3.5 "), Some(-3.5));
        assert_eq!(number("1e3"), Some(1000.0));
        assert_eq!(number("1.5e-2"), Some(0.015));
        assert_eq!(number(".5"), Some(0.5));
        for bad in [
            "", "-", "nan", "NaN", "-nan", "inf", "n/a", "1,5", "0x10", "12abc", "1e999", "1e", "1.2.3", "--3",
        ] {
            assert_eq!(number(bad), None, "{bad}");
        }
    }

    #[test]
    fn shapes_read_every_number_or_none() {
        assert_eq!(shape("289    (124.49 per sec.)", "{} ({} per sec.)"), Some(vec![289.0, 124.49]));
        assert_eq!(shape("nan (653.28 per sec.)", "{} ({} per sec.)"), None);
        assert_eq!(shape("289 (124.49 per sec.", "{} ({} per sec.)"), None, "cut short");
        assert_eq!(shape("2.0003s", "{}s"), Some(vec![2.0003]));
        assert_eq!(shape("2.0003", "{}s"), None);
        assert_eq!(shape("0 (0.000%)", "{} ({}%)"), Some(vec![0.0, 0.0]));
        assert_eq!(shape("12989.37 [#/sec] (mean)", "{} [#/sec] (mean)"), Some(vec![12989.37]));
        assert_eq!(shape("1000/1000", "{}/{}"), Some(vec![1000.0, 1000.0]));
        assert_eq!(shape("12 extra", "{}"), None);
    }

    #[test]
    fn blocks_end_at_a_blank_line() {
        let text = "A:\n  x: 1\n  y: 2\n\nB:\n  z: 3\n";
        assert_eq!(block(text, "A:"), Some("  x: 1\n  y: 2\n"));
        assert_eq!(block(text, "B:"), Some("  z: 3\n"));
        assert_eq!(block(text, "C:"), None);
    }

    #[test]
    fn units() {
        assert!((duration_ms("231.81us").unwrap_or(0.0) - 0.23181).abs() < 1e-15);
        assert_eq!(duration_ms("2.76ms"), Some(2.76));
        assert_eq!(duration_ms("nanms"), None);
        assert_eq!(size_bytes("43.62MB"), Some(43.62 * 1048576.0));
        assert_eq!(count("64.47k"), Some(64470.0));
        assert_eq!(count("nan"), None);
        assert_eq!(count("-nan"), None);
        assert_eq!(snake("Walking Ones"), "walking_ones");
        assert_eq!(snake("8-bit Writes"), "8_bit_writes");
    }
}
