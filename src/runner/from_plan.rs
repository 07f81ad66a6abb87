//! A validated plan and its expanded trials → an `Experiment` the runner executes. Every trial's
//! workload is built here, before anything starts, so a bad `[workload]` key is reported at its line.

use super::experiment::{Experiment, Extender, Hooks, Op, PointInfo, PreparedTrial, Repetitions, Threshold};
use super::limits::Limits;
use super::phase::PhasePlan;
use super::target::{CommandLine, Ready, TargetConfig};
use crate::plan::{self, Plan, ReadySpec, ResolvedTarget, Trial};
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
    let repetitions = match &plan.repetitions {
        plan::Repetitions::Fixed(n) => Repetitions::Fixed(*n),
        plan::Repetitions::Adaptive { min, max, ci_pct, metric } => Repetitions::Adaptive {
            min: *min,
            max: *max,
            ci_pct: *ci_pct,
            metric: metric.clone(),
        },
    };
    let extend: Option<Extender> = match repetitions {
        Repetitions::Adaptive { .. } => {
            let plan = Arc::new(plan.clone());
            Some(Box::new(move |point, rep, id| {
                prepare(&plan, &plan::trial_for(&plan, point, rep, id))
            }))
        }
        Repetitions::Fixed(_) => None,
    };
    let thresholds = plan
        .thresholds
        .iter()
        .map(|t| Threshold {
            expr: t.expr.clone(),
            metric: t.metric.clone(),
            op: op(&t.op),
            value: t.value,
        })
        .collect();
    let hooks = plan
        .variants
        .iter()
        .map(|(k, h)| {
            (
                k.clone(),
                Hooks {
                    setup: h.setup.clone(),
                    teardown: h.teardown.clone(),
                    skip_unless: h.skip_unless.clone(),
                },
            )
        })
        .collect();
    let ph = &plan.phases;
    Ok(Experiment {
        name: plan.name.clone(),
        plan_file: plan_file.to_string(),
        plan_source: plan.source.text.clone(),
        seed: plan.seed,
        phases: PhasePlan {
            baseline: ph.baseline,
            warmup: ph.warmup,
            load: ph.load,
            recovery: ph.recovery,
            interval: ph.interval,
        },
        points,
        trials: prepared,
        repetitions,
        keep_target: plan.keep_target,
        hooks,
        thresholds,
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
        target: t.target.as_ref().map(target_config),
        workload,
    })
}

fn op(s: &str) -> Op {
    match s {
        "<" => Op::Lt,
        "<=" => Op::Le,
        ">" => Op::Gt,
        _ => Op::Ge,
    }
}

fn target_config(t: &ResolvedTarget) -> TargetConfig {
    let command = match &t.command {
        plan::Command::Argv(a) => CommandLine::Argv(a.clone()),
        plan::Command::Shell(s) => CommandLine::Shell(s.clone()),
    };
    let ready = match &t.ready {
        ReadySpec::None => Ready::None,
        ReadySpec::Tcp { addr, timeout } => Ready::Tcp {
            addr: addr.clone(),
            timeout: *timeout,
        },
        ReadySpec::Http { url, timeout } => Ready::Http {
            url: url.clone(),
            timeout: *timeout,
        },
        // The pattern was compiled once during validation.
        ReadySpec::Log { pattern, timeout } => match regex::Regex::new(pattern) {
            Ok(pattern) => Ready::Log {
                pattern,
                timeout: *timeout,
            },
            Err(_) => Ready::Delay(*timeout),
        },
        ReadySpec::Delay(d) => Ready::Delay(*d),
    };
    TargetConfig {
        command,
        cwd: t.cwd.clone(),
        env: t.env.clone(),
        ready,
        stop_signal: t.stop_signal,
        grace: t.grace,
        limits: Limits {
            cpus: t.cpus.clone(),
            cpu_quota: t.cpu_quota,
            memory: t.memory,
        },
    }
}
