//! The summary the report opens with ([`Overview`]): the validity warnings, the answer (each
//! point's headline and key figures, each variant's against the baseline variant's at the same
//! point, with Δ % and the verdict: `answer.rs`), the observations (`observe.rs`), the optimization
//! table and the headline lines.

use super::answer;
use super::fmt::{num, param};
use super::loaded::{safe, value_text, Loaded};
use super::model::{AnswerCell, Finding, Overview, PointReport, RunFacts, Scaling, ThresholdRow};
use super::spec::ReportSpec;
use std::collections::BTreeMap;

/// CPU busy (%) in the baseline phase above which the host was not idle before the load.
pub const BUSY_BASELINE_PCT: f64 = 25.0;

/// What the summary is built from.
pub struct Inputs<'a> {
    /// The report's notes that are validity warnings too (a run compared with itself).
    pub notes: &'a [String],
    pub spec: &'a ReportSpec,
    pub compare: Option<&'a str>,
    pub x: Option<&'a str>,
    /// The varying parameters that are neither compared nor x.
    pub dimensions: &'a [String],
    /// The matrix parameters a `[variant.<value>]` sets.
    pub set_by_variant: &'a [String],
    pub points: &'a [PointReport],
    pub groups: &'a [(String, Vec<&'a Loaded>)],
    pub scaling: Option<&'a Scaling>,
    pub findings: &'a [Finding],
    pub thresholds: &'a [ThresholdRow],
    pub runs: &'a [RunFacts],
}

pub fn build(i: &Inputs) -> Overview {
    let baseline = i.compare.and_then(|c| {
        i.spec
            .baseline
            .clone()
            .or_else(|| i.points.iter().find_map(|p| p.params.get(c).map(value_text)))
    });
    let ctx = answer::Ctx {
        spec: i.spec,
        compare: i.compare,
        baseline: baseline.as_deref(),
        x: i.x,
        dimensions: i.dimensions,
        set_by_variant: i.set_by_variant,
        points: i.points,
        groups: i.groups,
    };
    let (answer, zero_errors) = answer::cells(&ctx);
    let optimization = optimization(i, &answer);
    let layout = answer::layout(i.x, i.points).to_string();
    let finding_lines: Vec<String> = i.findings.iter().map(|f| finding_line(f, i.points.len())).collect();
    let observations = super::observe::build(&super::observe::Inputs {
        answer: &answer,
        compare: i.compare,
        baseline: baseline.as_deref(),
        x: i.x,
        layout: &layout,
        points: i.points,
        groups: i.groups,
        scaling: i.scaling,
        findings: &finding_lines,
        thresholds: i.thresholds,
        asked: !i.spec.metrics.is_empty(),
    });
    Overview {
        compare: i.compare.map(String::from),
        baseline,
        x: i.x.map(String::from),
        dimensions: i.dimensions.to_vec(),
        set_by_variant: i.set_by_variant.to_vec(),
        layout,
        observations,
        warnings: warnings(i),
        answer,
        zero_errors,
        optimization,
        headline: headline(i),
        finding_lines,
    }
}

/// The comparisons at the largest x (every point without an x), variants other than the baseline.
fn optimization(i: &Inputs, answer: &[AnswerCell]) -> Vec<AnswerCell> {
    let x_of = |c: &AnswerCell| c.x.as_deref().and_then(|x| x.parse::<f64>().ok());
    let mut largest: BTreeMap<&str, f64> = BTreeMap::new();
    for c in answer {
        if let Some(x) = x_of(c) {
            let e = largest.entry(c.at.as_str()).or_insert(x);
            *e = e.max(x);
        }
    }
    answer
        .iter()
        .filter(|c| c.before.is_some() && i.compare.is_some())
        .filter(|c| c.headline || !i.spec.metrics.is_empty() || super::observe::is_percentile_label(&c.label))
        .filter(|c| match (x_of(c), largest.get(c.at.as_str())) {
            (Some(x), Some(l)) => x == *l,
            _ => true,
        })
        .cloned()
        .collect()
}

