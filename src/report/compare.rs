//! Comparison of variants: each variant parameter's values against the first, at fixed other
//! parameters, with Welch's t and a direction-aware verdict.

use super::assemble::{value_text, Loaded};
use super::model::{Comparison, Verdict};
use super::safe as redact;
use super::stats::{welch, welch_ci, Summary};
use crate::workload::Better;
use serde_json::Value;
use std::collections::BTreeMap;

pub(crate) fn comparisons(
    variant_params: &[String],
    swept: Option<&str>,
    loaded: &[Loaded],
) -> Vec<Comparison> {
    let mut out = Vec::new();
    for vp in variant_params {
        // Group ok trials by the other parameters held fixed.
        let mut groups: BTreeMap<String, Vec<&Loaded>> = BTreeMap::new();
        for l in loaded.iter().filter(|l| l.trial.ok()) {
            let at: Vec<String> = l
                .params
                .iter()
                .filter(|(k, _)| {
                    *k != vp && (Some(k.as_str()) == swept || variant_params.contains(k))
                })
                .map(|(k, v)| format!("{k}={}", value_text(v)))
                .collect();
            groups.entry(redact(&at.join(" "))).or_default().push(l);
        }
        // Order groups by swept value numerically when possible.
        let mut keys: Vec<(f64, String)> = groups
            .iter()
            .map(|(k, g)| {
                let x = swept
                    .and_then(|s| g[0].params.get(s))
                    .and_then(|v| v.as_f64())
                    .unwrap_or(0.0);
                (x, k.clone())
            })
            .collect();
        keys.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for (_, at) in keys {
            let g = &groups[&at];
            let mut vals: Vec<Value> = Vec::new();
            for l in g {
                if let Some(v) = l.params.get(vp) {
                    if !vals.contains(v) {
                        vals.push(v.clone());
                    }
                }
            }
            if vals.len() < 2 {
                continue;
            }
            let mut metric_names: BTreeMap<String, (String, Better)> = BTreeMap::new();
            for l in g {
                for m in &l.trial.metrics {
                    metric_names
                        .entry(m.name.clone())
                        .or_insert((m.unit.clone(), m.better));
                }
            }
            let a_val = &vals[0];
            for b_val in &vals[1..] {
                for (metric, (unit, better)) in &metric_names {
                    let sample = |val: &Value| -> Vec<f64> {
                        g.iter()
                            .filter(|l| l.params.get(vp) == Some(val))
                            .filter_map(|l| l.trial.metric(metric))
                            .collect()
                    };
                    let (Some(sa), Some(sb)) =
                        (Summary::of(&sample(a_val)), Summary::of(&sample(b_val)))
                    else {
                        continue;
                    };
                    out.push(compare_one(
                        vp, a_val, b_val, &at, metric, unit, *better, &sa, &sb,
                    ));
                }
            }
        }
    }
    out
}

/// The number of repetitions a side needs for a comparison.
pub const MIN_SAMPLES: usize = 3;

#[allow(clippy::too_many_arguments)]
fn compare_one(
    vp: &str,
    a: &Value,
    b: &Value,
    at: &str,
    metric: &str,
    unit: &str,
    better: Better,
    sa: &Summary,
    sb: &Summary,
) -> Comparison {
    let delta_pct = (sa.mean != 0.0).then(|| 100.0 * (sb.mean - sa.mean) / sa.mean.abs());
    let mut c = Comparison {
        parameter: vp.to_string(),
        a: redact(&value_text(a)),
        b: redact(&value_text(b)),
        at: at.to_string(),
        metric: metric.to_string(),
        unit: unit.to_string(),
        n_a: sa.n,
        n_b: sb.n,
        mean_a: sa.mean,
        mean_b: sb.mean,
        delta_pct,
        ci95_low_pct: None,
        ci95_high_pct: None,
        test: "Welch's t".into(),
        p: None,
        verdict: Verdict::TooFewSamples { need: MIN_SAMPLES },
    };
    if sa.n < MIN_SAMPLES || sb.n < MIN_SAMPLES {
        return c;
    }
    let Some((_, df, p)) = welch(sa, sb) else {
        return c;
    };
    c.p = Some(p);
    if sa.mean != 0.0 {
        let (lo, hi) = welch_ci(sa, sb, df);
        c.ci95_low_pct = Some(100.0 * lo / sa.mean.abs());
        c.ci95_high_pct = Some(100.0 * hi / sa.mean.abs());
    }
    let up = sb.mean > sa.mean;
    c.verdict = if p >= 0.05 {
        Verdict::NoSignificantDifference
    } else {
        match better {
            Better::Higher if up => Verdict::Improved,
            Better::Higher => Verdict::Regressed,
            Better::Lower if up => Verdict::Regressed,
            Better::Lower => Verdict::Improved,
            Better::Neither => Verdict::Changed,
        }
    };
    c
}
