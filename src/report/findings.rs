//! Bottleneck findings for the report: `crate::analysis::bottleneck` over each point's monitor
//! samples (all its trials, as if pooled, read one trial at a time), plus errors that appear above
//! some value of the swept parameter, per variant.
//!
//! A point's samples are read only when the per-phase summaries stored with its trials leave
//! room for a rule to hold (`bottleneck::gate`), and then only the metrics the rules read.

use super::loaded::{variant_of, Loaded};
use super::model::{Finding, PointReport, RunFacts};
use crate::analysis::bottleneck::{self, errors_by_parameter, Context};
use crate::analysis::table::SampleTable;
use crate::store::LOCAL_HOST;
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

/// `groups`: (point label as in `points`, the point's trials).
pub fn evaluate(
    groups: &[(String, Vec<&Loaded>)],
    points: &[PointReport],
    runs: &[RunFacts],
    swept: Option<&str>,
    variant_params: &[String],
) -> anyhow::Result<Vec<Finding>> {
    let ctx = Context {
        ncpu: runs.iter().map(|r| r.ncpu).max().unwrap_or(1).max(1),
        line_rate_mbitps: None,
        loadgen_cores: None,
    };
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

/// The rules at one point on `host`, its trials read one at a time (the report's memory holds one
/// trial's samples); none read when the trials' stored summaries show no rule can hold.
pub fn point_findings(host: &str, label: &str, group: &[&Loaded], oom_killed: bool, ctx: &Context) -> anyhow::Result<Vec<Finding>> {
    if !oom_killed && !may_fire(host, group, ctx)? {
        return Ok(Vec::new());
    }
    let mut read = |i: usize, wanted: &dyn Fn(&str) -> bool, t: &mut SampleTable| {
        let l = group[i];
        l.store.read_sample_table(l.trial.id, host, wanted, t)
    };
    bottleneck::evaluate_trials(label, group.len(), oom_killed, ctx, &mut read)
}

/// Whether a rule could hold in some load sample of these trials on `host`, from their stored
/// summaries (a store older than schema 3 computes them from the samples: they are read anyway).
fn may_fire(host: &str, group: &[&Loaded], ctx: &Context) -> anyhow::Result<bool> {
    for l in group {
        if l.store.schema_version() < 3 {
            return Ok(true);
        }
        let s = l.store.phase_summaries_on(l.trial.id, host, &l.trial.phases)?;
        if bottleneck::gate::may_fire(&s, ctx) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Add one point's findings to those of the points before it: what `bottleneck::evaluate` gives
/// for all the points at once (one finding per rule, in rule order, points in input order).
pub(super) fn merge(all: &mut Vec<Finding>, point: Vec<Finding>) {
    for f in point {
        match all.iter_mut().find(|a| a.rule == f.rule) {
            Some(a) => {
                a.points.extend(f.points);
                a.hits.extend(f.hits);
                a.evidence.extend(f.evidence);
                a.severity = a.severity.max(f.severity);
            }
            None => all.push(f),
        }
    }
    all.sort_by_key(|f| f.rule.trim_start_matches('R').parse::<u32>().unwrap_or(u32::MAX));
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
