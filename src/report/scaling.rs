//! Scaling against the swept parameter: the rows and knees of `crate::analysis::scaling`, per
//! variant, with the points' merged latency percentiles.

use super::loaded::variant_of;
use super::model::{PointReport, Scaling, ScalingRow};
use crate::analysis::scaling::{analyze, ScalingPoint};
use std::collections::BTreeMap;

/// A merged percentile of the point's `latency` histogram (or its first one), ms.
fn merged(p: &PointReport, label: &str) -> Option<f64> {
    let lat = p.latency.iter().find(|l| l.histogram == "latency").or(p.latency.first())?;
    lat.percentiles.iter().find(|(n, _)| n == label).map(|(_, v)| *v)
}

/// Per variant, the sweep's points with the merged p99 of each.
type ByVariant = BTreeMap<String, Vec<(ScalingPoint, Option<f64>)>>;

/// Per variant: the sweep's points (each by its own headline throughput) with the merged p99 of
/// each; the names and units of the headlines used.
fn sweeps(swept: &str, variant_params: &[String], points: &[PointReport]) -> (ByVariant, Vec<(String, String)>) {
    let mut by_variant: ByVariant = BTreeMap::new();
    let mut used: Vec<(String, String)> = Vec::new();
    for p in points {
        let Some(x) = p.params.get(swept).and_then(|v| v.as_f64()) else {
            continue;
        };
        let Some(m) = p.headline.as_deref().and_then(|h| p.metrics.iter().find(|m| m.name == h)) else {
            continue;
        };
        if !used.iter().any(|(n, _)| *n == m.name) {
            used.push((m.name.clone(), m.unit.clone()));
        }
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
    (by_variant, used)
}

/// The scaling section's data, None without a headline throughput at the swept points.
pub fn scaling(swept: &str, variant_params: &[String], points: &[PointReport], ncpu: u32) -> Option<Scaling> {
    let (sweeps, used) = sweeps(swept, variant_params, points);
    if used.is_empty() {
        return None;
    }
    let metric = used.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(" / ");
    let mut units: Vec<&str> = used.iter().map(|(_, u)| u.as_str()).collect();
    units.dedup();
    let unit = units.join(" / ");
    let mut rows = Vec::new();
    let mut knees = Vec::new();
    let mut saturated_at_knee = Vec::new();
    for (variant, mut v) in sweeps {
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
        why_flat: Vec::new(),
    })
}
