//! The matrix points × repetitions in execution order, and the dry-run listing.

use super::{Order, Plan, Repetitions, Trial};
use std::collections::BTreeMap;

/// The trials in execution order (for adaptive repetitions, the `min` ones). The same plan and seed
/// always give the same order.
pub fn expand(plan: &Plan) -> Vec<Trial> {
    let reps = plan.repetitions.planned();
    let n = plan.points.len();
    let mut order: Vec<(usize, u32)> = Vec::with_capacity(n.saturating_mul(reps as usize).min(super::MAX_TRIALS));
    match plan.order {
        Order::Sequential => (0..n).for_each(|p| (1..=reps).for_each(|r| order.push((p, r)))),
        Order::Interleaved => (1..=reps).for_each(|r| (0..n).for_each(|p| order.push((p, r)))),
        Order::Shuffled => {
            let mut rng = crate::util::rng::Rng::seeded(plan.seed);
            for r in 1..=reps {
                let mut round: Vec<usize> = (0..n).collect();
                for i in (1..round.len()).rev() {
                    let j = rng.below(i as u64 + 1) as usize;
                    round.swap(i, j);
                }
                order.extend(round.into_iter().map(|p| (p, r)));
            }
        }
    }
    order.into_iter().enumerate().map(|(i, (p, r))| trial_for(plan, p, r, i)).collect()
}

/// The trial of point `point` (an index into `plan.points`), repetition `repetition`, at `index`.
pub fn trial_for(plan: &Plan, point: usize, repetition: u32, index: usize) -> Trial {
    let p = &plan.points[point];
    Trial {
        index,
        point: p.id,
        point_label: p.label.clone(),
        params: p.params.clone(),
        repetition,
        target: p.target.clone(),
        workload: p.workload.clone(),
        probes: p.probes.clone(),
    }
}

/// The trials in order with the estimated duration.
pub fn dry_run_listing(plan: &Plan, trials: &[Trial]) -> String {
    dry_run_listing_with(plan, trials, &BTreeMap::new())
}

/// The listing `perflab run --dry-run` prints: [`dry_run_listing`] with, per point (by id), a line
/// saying what its workload will run (from the built workloads: the plan module builds none).
pub fn dry_run_listing_with(plan: &Plan, trials: &[Trial], workloads: &BTreeMap<usize, String>) -> String {
    use std::fmt::Write;
    let ph = &plan.phases;
    let mut s = String::new();
    let order = match plan.order {
        Order::Sequential => "sequential".to_string(),
        Order::Interleaved => "interleaved".to_string(),
        Order::Shuffled => format!("shuffled, seed {}", plan.seed),
    };
    let reps = match &plan.repetitions {
        Repetitions::Fixed(n) => format!("{n} repetition(s)"),
        Repetitions::Adaptive { min, max, ci_pct, metric } => {
            let metric = metric.as_deref().unwrap_or("the primary throughput");
            format!("{min} to {max} repetitions (until the 95% CI of {metric} is within ±{ci_pct}%)")
        }
    };
    let _ = writeln!(s, "plan {}: {} point(s) × {reps}, {order}", plan.name, plan.points.len());
    let _ = writeln!(
        s,
        "phases: baseline {} · warm-up {} · load {} · recovery {} · sampled every {}",
        fmt(ph.baseline),
        fmt(ph.warmup),
        fmt(ph.load),
        fmt(ph.recovery),
        fmt(ph.interval)
    );
    for p in plan.points.first().map_or(&[][..], |p| &p.probes[..]) {
        let _ = writeln!(
            s,
            "probe {}: {} {} every {}, timeout {}, through every phase",
            p.name.as_deref().unwrap_or(""),
            p.kind.name(),
            p.target,
            fmt(p.interval),
            fmt(p.timeout)
        );
    }
    for note in &plan.notes {
        let _ = writeln!(s, "note: {note}");
    }
    for hint in super::hints::notes(plan) {
        let _ = writeln!(s, "{hint}");
    }
    for (name, hooks) in &plan.variants {
        for check in &hooks.skip_unless {
            let _ = writeln!(
                s,
                "note: variant {name} runs only if `{check}` succeeds (checked when the run starts; otherwise its trials are skipped)"
            );
        }
    }
    for (id, what) in workloads {
        // Point ids are their positions in `plan.points`.
        let label = plan.points.get(*id).filter(|p| p.id == *id).map_or("", |p| p.label.as_str());
        let label = if label.is_empty() { "(single point)" } else { label };
        let _ = writeln!(s, "point {} {label}: {what}", id + 1);
    }
    let width = trials.len().to_string().len();
    for t in trials {
        let label = if t.point_label.is_empty() {
            "(single point)"
        } else {
            &t.point_label
        };
        let _ = writeln!(s, "{:>width$}. point {:<3} rep {}  {label}", t.index + 1, t.point + 1, t.repetition);
    }
    let total = estimate(plan, trials);
    let _ = writeln!(
        s,
        "{} trial(s), about {} of measurement (plus target start-up)",
        trials.len(),
        fmt(total)
    );
    s
}

/// How long `trials` take, not counting the targets' start and stop: each trial's phases, with an
/// exec command's own run time as its load phase where its command line says it.
pub fn estimate(plan: &Plan, trials: &[Trial]) -> std::time::Duration {
    let lengths: BTreeMap<usize, std::time::Duration> = plan.points.iter().map(|p| (p.id, super::hints::trial_length(plan, p))).collect();
    trials.iter().fold(std::time::Duration::ZERO, |sum, t| {
        sum.saturating_add(lengths.get(&t.point).copied().unwrap_or_else(|| plan.phases.total()))
    })
}

fn fmt(d: std::time::Duration) -> String {
    crate::util::duration::format(d)
}
