//! What the terminal view shows, folded from the run's events as they come ([`Board::apply`]):
//! running aggregates only (the trials' states, the current trial's last seconds up to the longest
//! window, the latest figures), so that a frame costs the same at the run's first minute and its
//! tenth hour.

use crate::live::event::{Event, Figure, HostNow, ProbeNow};
use std::collections::{BTreeMap, VecDeque};

/// The history windows `+` and `-` step through, seconds.
pub const WINDOWS: [usize; 6] = [10, 30, 60, 120, 300, 600];

/// The seconds kept of the current trial: the longest window.
const KEPT: usize = WINDOWS[WINDOWS.len() - 1];

/// A trial of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    Planned,
    Running,
    Ok,
    Failed,
}

/// One second of the current trial's load.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sec {
    pub t_s: f64,
    pub per_s: f64,
    pub errors_per_s: f64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub p999_ms: Option<f64>,
}

/// The trial running (or the last one that ran).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Current {
    pub trial: usize,
    pub point: usize,
    pub repetition: u32,
    pub label: String,
    pub phase: String,
    /// When the phase began, seconds since the trial started, and when that event was stored (Unix s).
    pub phase_t_s: f64,
    pub phase_unix_s: f64,
    /// The rate an open-model load asks (none for a closed model).
    pub asked_per_s: Option<f64>,
}

/// The run as its events tell it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Board {
    pub run: String,
    pub dir: String,
    /// The points' labels, by id, in the plan's order.
    pub points: BTreeMap<usize, String>,
    /// Every trial: its point, repetition and state.
    pub trials: BTreeMap<usize, (usize, u32, Cell)>,
    /// The phases' lengths (baseline, warm-up, load, recovery), seconds.
    pub phases_s: [f64; 4],
    pub current: Option<Current>,
    /// The last trial that measured a second (the current one once it has): its id, its responses
    /// and errors so far, its last seconds, oldest first (at most the longest window). Until the
    /// current trial's first second, the previous trial's stay on screen.
    pub seconds_of: Option<usize>,
    pub responses: u64,
    pub errors: u64,
    pub seconds: VecDeque<Sec>,
    /// The monitor's key figures carried by the latest second.
    pub host: Option<HostNow>,
    /// The remote hosts' latest key figures (their `host` events), by host.
    pub hosts: BTreeMap<String, HostNow>,
    /// The probes' figures so far: the trial they are of, and each probe's.
    pub probes: Option<(usize, Vec<ProbeNow>)>,
    /// The last stored trial: its id, its label and repetition, its headline figures.
    pub last_end: Option<(usize, String, Vec<Figure>)>,
    /// The last failed trial and why.
    pub last_failure: Option<(usize, String)>,
    /// Adaptive repetitions: each point's latest interval, % of the mean, against its target.
    pub ci: BTreeMap<usize, (Option<f64>, f64, u32)>,
    /// Events the feed dropped (it fell behind).
    pub skipped: u64,
    /// `complete`, `interrupted`, `failed` once the run ended.
    pub status: Option<String>,
    pub thresholds_failed: Vec<String>,
    /// Each threshold at each point as it stands (its latest `threshold` event): passed, and the
    /// observed value.
    pub thresholds: BTreeMap<(String, usize), (bool, Option<f64>)>,
    /// When the run's first event and its latest were stored (Unix s).
    pub first_unix_s: Option<f64>,
    pub last_unix_s: f64,
}

impl Board {
    /// Trials finished (stored ok or failed) and planned.
    pub fn counter(&self) -> (usize, usize) {
        let done = self.trials.values().filter(|t| matches!(t.2, Cell::Ok | Cell::Failed)).count();
        (done, self.trials.len())
    }

    /// Thresholds broken so far (at some point) and judged so far.
    pub fn thresholds_broken(&self) -> (usize, usize) {
        let broken = self.thresholds.values().filter(|t| !t.0).count();
        (broken, self.thresholds.len())
    }

    /// Trials that failed.
    pub fn failed(&self) -> usize {
        self.trials.values().filter(|t| t.2 == Cell::Failed).count()
    }

