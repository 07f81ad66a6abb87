//! The progress display: trial i/n, the point, the current phase and the ETA (stderr; off with --quiet).

use super::phase::Phase;
use super::trial::TrialObserver;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::{Duration, Instant};

pub struct Progress {
    bar: Option<ProgressBar>,
    total: usize,
    done: usize,
    label: String,
    per_trial: Duration,
    started: Instant,
}

impl Progress {
    pub fn new(total: usize, per_trial: Duration, quiet: bool) -> Progress {
        let bar = (!quiet).then(|| {
            let b = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr_with_hz(4));
            b.set_style(
                ProgressStyle::with_template("{bar:30.cyan/blue} trial {pos}/{len} {msg}").unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.enable_steady_tick(Duration::from_millis(250));
            b
        });
        Progress {
            bar,
            total,
            done: 0,
            label: String::new(),
            per_trial,
            started: Instant::now(),
        }
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
        }
    }

    fn render(&self, phase: &str) {
        if let Some(b) = &self.bar {
            let remaining = self.total.saturating_sub(self.done);
            let eta = if self.done > 0 {
                self.started.elapsed() / self.done as u32 * remaining as u32
            } else {
                self.per_trial * remaining as u32
            };
            b.set_message(format!("{} · {phase} · ETA {}", self.label, crate::util::duration::format(eta)));
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
