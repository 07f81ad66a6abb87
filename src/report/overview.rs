//! The summary the report opens with ([`Overview`]): the validity warnings, the answer (each
//! variant's primary figures at every point against the baseline variant's, with Δ % and the
//! verdict), the optimization table and the headline lines.
//!
//! A percentile shown is the point's own (of the merged histogram, or the median of what a tool
//! printed per trial), never a mean of per-trial percentiles; Δ % is between those figures, and the
//! verdict is the test of the per-trial figures, where the trials have one.

use super::fmt::{num, param};
use super::loaded::{safe, value_text, Loaded};
use super::model::{AnswerCell, Finding, Overview, PointReport, RunFacts, Scaling};
use super::spec::ReportSpec;
use crate::analysis::compare::compare;
use crate::model::{Better, MetricKind};
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
    pub points: &'a [PointReport],
    pub groups: &'a [(String, Vec<&'a Loaded>)],
    pub throughput: Option<&'a str>,
    pub scaling: Option<&'a Scaling>,
    pub findings: &'a [Finding],
    pub runs: &'a [RunFacts],
}

/// One figure of a point: its value, sd, unit, better direction and the per-trial values.
struct Figure {
    value: f64,
    sd: Option<f64>,
    /// Half-width of the mean's 95 % CI (None for a percentile).
    ci95: Option<f64>,
    unit: String,
    better: Better,
    trials: Vec<f64>,
}

pub fn build(i: &Inputs) -> Overview {
    let keys = metric_keys(i);
    let baseline = i.compare.and_then(|c| {
        i.spec
            .baseline
            .clone()
            .or_else(|| i.points.iter().find_map(|p| p.params.get(c).map(value_text)))
    });
    let mut answer = Vec::new();
    for p in i.points {
        let group = i
            .groups
            .iter()
            .find(|(l, _)| *l == p.label)
            .map(|(_, g)| g.as_slice())
            .unwrap_or(&[]);
        let variant = i.compare.and_then(|c| p.params.get(c)).map_or("all".to_string(), value_text);
        let base = baseline.as_ref().filter(|b| **b != variant).and_then(|b| {
            i.points.iter().find(|q| {
                q.params
                    .iter()
                    .all(|(k, v)| Some(k.as_str()) == i.compare || p.params.get(k) == Some(v))
                    && i.compare.and_then(|c| q.params.get(c)).map(value_text).as_ref() == Some(b)
            })
        });
        let base_group = base
            .and_then(|b| i.groups.iter().find(|(l, _)| *l == b.label))
            .map(|(_, g)| g.as_slice());
        for key in &keys {
            let Some(f) = figure(p, group, key) else { continue };
            let before = base.and_then(|b| figure(b, base_group.unwrap_or(&[]), key));
            answer.push(cell(i, p, key, &variant, f, before));
        }
    }
    let optimization = optimization(i, &answer);
    Overview {
        compare: i.compare.map(String::from),
        baseline,
        x: i.x.map(String::from),
        warnings: warnings(i),
        answer,
        optimization,
        headline: headline(i),
        finding_lines: i.findings.iter().map(|f| finding_line(f, i.points.len())).collect(),
    }
}

/// The primary figures: `[report] metrics`, or the throughput, p50 and p99.
fn metric_keys(i: &Inputs) -> Vec<String> {
    if !i.spec.metrics.is_empty() {
        return i.spec.metrics.clone();
    }
    let mut keys: Vec<String> = i.throughput.map(String::from).into_iter().collect();
    keys.extend(["p50".to_string(), "p99".to_string()]);
    keys
}

