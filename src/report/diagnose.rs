//! The diagnoses the USE rules miss (`crate::analysis::bottleneck::diagnoses`, rules D1-D3) in the
//! report: each point's figures read from its trials, the findings they make after every other
//! rule's, the answer table's cells they flag (D2) and why the scaling is flat (D1). Imports
//! nothing else from `report/` but `loaded`, `model` and `cost`.

use super::cost::{noun, operation_rate, CONCURRENCY, MEAN_LATENCY_MS};
use super::loaded::{safe, variant_of, Loaded};
use super::model::{AnswerCell, Finding, PointReport, Scaling};
use crate::analysis::bottleneck::diagnoses::{diagnose, PointFigures};
use crate::analysis::bottleneck::RuleId;

/// The mean over the ok trials that have it.
fn mean_of(ok: &[&Loaded], f: impl Fn(&Loaded) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = ok.iter().filter_map(|l| f(l)).filter(|v| v.is_finite()).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Per operation, the time spent before the server answered, ms: the http workload's connect and
/// TLS histograms (per connection, spread over the requests) and its time to first byte; ab's
/// connect and waiting times.
fn before_answer(ok: &[&Loaded]) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for (hist, what) in [("connect", "connect"), ("tls_handshake", "TLS handshake"), ("ttfb", "first byte")] {
        let per_op = mean_of(ok, |l| {
            let h = |n: &str| l.trial.histograms.iter().find(|h| h.name == n).map(|h| &h.hist);
            let (this, lat) = (h(hist)?, h("latency")?);
            (!lat.is_empty()).then(|| this.mean() * this.len() as f64 / lat.len() as f64 / 1000.0)
        });
        if let Some(ms) = per_op {
            out.push((what.to_string(), ms));
        }
    }
    if out.is_empty() {
        for (metric, what) in [("connect_mean_ms", "connect"), ("waiting_mean_ms", "first byte")] {
            if let Some(ms) = mean_of(ok, |l| l.trial.metric(metric)) {
                out.push((what.to_string(), ms));
            }
        }
    }
    out
}

/// What the diagnoses read of each point.
fn figures(groups: &[(String, Vec<&Loaded>)], points: &[PointReport], swept: Option<&str>, variant_params: &[String]) -> Vec<PointFigures> {
    groups
        .iter()
        .zip(points)
        .map(|((_, group), p)| {
            let ok: Vec<&Loaded> = group.iter().copied().filter(|l| l.trial.ok()).collect();
            let rate = ok.first().and_then(|l| operation_rate(l)).map(|(name, _)| name);
            let metric = |names: &[&str]| names.iter().find_map(|n| mean_of(&ok, |l| l.trial.metric(n)));
            PointFigures {
                label: p.label.clone(),
                series: variant_of(&p.params, variant_params),
                x: swept.and_then(|s| p.params.get(s)).and_then(|v| v.as_f64()),
                sampled: group.iter().any(|l| l.sampled()),
                throughput: rate.as_deref().and_then(|r| mean_of(&ok, |l| l.trial.metric(r))),
                noun: noun(rate.as_deref().unwrap_or("")).to_string(),
                mean_latency_ms: metric(MEAN_LATENCY_MS),
                concurrency: metric(CONCURRENCY),
                asked_rate: metric(&["target_rate_per_s"]),
                before_answer: before_answer(&ok),
            }
        })
        .collect()
}

/// D1-D3 over the report's points, after every other finding (`findings`, all hosts).
pub fn findings(
    groups: &[(String, Vec<&Loaded>)],
    points: &[PointReport],
    findings: &[Finding],
    swept: Option<&str>,
    variant_params: &[String],
) -> Vec<Finding> {
    let figs = figures(groups, points, swept, variant_params);
    diagnose(&figs, findings)
}

/// The answer's headline throughput at a point where the load generator was too weak (D2) says so.
pub fn flag_cells(cells: &mut [AnswerCell], findings: &[Finding]) {
    let Some(weak) = findings.iter().find(|f| f.rule == RuleId::d(2)) else {
        return;
    };
    for c in cells.iter_mut().filter(|c| c.headline && weak.points.contains(&c.point)) {
        c.flag = Some("load generator too weak (D2)".into());
    }
}

/// Per variant along the swept parameter whose every point is round-trip bound (D1): why its
/// throughput is flat.
pub fn why_flat(scaling: &mut Scaling, points: &[PointReport], variant_params: &[String], findings: &[Finding]) {
    let Some(d1) = findings.iter().find(|f| f.rule == RuleId::d(1)) else {
        return;
    };
    let mut variants: Vec<String> = Vec::new();
    for p in points.iter().filter(|p| p.params.contains_key(&scaling.parameter)) {
        let v = variant_of(&p.params, variant_params);
        if !variants.contains(&v) {
            variants.push(v);
        }
    }
    for v in variants {
        let along: Vec<&PointReport> = points
            .iter()
            .filter(|p| p.params.contains_key(&scaling.parameter) && variant_of(&p.params, variant_params) == v)
            .collect();
        if along.len() < 2 || !along.iter().all(|p| d1.points.contains(&p.label)) {
            continue;
        }
        scaling.why_flat.push((
            v,
            safe(&format!(
                "round-trip bound (D1) at every {}: the load's concurrency and round trip set the throughput, not the server",
                scaling.parameter
            )),
        ));
    }
}
