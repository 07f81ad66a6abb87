//! Scaling against the swept parameter: the rows and knees of `crate::analysis::scaling`, per
//! variant, with the points' merged latency percentiles.

use super::loaded::variant_of;
use super::model::{PointReport, Scaling, ScalingRow};
use crate::analysis::scaling::{analyze, ScalingPoint};
use crate::workload::Better;
use std::collections::BTreeMap;

/// The throughput metric: `requests_per_s` if present, else the first higher-is-better `*_per_s`.
fn pick_throughput(points: &[PointReport]) -> Option<(String, String)> {
    let mut best: Option<(String, String)> = None;
    for m in points.iter().flat_map(|p| &p.metrics) {
        if m.better == Better::Higher && m.name.ends_with("_per_s") {
            if m.name == "requests_per_s" {
                return Some((m.name.clone(), m.unit.clone()));
            }
            if best.is_none() {
                best = Some((m.name.clone(), m.unit.clone()));
            }
        }
    }
    best
}

/// A merged percentile of the point's `latency` histogram (or its first one), ms.
fn merged(p: &PointReport, label: &str) -> Option<f64> {
    let lat = p.latency.iter().find(|l| l.histogram == "latency").or(p.latency.first())?;
    lat.percentiles.iter().find(|(n, _)| n == label).map(|(_, v)| *v)
}

/// Per variant: the sweep's points with the merged p99 of each.
fn sweeps(
    swept: &str,
    metric: &str,
    variant_params: &[String],
    points: &[PointReport],
) -> BTreeMap<String, Vec<(ScalingPoint, Option<f64>)>> {
    let mut by_variant: BTreeMap<String, Vec<(ScalingPoint, Option<f64>)>> = BTreeMap::new();
    for p in points {
        let Some(x) = p.params.get(swept).and_then(|v| v.as_f64()) else {
            continue;
        };
        let Some(m) = p.metrics.iter().find(|m| m.name == metric) else {
            continue;
        };
        let system = p
            .system
            .iter()
            .filter_map(|r| r.under_load.map(|v| (r.metric.clone(), v)))
            .collect();
        let point = ScalingPoint {
            x,
            throughput: m.summary.clone(),
            latency: merged(p, "p50"),
            system,
        };
        by_variant
            .entry(variant_of(&p.params, variant_params))
            .or_default()
            .push((point, merged(p, "p99")));
    }
    by_variant
}

/// The scaling section's data, None without a throughput metric.
pub fn scaling(swept: &str, variant_params: &[String], points: &[PointReport], ncpu: u32) -> Option<Scaling> {
    let (metric, unit) = pick_throughput(points)?;
    let mut rows = Vec::new();
    let mut knees = Vec::new();
    let mut saturated_at_knee = Vec::new();
    for (variant, mut v) in sweeps(swept, &metric, variant_params, points) {
        // Sorted here too, so that the analysis rows (sorted by x, stable) line up with p99.
        v.sort_by(|a, b| a.0.x.total_cmp(&b.0.x));
        let pts: Vec<ScalingPoint> = v.iter().map(|(p, _)| p.clone()).collect();
        let a = analyze(&pts, ncpu);
        for (row, (_, p99)) in a.rows.into_iter().zip(&v) {
            rows.push(ScalingRow {
                variant: variant.clone(),
                row,
                p99_ms: *p99,
            });
        }
        if let Some(k) = a.knee {
            knees.push((variant.clone(), k.x));
            if !k.saturated.is_empty() {
                let what = k
                    .saturated
                    .iter()
                    .map(|s| format!("{} ({} {:.1})", s.what, s.metric, s.value))
                    .collect();
                saturated_at_knee.push((variant, what));
            }
        }
    }
    Some(Scaling {
        parameter: swept.to_string(),
        throughput_metric: metric,
        unit,
        rows,
        knees,
        saturated_at_knee,
    })
}