    /// Take one event, stored at `unix_s`.
    pub fn apply(&mut self, e: Event, unix_s: f64) {
        self.first_unix_s.get_or_insert(unix_s);
        self.last_unix_s = self.last_unix_s.max(unix_s);
        match e {
            Event::RunStart {
                plan,
                dir,
                trials,
                points,
                done,
                baseline_s,
                warmup_s,
                load_s,
                recovery_s,
                ..
            } => {
                self.run = plan;
                self.dir = dir;
                self.phases_s = [baseline_s, warmup_s, load_s, recovery_s];
                for p in points {
                    let label = if p.label.is_empty() {
                        format!("point {}", p.point)
                    } else {
                        p.label
                    };
                    self.points.insert(p.point, label);
                }
                for t in trials {
                    self.trials.insert(t.trial, (t.point, t.repetition, Cell::Planned));
                }
                // A resumed run: what was stored before is done (its point is not said; its place
                // in the grid is only counted).
                for id in done {
                    self.trials.entry(id).or_insert((usize::MAX, 0, Cell::Ok));
                }
            }
            Event::TrialStart {
                trial,
                point,
                repetition,
                label,
                asked_per_s,
            } => {
                self.trials.insert(trial, (point, repetition, Cell::Running));
                self.current = Some(Current {
                    trial,
                    point,
                    repetition,
                    label: if label.is_empty() { format!("point {point}") } else { label },
                    phase: "setup".into(),
                    phase_unix_s: unix_s,
                    asked_per_s,
                    ..Current::default()
                });
            }
            Event::Phase { trial, phase, t_s } => {
                if let Some(c) = self.current.as_mut().filter(|c| c.trial == trial) {
                    c.phase = phase;
                    c.phase_t_s = t_s;
                    c.phase_unix_s = unix_s;
                }
            }
            Event::Second {
                trial,
                t_s,
                span_s,
                responses,
                errors,
                p50_ms,
                p99_ms,
                p999_ms,
                host,
            } => {
                if host.is_some() {
                    self.host = host;
                }
                if self.seconds_of != Some(trial) {
                    self.seconds_of = Some(trial);
                    self.seconds.clear();
                    (self.responses, self.errors) = (0, 0);
                }
                let span = if span_s > 0.0 { span_s } else { 1.0 };
                self.responses += responses;
                self.errors += errors;
                if self.seconds.len() == KEPT {
                    self.seconds.pop_front();
                }
                self.seconds.push_back(Sec {
                    t_s,
                    per_s: responses as f64 / span,
                    errors_per_s: errors as f64 / span,
                    p50_ms,
                    p99_ms,
                    p999_ms,
                });
            }
            Event::TrialEnd {
                trial,
                ok,
                failure,
                figures,
                ..
            } => {
                let cell = self.trials.entry(trial).or_insert((usize::MAX, 0, Cell::Planned));
                cell.2 = if ok { Cell::Ok } else { Cell::Failed };
                let (point, repetition) = (cell.0, cell.1);
                let label = self.points.get(&point).cloned().unwrap_or_default();
                self.last_end = Some((trial, format!("{label} #{repetition}"), figures));
                if let Some(why) = failure {
                    self.last_failure = Some((trial, why));
                }
                if let Some(c) = self.current.as_mut().filter(|c| c.trial == trial) {
                    c.phase = if ok { "stored".into() } else { "failed".into() };
                    c.phase_unix_s = unix_s;
                }
            }
            Event::Ci {
                point,
                half_width_pct,
                target_pct,
                repetitions,
                ..
            } => {
                self.ci.insert(point, (half_width_pct, target_pct, repetitions));
            }
            Event::Skipped { count } => self.skipped += count,
            Event::Probes { trial, probes } => self.probes = Some((trial, probes)),
            Event::Host { host, figures, .. } => {
                self.hosts.insert(host, figures);
            }
            Event::Threshold {
                expr,
                point,
                observed,
                passed,
                ..
            } => {
                self.thresholds.insert((expr, point), (passed, observed));
            }
            Event::RunEnd {
                status, thresholds_failed, ..
            } => {
                self.status = Some(status);
                self.thresholds_failed = thresholds_failed;
                // A trial cut short by Ctrl-C is not stored: it stays as it was planned.
                for t in self.trials.values_mut().filter(|t| t.2 == Cell::Running) {
                    t.2 = Cell::Planned;
                }
            }
        }
    }

