//! What the run loop publishes on the live feed (`live::Event`), made from what it already has:
//! the plan's trials as the run starts, each trial's start and end, the adaptive rounds' intervals,
//! the run's end. The trial's own events (phases, seconds, samples) are published by `trial.rs`.

use super::experiment::{Experiment, PreparedTrial};
use crate::live::{Event, Feed, Figure, PlannedPoint, PlannedTrial, Publisher};
use crate::store::{RunStatus, TrialRecord};
use crate::workload::{Primary, PrimaryMetrics};
use std::collections::HashSet;
use std::path::Path;

/// The run starts: the trials still to run, the points, the trials stored before, the phases.
pub fn run_start(exp: &Experiment, todo: &[PreparedTrial], done: &HashSet<usize>, dir: &Path) -> Event {
    let ph = &exp.phases;
    let mut done: Vec<usize> = done.iter().copied().collect();
    done.sort_unstable();
    Event::RunStart {
        plan: exp.name.clone(),
        dir: dir.display().to_string(),
        trials: todo
            .iter()
            .map(|t| PlannedTrial {
                trial: t.id,
                point: t.point,
                repetition: t.repetition,
            })
            .collect(),
        points: exp
            .points
            .iter()
            .map(|p| PlannedPoint {
                point: p.id,
                label: p.label.clone(),
                params: serde_json::from_str(&p.params_json).unwrap_or(serde_json::Value::Null),
            })
            .collect(),
        done,
        baseline_s: ph.baseline.as_secs_f64(),
        warmup_s: ph.warmup.as_secs_f64(),
        load_s: ph.load.as_secs_f64(),
        recovery_s: ph.recovery.as_secs_f64(),
        interval_s: ph.interval.as_secs_f64(),
    }
}

/// A trial starts.
pub fn trial_start(feed: &Publisher, t: &PreparedTrial, label: &str) {
    feed.publish(Event::TrialStart {
        trial: t.id,
        point: t.point,
        repetition: t.repetition,
        label: label.to_string(),
        asked_per_s: t.workload.asked_rate(),
    });
}

/// A trial is stored: its outcome, its headline figures (the workload's declared throughput and
/// latency, and its request count when it has one) and its phases.
pub fn trial_end(feed: &Publisher, rec: &TrialRecord, primary: &Primary) {
    if !feed.is_on() {
        return;
    }
    let mut figures = Vec::new();
    if let Some(r) = &rec.result {
        let names = PrimaryMetrics::of_result(primary, &r.metrics);
        let wanted = [names.throughput.as_deref(), names.latency.as_deref(), Some("requests")];
        for m in r.metrics.iter().filter(|m| wanted.contains(&Some(m.name.as_str()))) {
            figures.push(Figure {
                name: m.name.clone(),
                value: m.value,
                unit: m.unit.clone(),
            });
        }
    }
    feed.publish(Event::TrialEnd {
        trial: rec.id,
        ok: rec.failure.is_none(),
        failure: rec.failure.as_ref().map(ToString::to_string),
        figures,
        phases: rec
            .phases
            .iter()
            .map(|p| (p.phase.name().to_string(), p.start_s, p.end_s))
            .collect(),
    });
}

/// A trial of point `point` is stored: the plan's thresholds at that point as they stand, judged
/// over its trials so far (`threshold` events). A store that cannot be read now leaves them out
/// (the run's end judges them all the same).
pub fn thresholds(feed: &Publisher, store: &crate::store::Store, thresholds: &[crate::plan::Threshold], point: usize) {
    if !feed.is_on() || thresholds.is_empty() {
        return;
    }
    let Ok(trials) = store.trials_at(point) else { return };
    for e in super::thresholds::as_they_stand(thresholds, point, &trials) {
        feed.publish(e);
    }
}

/// Adaptive repetitions: point `point`'s interval after a round (`half_width_pct` of `metric`,
/// against `target_pct`), and why its repetitions stopped, if they did.
pub fn ci(
    feed: &Publisher,
    point: usize,
    metric: Option<String>,
    half_width_pct: Option<f64>,
    target_pct: f64,
    repetitions: u32,
    stopped: Option<&String>,
) {
    feed.publish(Event::Ci {
        point,
        metric,
        half_width_pct,
        target_pct,
        repetitions,
        stopped: stopped.cloned(),
    });
}

/// The run ended: its status, the trials stored ok and failed, the thresholds that broke; then the
/// feed writes what it holds and stops (before the store's write-ahead log is emptied). A log that
/// stopped early is said once.
pub fn run_end(feed: &mut Feed, status: RunStatus, (ok, failed): (usize, usize), thresholds_failed: &[String], failure: Option<&str>) {
    feed.publisher().publish(Event::RunEnd {
        status: status.as_str().to_string(),
        trials_ok: ok,
        trials_failed: failed,
        thresholds_failed: thresholds_failed.to_vec(),
        failure: failure.map(str::to_string),
    });
    if let Some(why) = feed.close() {
        eprintln!("perflab: warning: {why}");
    }
}

/// Start the run's feed (in its run directory) and publish the run's start. A store the feed
/// cannot open (it was just made or opened, so hardly ever) leaves the run without one, said once.
pub fn start_feed(dir: &Path, exp: &Experiment, todo: &[PreparedTrial], done: &HashSet<usize>) -> Feed {
    match Feed::start(dir, exp.redactor.clone()) {
        Ok(feed) => {
            feed.publisher().publish(run_start(exp, todo, done, dir));
            feed
        }
        Err(e) => {
            eprintln!("perflab: warning: no live event log: {e:#}");
            Feed::off()
        }
    }
}
