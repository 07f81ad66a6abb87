//! A validated plan and its expanded trials → an `Experiment` the runner executes. Every trial's
//! workload is built here, before anything starts, so a bad `[workload]` key is reported at its line;
//! so is what only the built workloads and this machine can tell (`preflight`): a threshold or
//! adaptive metric the workload cannot produce, a target program that is not there, a limit this
//! machine cannot apply.

use super::experiment::{Experiment, Extender, PointInfo, PreparedTrial};
use crate::plan::{self, Plan, Repetitions, Trial};
use crate::workload::registry::{self, Locator};
use crate::workload::Primary;
use std::collections::HashMap;
use std::sync::Arc;

struct PlanLocator<'a>(&'a Plan);

impl Locator for PlanLocator<'_> {
    fn at(&self, key: Option<&str>) -> String {
        self.0.locate_workload_key(key)
    }
}

/// Build the experiment; `plan_file` is the plan's path as the user gave it.
pub fn build(plan: &Plan, trials: &[Trial], plan_file: &str) -> anyhow::Result<Experiment> {
    super::preflight::targets(plan)?;
    super::preflight::probes(plan)?;
    let prepared = trials.iter().map(|t| prepare(plan, t)).collect::<anyhow::Result<Vec<_>>>()?;
    super::preflight::metrics(plan, &prepared)?;
    let mut primaries: HashMap<usize, Primary> = HashMap::new();
    for t in &prepared {
        primaries.entry(t.point).or_insert_with(|| t.workload.primary());
    }
    let primary_of = |id: usize| primaries.get(&id).copied().unwrap_or(Primary::NONE);
    let points = plan
        .points
        .iter()
        .map(|p| PointInfo {
            id: p.id,
            label: p.label.clone(),
            params_json: p.params_json(),
            primary: primary_of(p.id),
        })
        .collect();
    let extend: Option<Extender> = match plan.repetitions {
        Repetitions::Adaptive { .. } => {
            let plan = Arc::new(plan.clone());
            Some(Box::new(move |point, rep, id| {
                prepare(&plan, &plan::trial_for(&plan, point, rep, id))
            }))
        }
        Repetitions::Fixed(_) => None,
    };
    Ok(Experiment {
        name: plan.name.clone(),
        plan_file: plan_file.to_string(),
        plan_source: plan.secrets.redacted_source().to_string(),
        had_secrets: plan.secrets.had_secrets(),
        redactor: plan.secrets.redactor().clone(),
        seed: plan.seed,
        phases: plan.phases,
        points,
        trials: prepared,
        repetitions: plan.repetitions.clone(),
        keep_target: plan.keep_target,
        hooks: plan.variants.clone(),
        thresholds: plan.thresholds.clone(),
        extend,
        notes: plan.notes.clone(),
        monitor_hosts: plan.monitor_hosts.clone(),
        profile: plan.profile.clone(),
        segment: None,
        split: split_mark(plan),
    })
}

fn prepare(plan: &Plan, t: &Trial) -> anyhow::Result<PreparedTrial> {
    let point = &plan.points[t.point];
    let workload = build_workload(plan, &point.hosts, &t.workload).map_err(|e| {
        // The value may come from the matrix: say at which point.
        match point.label.as_str() {
            "" => e,
            label => crate::error::usage(format!("{} (at {})", crate::error::one_line(&e), crate::util::text::clip(label))),
        }
    })?;
    let variant = point.variant().filter(|v| plan.variants.contains_key(v));
    Ok(PreparedTrial {
        id: t.index,
        point: t.point,
        repetition: t.repetition,
        params_json: point.params_json(),
        variant,
        target: t.target.clone(),
        workload,
        probes: t.probes.clone(),
        hosts: point.hosts.clone(),
    })
}