    /// The grid's rows: each point's label and its trials' states in repetition order.
    pub fn grid(&self) -> Vec<(String, Vec<Cell>)> {
        let mut rows: BTreeMap<usize, Vec<(u32, Cell)>> = BTreeMap::new();
        for &(point, repetition, cell) in self.trials.values() {
            rows.entry(point).or_default().push((repetition, cell));
        }
        rows.into_iter()
            .map(|(point, mut cells)| {
                cells.sort_by_key(|c| c.0);
                let label = match self.points.get(&point) {
                    Some(l) => l.clone(),
                    None => "stored before".into(),
                };
                (label, cells.into_iter().map(|c| c.1).collect())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::event::{PlannedPoint, PlannedTrial};

    pub fn start(points: usize, reps: u32) -> Event {
        let mut trials = Vec::new();
        for p in 0..points {
            for r in 1..=reps {
                trials.push(PlannedTrial {
                    trial: trials.len(),
                    point: p,
                    repetition: r,
                });
            }
        }
        Event::RunStart {
            plan: "web".into(),
            dir: "runs/x".into(),
            trials,
            points: (0..points)
                .map(|p| PlannedPoint {
                    point: p,
                    label: format!("connections={}", 10 * (p + 1)),
                    params: serde_json::json!({"connections": 10 * (p + 1)}),
                })
                .collect(),
            done: vec![],
            baseline_s: 1.0,
            warmup_s: 1.0,
            load_s: 10.0,
            recovery_s: 1.0,
            interval_s: 1.0,
        }
    }

    #[test]
    fn the_board_counts_trials_and_keeps_the_current_trials_seconds() {
        let mut b = Board::default();
        b.apply(start(2, 2), 100.0);
        assert_eq!(b.counter(), (0, 4));
        b.apply(
            Event::TrialStart {
                trial: 0,
                point: 0,
                repetition: 1,
                label: "connections=10".into(),
                asked_per_s: None,
            },
            100.5,
        );
        for i in 0..(KEPT + 5) {
            b.apply(
                Event::Second {
                    trial: 0,
                    t_s: i as f64,
                    span_s: if i == KEPT + 4 { 0.5 } else { 1.0 },
                    responses: 100,
                    errors: 1,
                    p50_ms: Some(1.0),
                    p99_ms: Some(9.0),
                    p999_ms: None,
                    host: None,
                },
                101.0 + i as f64,
            );
        }
        assert_eq!(b.seconds.len(), KEPT, "at most the longest window");
        assert_eq!(b.responses, 100 * (KEPT as u64 + 5), "the trial's total counts every second");
        assert_eq!(b.seconds.back().map(|s| s.per_s), Some(200.0), "a half second's rate");
        assert_eq!(b.seconds.front().map(|s| s.t_s), Some(5.0));
        b.apply(
            Event::TrialEnd {
                trial: 0,
                ok: false,
                failure: Some("the target exited".into()),
                figures: vec![],
                phases: vec![],
            },
            800.0,
        );
        assert_eq!(b.counter(), (1, 4));
        assert_eq!(b.failed(), 1);
        assert_eq!(b.last_failure, Some((0, "the target exited".into())));
        // The next trial: the last one's seconds stay until its own first.
        b.apply(
            Event::TrialStart {
                trial: 1,
                point: 0,
                repetition: 2,
                label: String::new(),
                asked_per_s: None,
            },
            801.0,
        );
        assert_eq!((b.seconds_of, b.seconds.len()), (Some(0), KEPT));
        assert_eq!(b.current.as_ref().map(|c| c.label.as_str()), Some("point 0"));
        b.apply(
            Event::Second {
                trial: 1,
                t_s: 0.0,
                span_s: 1.0,
                responses: 7,
                errors: 0,
                p50_ms: None,
                p99_ms: None,
                p999_ms: None,
                host: None,
            },
            802.0,
        );
        assert_eq!((b.seconds_of, b.seconds.len(), b.responses), (Some(1), 1, 7));
        assert_eq!(
            b.grid(),
            vec![
                ("connections=10".into(), vec![Cell::Failed, Cell::Running]),
                ("connections=20".into(), vec![Cell::Planned, Cell::Planned]),
            ]
        );
    }
}
