//! Comparison of variants: each variant parameter's values against the first, at fixed other
//! parameters. The statistics (Δ %, its CI, the test, p, the verdict) are `crate::analysis::compare`.

use super::loaded::{safe, value_text, Loaded};
use super::model::{Comparison, PointReport};
use crate::analysis::compare::compare;
use crate::model::{Better, MetricKind};
use serde_json::Value;
use std::collections::BTreeMap;

/// The values of the compared parameter `vp` against `baseline` (or the first value seen), metric
/// by metric, at each combination of the other parameters (ordered by the swept value). Only `vp`
/// makes comparisons; the other parameters are held fixed. A metric that is the same constant on
/// both sides (0 errors against 0 errors) is left out: there is nothing to say about it.
///
/// A percentile read from a histogram the points merged (`latency_p99_ms` of `latency`) is shown as
/// the two points' own percentiles (every repetition pooled), never as means of per-trial
/// percentiles; its CI, test and verdict stay those of the per-trial figures.
pub fn comparisons(
    vp: &str,
    baseline: Option<&str>,
    variant_params: &[String],
    swept: Option<&str>,
    loaded: &[Loaded],
    points: &[PointReport],
) -> Vec<Comparison> {
    let mut out = Vec::new();
    for (at, group) in groups_at(vp, variant_params, swept, loaded) {
        let mut rows = compare_group(vp, baseline, &at, &group);
        for c in &mut rows {
            pool_percentile(c, vp, &group, points);
        }
        out.extend(rows);
    }
    out
}

/// For a percentile of a merged histogram: mean a and mean b become the two points' merged
/// percentiles (Δ % between them), and `merged` says so.
fn pool_percentile(c: &mut Comparison, vp: &str, group: &[&Loaded], points: &[PointReport]) {
    let Some(q) = c.quantile else { return };
    if c.unit != "ms" {
        return;
    }
    let merged = |side: &str| -> Option<f64> {
        let label = &group
            .iter()
            .find(|l| l.params.get(vp).map(|v| safe(&value_text(v))).as_deref() == Some(side))?
            .point_label;
        let p = points.iter().find(|p| &p.label == label)?;
        if !p.merged_instead.contains(&c.metric) {
            return None;
        }
        let h = p.latency.iter().find(|h| c.metric.starts_with(&format!("{}_", h.histogram)))?;
        h.percentiles
            .iter()
            .find(|(n, _)| {
                n.strip_prefix('p')
                    .and_then(|v| v.parse::<f64>().ok())
                    .is_some_and(|v| (v / 100.0 - q).abs() < 1e-9)
            })
            .map(|(_, v)| *v)
    };
    if let (Some(a), Some(b)) = (merged(&c.a), merged(&c.b)) {
        c.result.mean_a = a;
        c.result.mean_b = b;
        c.result.delta_pct = (a != 0.0).then(|| 100.0 * (b - a) / a.abs());
        c.merged = true;
    }
}

/// The ok trials grouped by the other parameters held fixed ("k=v k=v"), ordered by the swept
/// value numerically, then by text.
fn groups_at<'a>(vp: &str, variant_params: &[String], swept: Option<&str>, loaded: &'a [Loaded]) -> Vec<(String, Vec<&'a Loaded>)> {
    let mut groups: BTreeMap<String, Vec<&Loaded>> = BTreeMap::new();
    for l in loaded.iter().filter(|l| l.trial.ok()) {
        let at: Vec<String> = l
            .params
            .iter()
            .filter(|(k, _)| *k != vp && (Some(k.as_str()) == swept || variant_params.contains(k)))
            .map(|(k, v)| format!("{k}={}", value_text(v)))
            .collect();
        groups.entry(safe(&at.join(" "))).or_default().push(l);
    }
    let x = |g: &[&Loaded]| swept.and_then(|s| g[0].params.get(s)).and_then(|v| v.as_f64()).unwrap_or(0.0);
    let mut out: Vec<(String, Vec<&Loaded>)> = groups.into_iter().collect();
    out.sort_by(|a, b| x(&a.1).total_cmp(&x(&b.1)).then(a.0.cmp(&b.0)));
    out
}

/// Within one group: every other value of `vp` against the first seen, for every metric.
fn compare_group(vp: &str, baseline: Option<&str>, at: &str, g: &[&Loaded]) -> Vec<Comparison> {
    let mut vals: Vec<&Value> = Vec::new();
    for v in g.iter().filter_map(|l| l.params.get(vp)) {
        if !vals.contains(&v) {
            vals.push(v);
        }
    }
    if let Some(i) = baseline.and_then(|b| vals.iter().position(|v| value_text(v) == b)) {
        let b = vals.remove(i);
        vals.insert(0, b);
    }
    let mut metrics: BTreeMap<&str, (&str, Better)> = BTreeMap::new();
    for m in g.iter().flat_map(|l| &l.trial.metrics) {
        metrics.entry(&m.name).or_insert((&m.unit, m.better));
    }
    let sample = |val: &Value, metric: &str| -> Vec<f64> {
        g.iter()
            .filter(|l| l.params.get(vp) == Some(val))
            .filter_map(|l| l.trial.metric(metric))
            .collect()
    };
    let mut out = Vec::new();
    let Some((a_val, rest)) = vals.split_first() else {
        return out;
    };
    for b_val in rest {
        for (metric, (unit, better)) in &metrics {
            let (sa, sb) = (sample(a_val, metric), sample(b_val, metric));
            if sa.is_empty() || sb.is_empty() || constant_equal(&sa, &sb) {
                continue;
            }
            out.push(Comparison {
                parameter: vp.to_string(),
                a: safe(&value_text(a_val)),
                b: safe(&value_text(b_val)),
                at: at.to_string(),
                metric: metric.to_string(),
                unit: unit.to_string(),
                quantile: MetricKind::infer(metric, unit).quantile(),
                merged: false,
                result: compare(&sa, &sb, *better),
            });
        }
    }
    out
}

/// Are both samples one and the same constant (0 errors against 0 errors)?
fn constant_equal(a: &[f64], b: &[f64]) -> bool {
    let v = a[0];
    a.iter().chain(b).all(|x| *x == v)
}
