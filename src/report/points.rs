//! One matrix point summarised over its trials: each metric across the ok repetitions, latency
//! percentiles from the merged histograms, and the errors.
//!
//! One p99 per point: a percentile is never averaged over repetitions. Where the trials stored a
//! histogram, the point's percentiles are those of the merged histogram, and the per-trial
//! percentile metrics read from that histogram (`latency_p99_ms` beside `latency`) are left out.
//! A percentile a tool printed (ab, wrk, sysbench, fio: no histogram) is shown as the median of the
//! per-trial values, with n. Which metrics are percentiles is `MetricKind::infer`'s call.

use super::loaded::{safe, Loaded};
use super::model::{MetricRow, PercentileRow, PhaseRow, PointReport, PrintedPercentile};
use super::phases::idle_device;
use crate::analysis::percentiles;
use crate::analysis::stats::Summary;
use crate::model::{Better, MetricKind};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// How the point's trials were gathered: how many runs, and whether runs are compared (each a
/// variant) rather than pooled.
#[derive(Clone, Copy, Debug)]
pub struct Pooling {
    pub runs: usize,
    pub compared: bool,
}

/// The point `label` from its trials (`group`, failed ones included) and its system table.
pub fn point_report(label: &str, group: &[&Loaded], pooling: Pooling, stop_reason: Option<String>, system: Vec<PhaseRow>) -> PointReport {
    let ok: Vec<&Loaded> = group.iter().copied().filter(|l| l.trial.ok()).collect();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for (c, n) in group.iter().flat_map(|l| &l.trial.errors) {
        *errors.entry(c.clone()).or_default() += n;
    }
    let latency = merged_percentiles(&ok);
    let mut point = PointReport {
        label: safe(label),
        params: group[0].params.clone(),
        trials: group.len(),
        failed: group.len() - ok.len(),
        stop_reason,
        metrics: Vec::new(),
        latency,
        printed_percentiles: Vec::new(),
        merged_instead: Vec::new(),
        idle_devices: system.iter().filter(|r| idle_device(r)).map(|r| r.metric.clone()).collect(),
        system: system.into_iter().filter(|r| !idle_device(r)).collect(),
        errors: errors.into_iter().collect(),
    };
    add_metrics(&mut point, &ok, pooling);
    point
}

/// Each metric across the ok repetitions, by name, into the point's metrics, printed percentiles
/// or (read from a histogram the point merged) `merged_instead`.
fn add_metrics(point: &mut PointReport, ok: &[&Loaded], pooling: Pooling) {
    let mut names: BTreeMap<&str, (&str, Better)> = BTreeMap::new();
    for m in ok.iter().flat_map(|l| &l.trial.metrics) {
        names.entry(&m.name).or_insert((&m.unit, m.better));
    }
    for (name, (unit, better)) in names {
        let vals: Vec<f64> = ok.iter().filter_map(|l| l.trial.metric(name)).collect();
        let Some(summary) = Summary::of(&vals) else {
            continue;
        };
        let Some(quantile) = MetricKind::infer(name, unit).quantile() else {
            point.metrics.push(MetricRow {
                name: name.to_string(),
                unit: unit.to_string(),
                better,
                summary,
                between_run_cv_pct: between_run_cv(ok, name, pooling),
            });
            continue;
        };
        if point.latency.iter().any(|h| name.starts_with(&format!("{}_", h.histogram))) {
            point.merged_instead.push(name.to_string());
        } else {
            point.printed_percentiles.push(PrintedPercentile {
                name: name.to_string(),
                unit: unit.to_string(),
                better,
                quantile,
                n: summary.n,
                median: summary.median,
                min: summary.min,
                max: summary.max,
            });
        }
    }
}

/// CV (%) of the per-run means of `name` when several runs are pooled.
fn between_run_cv(ok: &[&Loaded], name: &str, pooling: Pooling) -> Option<f64> {
    if pooling.runs < 2 || pooling.compared {
        return None;
    }
    let means: Vec<f64> = (0..pooling.runs)
        .filter_map(|r| {
            let v: Vec<f64> = ok.iter().filter(|l| l.run == r).filter_map(|l| l.trial.metric(name)).collect();
            Summary::of(&v).map(|s| s.mean)
        })
        .collect();
    Summary::of(&means).and_then(|s| s.cv_pct)
}

/// Percentiles of each histogram merged over the ok repetitions (µs in the store, ms here).
fn merged_percentiles(ok: &[&Loaded]) -> Vec<PercentileRow> {
    let mut by_name: BTreeMap<&str, Vec<&Histogram<u64>>> = BTreeMap::new();
    for h in ok.iter().flat_map(|l| &l.trial.histograms) {
        by_name.entry(h.name.as_str()).or_default().push(&h.hist);
    }
    let ms = |us: f64| us / 1000.0;
    by_name
        .into_iter()
        .filter_map(|(name, hists)| {
            let merged = percentiles::merge(hists)?;
            let p = percentiles::of(&merged)?;
            Some(PercentileRow {
                spectrum: percentiles::spectrum(&merged).into_iter().map(|(x, v)| (x, ms(v))).collect(),
                histogram: name.to_string(),
                count: p.count,
                percentiles: p.values.iter().map(|q| (q.label.clone(), ms(q.value))).collect(),
                max_ms: ms(p.max),
                omitted: p.omitted,
            })
        })
        .collect()
}
