//! memtester: one result line per test and loop (`  Bit Flip : ok`, drawn over a backspace spinner).
//! Gives `memtest_<test>_pass` (1 when every loop passed it, else 0), `memtest_tests_passed`,
//! `memtest_tests_failed` and `memtest_loops`; the time taken is the command's `wall_time_s`.
//! Any failed test or a non-zero exit (a bitmask: 1 could not start, 2 stuck address, 4 other test)
//! fails the trial, and so does output without memtester's closing `Done.` (cut short). The lines
//! kept for the record are the output with the spinner removed.

use super::text::{snake, Metrics};
use super::{Adapter, ParseError, ToolOutput};
use crate::workload::exec::process::Exit;
use crate::workload::{Better, MetricKind, WorkloadResult};

pub struct Memtester;

impl Adapter for Memtester {
    fn name(&self) -> &'static str {
        "memtester"
    }
    fn programs(&self) -> &[&'static str] {
        &["memtester"]
    }
    fn debian_package(&self) -> &'static str {
        "memtester"
    }

    fn parse(&self, out: &ToolOutput) -> Result<WorkloadResult, ParseError> {
        let text = clean(&out.stdout);
        // The lines kept for the record: stdout without the spinner, then stderr.
        let kept = format!("{text}\n{}", out.stderr);
        let code = match out.exit {
            Exit::Code(c) => c,
            Exit::Signal(s) => return Err(ParseError::with_raw(format!("killed by signal {s}"), &kept)),
        };
        if code & 1 != 0 {
            let msg = super::text::error_message(&kept, &["can not", "failed", "need", "invalid"]);
            return Err(ParseError::with_raw(format!("could not start (exit status {code}): {msg}"), &kept));
        }
        if !text.lines().any(|l| l.trim() == "Done.") {
            return Err(ParseError::with_raw(
                "memtester: the output is cut short: no closing `Done.`",
                &kept,
            ));
        }
        // Order of first appearance; a test passes only if every loop printed `ok` for it.
        let mut tests: Vec<(String, bool)> = Vec::new();
        let mut loops = 0;
        let mut failures: Vec<String> = Vec::new();
        let mut done = false;
        for line in text.lines() {
            let l = line.trim();
            if l.starts_with("Loop ") {
                loops += 1;
            } else if l == "Done." {
                done = true;
            } else if l.starts_with("FAILURE") {
                failures.push(l.to_string());
            } else if loops > 0 && !l.is_empty() && !done {
                let results = test_results(line)
                    .ok_or_else(|| ParseError::with_raw(format!("memtester: unexpected line: `{}`", super::text::excerpt(line)), &kept))?;
                for (name, ok) in results {
                    match tests.iter_mut().find(|(n, _)| *n == name) {
                        Some(t) => t.1 &= ok,
                        None => tests.push((name, ok)),
                    }
                }
            }
        }
        failures.extend(out.stderr.lines().filter(|l| l.contains("FAILURE")).map(|l| l.trim().to_string()));
        if tests.is_empty() {
            return Err(ParseError::with_raw("no test results found in memtester's output", &kept));
        }
        let mut m = Metrics::default();
        for (name, ok) in &tests {
            let metric = format!("memtest_{}_pass", snake(name));
            m.push(metric.clone(), "", if *ok { 1.0 } else { 0.0 }, Better::Higher);
            // A pass flag (1 or 0), not a number of events.
            m.state(&metric, MetricKind::Gauge);
        }
        let failed: Vec<&str> = tests.iter().filter(|t| !t.1).map(|t| t.0.as_str()).collect();
        m.push("memtest_tests_passed", "tests", (tests.len() - failed.len()) as f64, Better::Higher);
        m.push("memtest_tests_failed", "tests", failed.len() as f64, Better::Lower);
        m.push("memtest_loops", "loops", loops as f64, Better::Neither);
        let mut r = m.result;
        if !failed.is_empty() || code != 0 {
            let detail = failures.first().map(|f| format!(" ({f})")).unwrap_or_default();
            r.failure = Some(format!(
                "memtester: failed tests: {}{detail} (exit status {code})",
                failed.join(", ")
            ));
            r.raw = super::tail_lines(&kept, 200);
        }
        Ok(r)
    }
}

/// The tests on one line of a loop: memtester prints `"  %-20s: "` then `ok` and a newline when
/// the test passes, nothing when it fails (the next test follows on the same line, after what was
/// left of its progress display). None when the line is not of that form.
fn test_results(line: &str) -> Option<Vec<(String, bool)>> {
    let parts: Vec<&str> = line.split(':').collect();
    let (last, names) = parts.split_last()?;
    if names.is_empty() {
        return None;
    }
    let mut out: Vec<(String, bool)> = Vec::new();
    for (k, part) in names.iter().enumerate() {
        // "  " and the name padded to 20 columns end the part; before them, the previous test's
        // leftover display (a test that printed no `ok`).
        let cut = part.len().checked_sub(22).filter(|c| part.is_char_boundary(*c))?;
        let (rest, field) = part.split_at(cut);
        let name = field.strip_prefix("  ")?.trim();
        if name.is_empty() || (k == 0 && !rest.is_empty()) {
            return None;
        }
        out.push((name.to_string(), false));
    }
    if let Some(t) = out.last_mut() {
        t.1 = last.trim() == "ok";
    }
    Some(out)
}

/// Apply backspaces: memtester draws its progress with `\b` even when stdout is not a terminal.
pub fn clean(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c == '\u{8}' {
            if !out.ends_with('\n') {
                out.pop();
            }
        } else {
            out.push(c);
        }
    }
    out
}
