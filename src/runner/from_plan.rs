//! A validated plan and its expanded trials → an `Experiment` the runner executes. Every trial's
//! workload is built here, before anything starts, so a bad `[workload]` key is reported at its line.

use super::experiment::{Experiment, Extender, PointInfo, PreparedTrial};
use crate::plan::{self, Plan, Repetitions, Trial};
use crate::workload::registry::{self, Locator};
use std::sync::Arc;

struct PlanLocator<'a>(&'a Plan);

impl Locator for PlanLocator<'_> {
    fn at(&self, key: Option<&str>) -> String {
        self.0.locate_workload_key(key)
    }
}

/// Build the experiment; `plan_file` is the plan's path as the user gave it.
pub fn build(plan: &Plan, trials: &[Trial], plan_file: &str) -> anyhow::Result<Experiment> {
    let prepared = trials.iter().map(|t| prepare(plan, t)).collect::<anyhow::Result<Vec<_>>>()?;
    let points = plan
        .points
        .iter()
        .map(|p| PointInfo {
            id: p.id,
            label: p.label.clone(),
            params_json: p.params_json(),
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
    })
}

fn prepare(plan: &Plan, t: &Trial) -> anyhow::Result<PreparedTrial> {
    let workload = registry::build(&plan.workload.kind, &t.workload, &PlanLocator(plan))?;
    let point = &plan.points[t.point];
    let variant = point.variant().filter(|v| plan.variants.contains_key(v));
    Ok(PreparedTrial {
        id: t.index,
        point: t.point,
        repetition: t.repetition,
        params_json: point.params_json(),
        variant,
        target: t.target.clone(),
        workload,
    })
}
