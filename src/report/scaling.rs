//! Scaling against the swept parameter: speedup, efficiency and the knee.

use super::model::{PointReport, Scaling, ScalingRow};
use super::safe as redact;
use crate::workload::Better;
use serde_json::Value;
use std::collections::BTreeMap;

/// The variant of a point: its variant parameters as "k=v k=v" (or "all").
pub fn variant_of(params: &BTreeMap<String, Value>, variant_params: &[String]) -> String {
    let parts: Vec<String> = variant_params
        .iter()
        .filter_map(|k| {
            params
                .get(k)
                .map(|v| format!("{k}={}", super::assemble::value_text(v)))
        })
        .collect();
    if parts.is_empty() {
        "all".into()
    } else {
        redact(&parts.join(" "))
    }
}

fn pick_throughput(points: &[PointReport]) -> Option<(String, String)> {
    let mut best: Option<(String, String)> = None;
    for p in points {
        for m in &p.metrics {
            if m.better == Better::Higher && m.name.ends_with("_per_s") {
                if m.name == "requests_per_s" {
                    return Some((m.name.clone(), m.unit.clone()));
                }
                if best.is_none() {
                    best = Some((m.name.clone(), m.unit.clone()));
                }
            }
        }
    }
    best
}

pub(crate) fn scaling(
    swept: &str,
    variant_params: &[String],
    points: &[PointReport],
) -> Option<Scaling> {
    let (metric, unit) = pick_throughput(points)?;
    let mut by_variant: BTreeMap<String, Vec<ScalingRow>> = BTreeMap::new();
    for p in points {
        let Some(x) = p.params.get(swept).and_then(|v| v.as_f64()) else {
            continue;
        };
        let Some(m) = p.metrics.iter().find(|m| m.name == metric) else {
            continue;
        };
        let lat = p
            .latency
            .iter()
            .find(|l| l.histogram == "latency")
            .or(p.latency.first());
        let pct = |name: &str| {
            lat.and_then(|l| {
                l.percentiles
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| *v)
            })
        };
        let variant = variant_of(&p.params, variant_params);
        by_variant
            .entry(variant.clone())
            .or_default()
            .push(ScalingRow {
                variant,
                x,
                n: m.summary.n,
                throughput: m.summary.mean,
                ci95: m.summary.ci95,
                speedup: None,
                efficiency: None,
                p50_ms: pct("p50"),
                p99_ms: pct("p99"),
            });
    }
    let mut rows = Vec::new();
    let mut knees = Vec::new();
    for (variant, mut v) in by_variant {
        v.sort_by(|a, b| a.x.total_cmp(&b.x));
        let (x0, t0) = (v[0].x, v[0].throughput);
        for r in &mut v {
            if t0 > 0.0 && x0 > 0.0 {
                let s = r.throughput / t0;
                r.speedup = Some(s);
                r.efficiency = Some(s / (r.x / x0));
            }
        }
        for w in v.windows(2) {
            let gain = if w[0].throughput > 0.0 {
                w[1].throughput / w[0].throughput - 1.0
            } else {
                0.0
            };
            let lat_grows = match (w[0].p50_ms, w[1].p50_ms) {
                (Some(a), Some(b)) => b > a,
                _ => true,
            };
            if gain < 0.05 && lat_grows {
                knees.push((variant.clone(), w[0].x));
                break;
            }
        }
        rows.extend(v);
    }
    Some(Scaling {
        parameter: swept.to_string(),
        throughput_metric: metric,
        unit,
        rows,
        knees,
    })
}
