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

/// The trial's workload: here, or (`host = "server"`, exec only) run by that host's agent.
fn build_workload(plan: &Plan, hosts: &[crate::plan::HostSpec], table: &toml::Table) -> anyhow::Result<Box<dyn crate::workload::Workload>> {
    let loc = PlanLocator(plan);
    let host = crate::plan::host_named(table.get("host"), hosts)
        .map_err(|m| registry::located(&loc, Some("host"), &format!("[workload] host: {m}")))?;
    let mut table = table.clone();
    table.remove("host");
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
