//! Bottleneck findings for the report: `crate::analysis::bottleneck` over each point's monitor
//! samples (all its trials pooled), plus errors that appear above some value of the swept
//! parameter, per variant.

use super::assemble::Loaded;
use super::model::{Finding, PointReport, RunFacts};
use super::phases::sample_refs;
use super::scaling::variant_of;
use crate::analysis::bottleneck::{self, errors_by_parameter, Context, PointSamples};
use std::collections::BTreeMap;

/// Did the target die of an OOM kill (exit 137, or SIGKILL which the runner flags as one)?
fn oom_killed(group: &[&Loaded]) -> bool {
    group.iter().any(|l| {
        l.trial
            .failure
            .as_deref()
            .is_some_and(|f| f.contains("status 137") || f.contains("out of memory"))
    })
}

fn convert(f: bottleneck::Finding) -> Finding {
    Finding {
        evidence: f.evidence_text(),
        rule: f.rule,
        title: f.title,
        resource: f.resource,
        kind: f.kind.as_str().into(),
        severity: f.severity.as_str().into(),
        points: f.points,
        caveats: f.caveats,
    }
}

/// `groups`: (point label as in `points`, the point's trials).
pub(crate) fn evaluate(
    groups: &[(String, Vec<&Loaded>)],
    points: &[PointReport],
    runs: &[RunFacts],
    swept: Option<&str>,
    variant_params: &[String],
) -> Vec<Finding> {
    let ctx = Context {
        ncpu: runs.iter().map(|r| r.ncpu).max().unwrap_or(1).max(1),
        line_rate_mbitps: None,
        loadgen_cores: None,
    };
    let samples: Vec<PointSamples> = groups
        .iter()
        .map(|(label, group)| PointSamples {
            label: label.clone(),
            rows: group.iter().flat_map(|l| sample_refs(l)).collect(),
            oom_killed: oom_killed(group),
        })
        .collect();
    let mut out: Vec<Finding> = bottleneck::evaluate(&samples, &ctx).into_iter().map(convert).collect();
    // Errors along the swept parameter, per variant: errors per trial at each point.
    if let Some(s) = swept {
        let mut by_variant: BTreeMap<String, Vec<(String, f64, f64)>> = BTreeMap::new();
        for p in points {
            let Some(x) = p.params.get(s).and_then(|v| v.as_f64()) else {
                continue;
            };
            let errors: u64 = p.errors.iter().map(|(_, n)| n).sum();
            let rate = errors as f64 / p.trials.max(1) as f64;
            by_variant
                .entry(variant_of(&p.params, variant_params))
                .or_default()
                .push((p.label.clone(), x, rate));
        }
        for pts in by_variant.values() {
            if let Some(f) = errors_by_parameter(s, pts) {
                out.push(convert(f));
            }
        }
    }
    out
}
