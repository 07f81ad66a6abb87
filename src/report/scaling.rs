//! Scaling against the swept parameter: the rows and knees of `crate::analysis::scaling`, per
//! variant, with the points' merged latency percentiles.

use super::loaded::variant_of;
use super::model::{PointReport, Scaling, ScalingRow};
use crate::analysis::scaling::{analyze, throughput_metric, ScalingPoint};
use std::collections::BTreeMap;

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
pub fn scaling(swept: &str, variant_params: &[String], points: &[PointReport], ncpu: u32, primary: Option<&str>) -> Option<Scaling> {
    let metrics = points
        .iter()
        .flat_map(|p| p.metrics.iter().map(|m| (m.name.as_str(), m.unit.as_str(), m.better)));
    let (metric, unit) = throughput_metric(primary, metrics)?;
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
                let what = k.saturated.iter().map(|s| s.what.clone()).collect();
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
