//! The progress display: trial i/n, the point, the current phase and the ETA (stderr; off with --quiet),
//! and each finished trial's headline figures: the workload's declared primary throughput and latency
//! (`1234 req/s, p99 1.25 ms`; `5120 IO/s, read_clat_p99_us 250 us`), whatever the workload.
//!
//! When stderr is not a terminal (a CI job's log, `2> run.log`), there is no bar to redraw: each
//! finished trial is one line instead, with the time elapsed and the ETA, and the notes are printed
//! as they come.

use super::phase::Phase;
use super::trial::TrialObserver;
use crate::workload::result::quantile_label;
use crate::workload::{Metric, MetricKind, Primary, PrimaryMetrics};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::{Duration, Instant};

pub struct Progress {
    bar: Option<ProgressBar>,
    /// One line per finished trial (stderr is not a terminal, and not quiet).
    lines: bool,
    total: usize,
    done: usize,
    label: String,
    per_trial: Duration,
    started: Instant,
    /// Nothing at all on stderr (the terminal view shows the run, failures included).
    silent: bool,
}

impl Progress {
    pub fn new(total: usize, per_trial: Duration, quiet: bool) -> Progress {
        use std::io::IsTerminal;
        Progress::with_terminal(total, per_trial, quiet, std::io::stderr().is_terminal())
    }

    /// [`new`](Self::new) with stderr a terminal (`tty`) or not.
    fn with_terminal(total: usize, per_trial: Duration, quiet: bool, tty: bool) -> Progress {
        let bar = (!quiet && tty).then(|| {
            let b = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr_with_hz(4));
            b.set_style(
                ProgressStyle::with_template("{bar:30.cyan/blue} trial {pos}/{len} {msg}").unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.enable_steady_tick(Duration::from_millis(250));
            b
        });
        Progress {
            bar,
            lines: !quiet && !tty,
            total,
            done: 0,
            label: String::new(),
            per_trial,
            started: Instant::now(),
            silent: false,
        }
    }

    /// Print nothing, not even a failed trial's line (`--tui`: the view shows it, and the run's
    /// summary after it).
    pub fn silent(self) -> Progress {
        Progress { silent: true, ..self }
    }

    pub fn start_trial(&mut self, label: &str) {
        self.label = label.to_string();
        self.render("setup");
    }

    pub fn finish_trial(&mut self, line: &str) {
        self.done += 1;
        if let Some(b) = &self.bar {
            b.set_position(self.done as u64);
            b.println(line);
        } else if self.lines {
            eprintln!("{}", self.log_line(line));
        } else if line.starts_with('✗') && !self.silent {
            // Quiet: no progress, but a failed trial's reason is said as it happens.
            eprintln!("{line}");
        }
    }

    pub fn set_total(&mut self, total: usize) {
        self.total = total;
        if let Some(b) = &self.bar {
            b.set_length(total as u64);
        }
    }

    pub fn note(&self, line: &str) {
        if let Some(b) = &self.bar {
            b.println(line);
        } else if self.lines {
            eprintln!("{line}");
        }
    }

    /// A finished trial's line in a log: its summary, the time since the run started and the ETA.
    fn log_line(&self, line: &str) -> String {
        let fmt = crate::util::duration::format;
        let eta = if self.done >= self.total {
            String::new()
        } else {
            format!(", ETA {}", fmt(self.eta()))
        };
        format!("{line} ({} elapsed{eta})", fmt(self.started.elapsed()))
    }

    /// The time the remaining trials will take: the mean of those done so far (the plan's phases
    /// before the first one ends), times the number left.
    fn eta(&self) -> Duration {
        let remaining = self.total.saturating_sub(self.done);
        let n = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
        let per_trial = if self.done > 0 {
            self.started.elapsed() / n(self.done).max(1)
        } else {
            self.per_trial
        };
        per_trial.checked_mul(n(remaining)).unwrap_or(Duration::MAX)
    }

    fn render(&self, phase: &str) {
        if let Some(b) = &self.bar {
            b.set_message(format!(
                "{} · {phase} · ETA {}",
                self.label,
                crate::util::duration::format(self.eta())
            ));
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl TrialObserver for Progress {
    fn phase(&mut self, phase: Phase) {
        self.render(phase.name());
    }
}

/// A trial's primary figures on one line: `1234 req/s, p99 1.25 ms` (the latency is named by its
/// quantile when it is one of a metric called `latency_…`, else by its metric name); empty when the
/// trial has neither.
pub fn figures(primary: &Primary, metrics: &[Metric]) -> String {
    let names = PrimaryMetrics::of_result(primary, metrics);
    let find = |n: &Option<String>| n.as_ref().and_then(|n| metrics.iter().find(|m| &m.name == n));
    let mut parts = Vec::new();
    if let Some(m) = find(&names.throughput) {
        parts.push(format!("{} {}", number(m.value), m.unit));
    }
    if let Some(m) = find(&names.latency) {
        let what = match m.kind {
            MetricKind::Quantile(q) if m.name.starts_with("latency_") => quantile_label(q),
            _ => m.name.clone(),
        };
        parts.push(format!("{what} {} {}", number(m.value), m.unit));
    }
    parts.join(", ")
}

/// Whole numbers from 100 up, two decimals below, three significant digits under 1.
fn number(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 || v == 0.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::figures;
    use crate::workload::{Better, Metric, Primary};

    #[test]
    fn the_line_shows_the_declared_figures() {
        let http = Primary {
            throughput: &["requests_per_s"],
            latency: &["latency_p99_ms"],
            latency_histogram: Some("latency"),
        };
        let m = [
            Metric::new("requests_per_s", "req/s", 1234.4, Better::Higher),
            Metric::new("latency_p99_ms", "ms", 1.254, Better::Lower),
        ];
        assert_eq!(figures(&http, &m), "1234 req/s, p99 1.25 ms");
        let fio = Primary {
            throughput: &["read_iops"],
            latency: &["read_clat_p99_us"],
            latency_histogram: None,
        };
        let m = [
            Metric::new("read_iops", "IO/s", 5120.0, Better::Higher),
            Metric::new("read_clat_p99_us", "us", 250.0, Better::Lower),
        ];
        assert_eq!(figures(&fio, &m), "5120 IO/s, read_clat_p99_us 250 us");
        assert_eq!(figures(&Primary::NONE, &m), "");
    }
}
