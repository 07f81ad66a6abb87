//! The bottleneck rules at one point of the report, on one host: its trials read one at a time,
//! and only when the per-phase summaries stored with them leave room for a rule to hold
//! (`bottleneck::gate`), then only the metrics the rules read. Shared by the findings of this
//! machine and those of each remote host; imports nothing else from `report/` but `loaded`.

use super::loaded::Loaded;
use crate::analysis::bottleneck::{self, Context, Finding};
use crate::analysis::table::SampleTable;

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
/// for all the points at once (one finding per rule, in rule id order, points in input order).
pub fn merge(all: &mut Vec<Finding>, point: Vec<Finding>) {
    for f in point {
        match all.iter_mut().find(|a| a.rule == f.rule) {
            Some(a) => {
                a.points.extend(f.points);
                a.hits.extend(f.hits);
                a.evidence.extend(f.evidence);
                a.severity = a.severity.max(f.severity);
                bottleneck::retitle(a);
            }
            None => all.push(f),
        }
    }
    all.sort_by_key(|f| f.rule);
}