/// Validity warnings, each one line.
fn warnings(i: &Inputs) -> Vec<String> {
    let mut w: Vec<String> = i.notes.iter().filter(|n| n.contains("one and the same run")).cloned().collect();
    for r in i.runs.iter().filter(|r| !r.partial.is_empty()) {
        w.push(format!(
            "PARTIAL: run {} merged only part of the load (--allow-partial): {}. Its counts and rates are \
             those of the segments merged, not the whole load's.",
            safe(&r.run),
            safe(&r.partial.join("; "))
        ));
    }
    let failed: usize = i.runs.iter().map(|r| r.trials_failed).sum();
    let total: usize = i.runs.iter().map(|r| r.trials_ok + r.trials_failed).sum();
    if failed > 0 {
        w.push(format!(
            "{failed} of {total} trials failed (reasons above); their points have fewer repetitions."
        ));
    }
    let busy: Vec<(&str, f64)> = i
        .points
        .iter()
        .filter_map(|p| {
            let b = p.system.iter().find(|r| r.metric == "cpu_busy_pct")?.baseline?;
            (b > BUSY_BASELINE_PCT).then_some((p.label.as_str(), b))
        })
        .collect();
    if let Some((label, b)) = busy.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)) {
        w.push(format!(
            "The host was busy before the load: CPU busy > {BUSY_BASELINE_PCT} % in the baseline of {} of {} points \
             (worst {} %, at {}); something else was running.",
            busy.len(),
            i.points.len(),
            num(b),
            safe(label)
        ));
    }
    if let Some(f) = i.findings.iter().find(|f| f.resource == "load generator") {
        w.push(format!(
            "The load generator saturated at {} of {} points: there it measured itself, not the target.",
            f.points.len(),
            i.points.len()
        ));
    }
    let noisy: Vec<(&str, &str, f64)> = i
        .points
        .iter()
        .filter_map(|p| {
            let tp = p.headline.as_deref()?;
            let m = p.metrics.iter().find(|m| m.name == tp)?;
            m.summary.noisy.then_some((tp, p.label.as_str(), m.summary.cv_pct.unwrap_or(0.0)))
        })
        .collect();
    if let Some((tp, label, cv)) = noisy.iter().copied().max_by(|a, b| a.2.total_cmp(&b.2)) {
        let mut names: Vec<&str> = noisy.iter().map(|n| n.0).collect();
        names.dedup();
        let what = if names.len() == 1 {
            safe(tp)
        } else {
            "The headline throughput".to_string()
        };
        w.push(format!(
            "{what} varies by CV > 10 % at {} of {} points (worst {} %, at {}): more repetitions or a quieter host.",
            noisy.len(),
            i.points.len(),
            num(cv),
            safe(label)
        ));
    }
    let few = i.points.iter().filter(|p| p.trials - p.failed < 3).count();
    if few > 0 {
        w.push(format!(
            "{few} of {} points have fewer than 3 ok repetitions: no verdict there (\"too few samples\").",
            i.points.len()
        ));
    }
    w
}

/// The knees with what saturated there, and the first three findings, one line each.
fn headline(i: &Inputs) -> Vec<String> {
    let mut h = Vec::new();
    if let Some(s) = i.scaling {
        for (v, x) in &s.knees {
            let what = s
                .saturated_at_knee
                .iter()
                .find(|(sv, _)| sv == v)
                .map_or("no resource saturated there".to_string(), |(_, w)| {
                    format!("saturated: {}", w.join("; "))
                });
            h.push(safe(&format!("Knee ({v}): at {} = {}; {what}.", s.parameter, param(*x))));
        }
        for (v, why) in &s.why_flat {
            h.push(safe(&format!("Flat along {} ({v}): {why}.", s.parameter)));
        }
        if s.knees.is_empty() && s.why_flat.is_empty() {
            h.push(safe(&format!(
                "No knee: throughput kept growing by ≥ 5 % per step of {}.",
                s.parameter
            )));
        }
    }
    // The findings come ranked (`bottleneck::rank`): errors and the target's limits first.
    h.extend(i.findings.iter().take(3).map(|f| finding_line(f, i.points.len())));
    h
}

/// A finding on one line: rule, title, resource, the worst point's figure against the threshold,
/// and how many points it held at.
pub fn finding_line(f: &Finding, points: usize) -> String {
    let worst = f
        .evidence
        .iter()
        .max_by(|a, b| (a.crossed as f64 / a.samples.max(1) as f64).total_cmp(&(b.crossed as f64 / b.samples.max(1) as f64)));
    let figure = worst.map_or(String::new(), |e| format!("; worst {}: {}", e.point, e.statement()));
    safe(&format!(
        "{} {} ({}, {}){figure}; at {} of {points} points",
        f.rule,
        f.name(),
        f.resource,
        f.severity.as_str(),
        f.points.len()
    ))
}
