//! Comparison of variants: each variant parameter's values against the first, at fixed other
//! parameters. The statistics (Δ %, its CI, the test, p, the verdict) are `crate::analysis::compare`.

use super::assemble::{value_text, Loaded};
use super::model::Comparison;
use super::safe as redact;
use crate::analysis::compare::compare;
use crate::workload::Better;
use serde_json::Value;
use std::collections::BTreeMap;

pub(crate) fn comparisons(variant_params: &[String], swept: Option<&str>, loaded: &[Loaded]) -> Vec<Comparison> {
    let mut out = Vec::new();
    for vp in variant_params {
        // Group ok trials by the other parameters held fixed.
        let mut groups: BTreeMap<String, Vec<&Loaded>> = BTreeMap::new();
        for l in loaded.iter().filter(|l| l.trial.ok()) {
            let at: Vec<String> = l
                .params
                .iter()
                .filter(|(k, _)| *k != vp && (Some(k.as_str()) == swept || variant_params.contains(k)))
                .map(|(k, v)| format!("{k}={}", value_text(v)))
                .collect();
            groups.entry(redact(&at.join(" "))).or_default().push(l);
        }
        // Order groups by swept value numerically when possible.
        let mut keys: Vec<(f64, String)> = groups
            .iter()
            .map(|(k, g)| {
                let x = swept.and_then(|s| g[0].params.get(s)).and_then(|v| v.as_f64()).unwrap_or(0.0);
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
                    metric_names.entry(m.name.clone()).or_insert((m.unit.clone(), m.better));
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
                    let (sa, sb) = (sample(a_val), sample(b_val));
                    if sa.is_empty() || sb.is_empty() {
                        continue;
                    }
                    let c = compare(&sa, &sb, *better);
                    out.push(Comparison {
                        parameter: vp.to_string(),
                        a: redact(&value_text(a_val)),
                        b: redact(&value_text(b_val)),
                        at: at.clone(),
                        metric: metric.to_string(),
                        unit: unit.to_string(),
                        n_a: c.n_a,
                        n_b: c.n_b,
                        mean_a: c.mean_a,
                        mean_b: c.mean_b,
                        delta_pct: c.delta_pct,
                        ci95_low_pct: c.ci95_low_pct,
                        ci95_high_pct: c.ci95_high_pct,
                        test: c.test.name().to_string(),
                        p: c.p,
                        verdict: c.verdict,
                    });
                }
            }
        }
    }
    out
}