/// Whether every trial's workload of the plan can be cut into `count` segments (`perflab dist`
/// checks a plan on the machine that writes the batch files): segment 0 and the last, which gets
/// the fewest connections or workers, of each point. A workload that cannot be built here (its
/// server's name resolves only inside the cluster) is not refused: the note says what was not
/// checked, and each segment checks it again on its own machine.
pub fn check_segments(plan: &Plan, trials: &[Trial], count: u32) -> anyhow::Result<Option<String>> {
    let first = crate::model::Segment::new(0, count).map_err(crate::error::usage)?;
    let last = crate::model::Segment::new(count - 1, count).map_err(crate::error::usage)?;
    let mut seen = std::collections::HashSet::new();
    for t in trials.iter().filter(|t| seen.insert(t.point)) {
        for segment in [first, last] {
            let mut w = match build_workload(plan, &plan.points[t.point].hosts, &t.workload) {
                Ok(w) => w,
                Err(e) if plan.workload.kind != "exec" => {
                    let why = crate::error::one_line(&e);
                    let kind = &plan.workload.kind;
                    return Ok(Some(format!(
                        "note: the `{kind}` workload was not checked here ({why}); each segment checks it on its machine"
                    )));
                }
                Err(e) => return Err(e),
            };
            w.segment(segment)
                .map_err(|e| crate::error::usage(format!("{}: --segment {segment}: {e}", plan.locate_workload_key(None))))?;
        }
    }
    Ok(None)
}

/// The trial's workload: here, or (`host = "server"`, exec only) run by that host's agent.
fn build_workload(plan: &Plan, hosts: &[crate::plan::HostSpec], table: &toml::Table) -> anyhow::Result<Box<dyn crate::workload::Workload>> {
    let loc = PlanLocator(plan);
    let host = crate::plan::host_named(table.get("host"), hosts)
        .map_err(|m| registry::located(&loc, Some("host"), &format!("[workload] host: {m}")))?;
    let mut table = table.clone();
    table.remove("host");
    let from = table.remove("from");
    if let Some(from) = from {
        return split_from(plan, hosts, &from, host.is_some(), table);
    }
    match host {
        None => registry::build(&plan.workload.kind, &table, &loc),
        Some(_) if plan.workload.kind != "exec" => Err(registry::located(
            &loc,
            Some("host"),
            "[workload] host: only an exec workload runs on another host (the http workload runs here: point its url at the host)",
        )),
        Some(h) => registry::build_exec_on(&table, &loc, Box::new(super::remote_exec::RemoteExec { host: h })),
    }
}

/// `[workload] from`: the trial's load split over the machines it names, each error at the key.
fn split_from(
    plan: &Plan,
    hosts: &[crate::plan::HostSpec],
    from: &toml::Value,
    has_host: bool,
    table: toml::Table,
) -> anyhow::Result<Box<dyn crate::workload::Workload>> {
    let loc = PlanLocator(plan);
    let refuse = |m: &str| registry::located(&loc, Some("from"), &format!("[workload] from: {m}"));
    let kind = &plan.workload.kind;
    if kind == "exec" {
        return Err(refuse(
            "an exec workload cannot be split over machines (perflab does not drive the tool's load): use `host` to run it on one",
        ));
    }
    if has_host {
        return Err(refuse("give `from` (the machines that send the load) or `host`, not both"));
    }
    let machines = crate::plan::load_from(from, hosts).map_err(|m| refuse(&m))?;
    let whole = registry::build(kind, &table, &loc)?;
    let at = loc.at(Some("from"));
    let w = super::from_hosts::FromHosts::new(whole, machines, kind, table, at).map_err(|m| refuse(&m))?;
    Ok(Box::new(w))
}

/// The store's mark of a plan whose load is split by `[workload] from`: its segments and machines.
fn split_mark(plan: &Plan) -> Option<crate::store::MergedMark> {
    let names: Vec<&str> = plan
        .workload
        .table
        .get("from")?
        .as_array()?
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    let count = names.len() as u32;
    Some(crate::store::MergedMark {
        count,
        plan_sha256: crate::store::plan_sha256(plan.secrets.redacted_source()),
        start_at_unix: None,
        segments: names
            .iter()
            .enumerate()
            .map(|(i, n)| crate::store::MergedSegment {
                segment: format!("{i}/{count}"),
                host: (*n).to_string(),
                hostname: (*n).to_string(),
                dir: String::new(),
                late_s: None,
            })
            .collect(),
        partial: Vec::new(),
    })
}

#[cfg(test)]
#[path = "from_plan_tests.rs"]
mod tests;