fn cell(i: &Inputs, p: &PointReport, key: &str, variant: &str, f: Figure, before: Option<Figure>) -> AnswerCell {
    let at: Vec<String> = p
        .params
        .iter()
        .filter(|(k, _)| Some(k.as_str()) != i.compare && Some(k.as_str()) != i.x && varies(i.points, k))
        .map(|(k, v)| format!("{k}={}", value_text(v)))
        .collect();
    let mut c = AnswerCell {
        metric: key.to_string(),
        unit: f.unit.clone(),
        variant: safe(variant),
        at: safe(&at.join(" ")),
        x: i.x.and_then(|x| p.params.get(x)).map(|v| safe(&value_text(v))),
        value: f.value,
        sd: f.sd,
        ci95: f.ci95,
        before: None,
        delta_pct: None,
        ci95_pct: None,
        verdict: None,
    };
    if let Some(b) = before {
        c.before = Some(b.value);
        c.delta_pct = (b.value != 0.0 && b.value.is_finite()).then(|| 100.0 * (f.value - b.value) / b.value.abs());
        if !b.trials.is_empty() && !f.trials.is_empty() {
            let r = compare(&b.trials, &f.trials, f.better);
            c.ci95_pct = r.ci95_low_pct.zip(r.ci95_high_pct);
            c.verdict = Some(r.verdict);
        }
    }
    c
}

fn varies(points: &[PointReport], k: &str) -> bool {
    let first = points.first().and_then(|p| p.params.get(k));
    points.iter().any(|p| p.params.get(k) != first)
}

/// A figure of the point: a metric by name (mean over the repetitions), a percentile `pNN` of the
/// merged histogram (or printed by the tool), or a printed percentile by name.
fn figure(p: &PointReport, group: &[&Loaded], key: &str) -> Option<Figure> {
    let trials = |name: &str| -> Vec<f64> { group.iter().filter(|l| l.trial.ok()).filter_map(|l| l.trial.metric(name)).collect() };
    if let Some(m) = p.metrics.iter().find(|m| m.name == key) {
        return Some(Figure {
            value: m.summary.mean,
            sd: Some(m.summary.sd),
            ci95: m.summary.ci95,
            unit: m.unit.clone(),
            better: m.better,
            trials: trials(key),
        });
    }
    if let Some(r) = p.printed_percentiles.iter().find(|r| r.name == key) {
        return Some(Figure {
            value: r.median,
            sd: None,
            ci95: None,
            unit: r.unit.clone(),
            better: r.better,
            trials: trials(key),
        });
    }
    let q = key
        .strip_prefix('p')
        .and_then(|n| n.parse::<f64>().ok())
        .filter(|n| *n > 0.0 && *n <= 100.0)?
        / 100.0;
    let hist = p.latency.iter().find(|l| l.histogram == "latency").or(p.latency.first());
    // The per-trial figure of that quantile (`latency_p99_ms`), for the test.
    let per_trial = group
        .iter()
        .flat_map(|l| &l.trial.metrics)
        .find(|m| MetricKind::infer(&m.name, &m.unit).quantile() == Some(q) && m.name.contains("lat"))
        .map(|m| m.name.clone());
    if let Some((_, v)) = hist.and_then(|h| h.percentiles.iter().find(|(n, _)| n == key)) {
        return Some(Figure {
            value: *v,
            sd: None,
            ci95: None,
            unit: "ms".into(),
            better: Better::Lower,
            trials: per_trial.as_deref().map(trials).unwrap_or_default(),
        });
    }
    let r = p.printed_percentiles.iter().find(|r| (r.quantile - q).abs() < 1e-9)?;
    Some(Figure {
        value: r.median,
        sd: None,
        ci95: None,
        unit: r.unit.clone(),
        better: r.better,
        trials: trials(&r.name),
    })
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
    if let Some(tp) = i.throughput {
        let noisy: Vec<(&str, f64)> = i
            .points
            .iter()
            .filter_map(|p| {
                let m = p.metrics.iter().find(|m| m.name == tp)?;
                m.summary.noisy.then_some((p.label.as_str(), m.summary.cv_pct.unwrap_or(0.0)))
            })
            .collect();
        if let Some((label, cv)) = noisy.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)) {
            w.push(format!(
                "{} varies by CV > 10 % at {} of {} points (worst {} %, at {}): more repetitions or a quieter host.",
                safe(tp),
                noisy.len(),
                i.points.len(),
                num(cv),
                safe(label)
            ));
        }
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
        if s.knees.is_empty() {
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
