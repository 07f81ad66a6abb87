//! Scaling against the swept parameter: the rows and knees of `crate::analysis::scaling`, per
//! variant, with the report's latency percentiles.

use super::model::{PointReport, Scaling, ScalingRow};
use super::safe as redact;
use crate::analysis::scaling::{analyze, throughput_metric, ScalingPoint};
use serde_json::Value;
use std::collections::BTreeMap;

/// The variant of a point: its variant parameters as "k=v k=v" (or "all").
pub fn variant_of(params: &BTreeMap<String, Value>, variant_params: &[String]) -> String {
    let parts: Vec<String> = variant_params
        .iter()
        .filter_map(|k| params.get(k).map(|v| format!("{k}={}", super::assemble::value_text(v))))
        .collect();
    if parts.is_empty() {
        "all".into()
    } else {
        redact(&parts.join(" "))
    }
}

pub(crate) fn scaling(swept: &str, variant_params: &[String], points: &[PointReport], ncpu: u32, primary: Option<&str>) -> Option<Scaling> {
    let metrics = points
        .iter()
        .flat_map(|p| p.metrics.iter().map(|m| (m.name.as_str(), m.unit.as_str(), m.better)));
    let (metric, unit) = throughput_metric(primary, metrics)?;
    // Per variant: (point, x, p50 ms, p99 ms).
    let mut by_variant: BTreeMap<String, Vec<(ScalingPoint, Option<f64>)>> = BTreeMap::new();
    for p in points {
        let Some(x) = p.params.get(swept).and_then(|v| v.as_f64()) else {
            continue;
        };
        let Some(m) = p.metrics.iter().find(|m| m.name == metric) else {
            continue;
        };
        let lat = p.latency.iter().find(|l| l.histogram == "latency").or(p.latency.first());
        let pct = |name: &str| lat.and_then(|l| l.percentiles.iter().find(|(n, _)| n == name).map(|(_, v)| *v));
        let system = p
            .system
            .iter()
            .filter_map(|r| r.under_load.map(|v| (r.metric.clone(), v)))
            .collect();
        by_variant.entry(variant_of(&p.params, variant_params)).or_default().push((
            ScalingPoint {
                x,
                throughput: m.summary.clone(),
                latency: pct("p50"),
                system,
            },
            pct("p99"),
        ));
    }
    let mut rows = Vec::new();
    let mut knees = Vec::new();
    let mut saturated_at_knee = Vec::new();
    for (variant, mut v) in by_variant {
        // Sorted here too, so that the analysis rows (sorted by x, stable) line up with p99.
        v.sort_by(|a, b| a.0.x.total_cmp(&b.0.x));
        let pts: Vec<ScalingPoint> = v.iter().map(|(p, _)| p.clone()).collect();
        let a = analyze(&pts, ncpu);
        for (r, (_, p99)) in a.rows.iter().zip(&v) {
            rows.push(ScalingRow {
                variant: variant.clone(),
                x: r.x,
                n: r.n,
                throughput: r.throughput,
                ci95: r.ci95,
                speedup: r.speedup,
                efficiency: r.efficiency,
                p50_ms: r.latency,
                p99_ms: *p99,
            });
        }
        if let Some(k) = a.knee {
            knees.push((variant.clone(), k.x));
            if !k.saturated.is_empty() {
                saturated_at_knee.push((
                    variant,
                    k.saturated
                        .iter()
                        .map(|s| format!("{} ({} {:.1})", s.what, s.metric, s.value))
                        .collect(),
                ));
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
