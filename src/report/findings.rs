//! Bottleneck findings for the report: `crate::analysis::bottleneck` over each point's monitor
//! samples (all its trials, as if pooled, read one trial at a time), plus errors that appear above
//! some value of the swept parameter, per variant.

use super::loaded::{variant_of, Loaded};
use super::model::{Finding, PointReport, RunFacts};
use super::point_findings::{merge, point_findings};
use crate::analysis::bottleneck::{errors_by_parameter, Context};
use crate::store::LOCAL_HOST;
use std::collections::BTreeMap;

/// Did the target die of an OOM kill (exit 137, or SIGKILL which the runner flags as one)?
fn oom_killed(group: &[&Loaded]) -> bool {
    group.iter().any(|l| {
        l.trial
            .failure
            .as_ref()
            .map(|f| f.to_string())
            .is_some_and(|f| f.contains("status 137") || f.contains("out of memory"))
    })
}

/// `groups`: (point label as in `points`, the point's trials).
pub fn evaluate(
    groups: &[(String, Vec<&Loaded>)],
    points: &[PointReport],
    runs: &[RunFacts],
    swept: Option<&str>,
    variant_params: &[String],
) -> anyhow::Result<Vec<Finding>> {
    let ctx = Context::of(runs.iter().map(|r| r.ncpu).max().unwrap_or(1).max(1));
    let mut out: Vec<Finding> = Vec::new();
    for (label, group) in groups {
        merge(&mut out, point_findings(LOCAL_HOST, label, group, oom_killed(group), &ctx)?);
    }
    if let Some(s) = swept {
        out.extend(errors_along(s, points, variant_params));
        out.extend(error_classes_along(s, points, variant_params));
    }
    Ok(out)
}

/// Errors along the swept parameter, per variant: errors per trial at each point.
fn errors_along(swept: &str, points: &[PointReport], variant_params: &[String]) -> Vec<Finding> {
    let mut by_variant: BTreeMap<String, Vec<(String, f64, f64)>> = BTreeMap::new();
    for p in points {
        let Some(x) = p.params.get(swept).and_then(|v| v.as_f64()) else {
            continue;
        };
        let errors: u64 = p.errors.iter().map(|(_, n)| n).sum();
        let rate = errors as f64 / p.trials.max(1) as f64;
        by_variant
            .entry(variant_of(&p.params, variant_params))
            .or_default()
            .push((p.label.clone(), x, rate));
    }
    by_variant.values().filter_map(|pts| errors_by_parameter(swept, pts)).collect()
}

/// Each error class (`errors_<class>` metrics, the oltp workload's) along the swept parameter, per
/// variant: where it first appears (rule E2).
fn error_classes_along(swept: &str, points: &[PointReport], variant_params: &[String]) -> Vec<Finding> {
    use crate::analysis::bottleneck::oltp_errors::{class_of, error_classes_by_parameter, first_example, ClassPoint};
    let mut by_variant: BTreeMap<String, Vec<ClassPoint>> = BTreeMap::new();
    for p in points {
        let Some(x) = p.params.get(swept).and_then(|v| v.as_f64()) else {
            continue;
        };
        let counts: Vec<(String, f64)> = p
            .metrics
            .iter()
            .filter_map(|m| class_of(&m.name).map(|c| (c.to_string(), m.summary.mean)))
            .collect();
        let label = p.label.clone();
        let first = p.errors.iter().filter_map(|(e, _)| first_example(e)).collect();
        by_variant
            .entry(variant_of(&p.params, variant_params))
            .or_default()
            .push(ClassPoint { label, x, counts, first });
    }
    by_variant.values().flat_map(|pts| error_classes_by_parameter(swept, pts)).collect()
}
