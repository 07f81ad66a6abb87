//! Assembling the report model from stores: load the trials, find the swept and variant
//! parameters, and summarise each point (metrics, merged percentiles, phase table).

use super::compare::comparisons;
use super::model::*;
use super::phases::phase_row;
use super::safe as redact;
use super::scaling::scaling;
use crate::analysis::percentiles;
use crate::analysis::stats::Summary;
use crate::store::{Store, StoredTrial};
use crate::workload::Better;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// One trial with the run it came from and its parameters.
pub(crate) struct Loaded {
    pub run: usize,
    pub point_label: String,
    pub params: BTreeMap<String, Value>,
    pub trial: StoredTrial,
    pub samples: Vec<crate::store::TaggedSample>,
}

/// How many trials get a time-series chart at most (the report stays readable and bounded).
pub const MAX_TRIAL_CHARTS: usize = 24;

fn run_name(dir: &Path) -> String {
    dir.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string())
}

pub(crate) fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn params_of(json: &str) -> BTreeMap<String, Value> {
    match serde_json::from_str::<Value>(json) {
        Ok(Value::Object(m)) => m.into_iter().collect(),
        _ => BTreeMap::new(),
    }
}

/// Is this system metric one of the key ones shown in the phase table?
fn key_system_metric(name: &str) -> bool {
    matches!(
        name,
        "cpu_busy_pct"
            | "procs_running"
            | "load_1"
            | "mem_used_mb"
            | "mem_used_pct"
            | "proc_target_cpu_pct"
            | "proc_target_rss_mb"
            | "proc_loadgen_cpu_pct"
            | "tcp_retrans_per_s"
    ) || (name.starts_with("disk_") && (name.ends_with("_util_pct") || name.ends_with("_mbps")))
        || (name.starts_with("net_") && name.ends_with("_mbitps"))
}

/// Assemble the model from run directories. With `label_runs`, each run becomes a value of a
/// pseudo-parameter `run` (for `perflab compare`); otherwise runs of one plan are pooled.
pub fn build(dirs: &[&Path], label_runs: bool) -> anyhow::Result<ReportModel> {
    let mut runs = Vec::new();
    let mut loaded: Vec<Loaded> = Vec::new();
    let mut point_order: Vec<String> = Vec::new();
    let mut stop_reasons: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut notes = Vec::new();
    for (ri, dir) in dirs.iter().enumerate() {
        let store = Store::open(dir)?;
        let run = store.run()?;
        let name = run_name(dir);
        let trials = store.trials()?;
        let points = store.points()?;
        let mut labels: BTreeMap<usize, String> = BTreeMap::new();
        for p in &points {
            labels.insert(p.id, p.label.clone());
            if !point_order.contains(&p.label) && !label_runs {
                point_order.push(p.label.clone());
            }
            stop_reasons.insert(p.label.clone(), p.stop_reason.clone());
        }
        let ok = trials.iter().filter(|t| t.ok()).count();
        let limited = trials.iter().find(|t| t.limit_mechanism.is_some());
        runs.push(RunFacts {
            run: name.clone(),
            plan: run.plan_name.clone(),
            plan_file: run.plan_file.clone(),
            host: run.host.clone(),
            kernel: run.kernel.clone(),
            ncpu: run.ncpu,
            mem_total_mb: run.mem_total_mb,
            seed: run.seed,
            status: run.status.to_string(),
            perflab_version: run.perflab_version.clone(),
            started_unix: run.started_unix,
            ended_unix: run.ended_unix,
            planned_trials: run.planned_trials,
            trials_ok: ok,
            trials_failed: trials.len() - ok,
            limit_mechanism: limited.and_then(|t| t.limit_mechanism.clone()),
            limit_proof: limited.and_then(|t| t.limit_proof.clone()),
        });
        if ri > 0 && runs[0].plan != run.plan_name {
            notes.push(format!(
                "run {} has plan {:?}, not {:?}: {} anyway",
                name,
                run.plan_name,
                runs[0].plan,
                if label_runs { "compared" } else { "pooled" }
            ));
        }
        // What the run could not do (points or variants skipped here), once however many runs say it.
        for n in store.notes()? {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
        for t in trials {
            let samples = store.samples(t.id)?;
            let mut params = params_of(&t.params_json);
            let mut label = labels.get(&t.point).cloned().unwrap_or_else(|| format!("point {}", t.point));
            if label_runs {
                params.insert("run".into(), Value::String(name.clone()));
                label = format!("{label} run={name}");
                if !point_order.contains(&label) {
                    point_order.push(label.clone());
                }
            }
            loaded.push(Loaded {
                run: ri,
                point_label: label,
                params,
                trial: t,
                samples,
            });
        }
    }

    // Which parameters vary: the swept one (numeric, most values) and the variant ones.
    let mut values: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for l in &loaded {
        for (k, v) in &l.params {
            let e = values.entry(k.clone()).or_default();
            if !e.contains(v) {
                e.push(v.clone());
            }
        }
    }
    let varying: Vec<(&String, &Vec<Value>)> = values.iter().filter(|(_, v)| v.len() >= 2).collect();
    let swept = varying
        .iter()
        .filter(|(k, v)| k.as_str() != "run" && v.iter().all(|x| x.is_number()))
        .max_by_key(|(_, v)| v.len())
        .map(|(k, _)| (*k).clone());
    let variant_parameters: Vec<String> = varying
        .iter()
        .map(|(k, _)| (*k).clone())
        .filter(|k| Some(k) != swept.as_ref())
        .collect();

    let mut points = Vec::new();
    let mut groups: Vec<(String, Vec<&Loaded>)> = Vec::new();
    let mut charted = Vec::new();
    for label in &point_order {
        let group: Vec<&Loaded> = loaded.iter().filter(|l| &l.point_label == label).collect();
        if group.is_empty() {
            continue;
        }
        let point = point_report(label, &group, dirs.len(), stop_reasons.get(label).cloned().flatten(), label_runs);
        groups.push((point.label.clone(), group.clone()));
        points.push(point);
        for l in &group {
            if charted.len() < MAX_TRIAL_CHARTS && !l.samples.is_empty() {
                charted.push(trial_series(l, dirs.len() > 1, &runs));
            }
        }
    }
    let trial_count = loaded.iter().filter(|l| !l.samples.is_empty()).count();
    if trial_count > MAX_TRIAL_CHARTS {
        notes.push(format!(
            "time-series charts are drawn for the first {MAX_TRIAL_CHARTS} of {trial_count} trials"
        ));
    }

    let failed = loaded
        .iter()
        .filter_map(|l| {
            l.trial.failure.as_ref().map(|f| FailedTrial {
                run: runs[l.run].run.clone(),
                trial: l.trial.id,
                point: l.point_label.clone(),
                reason: redact(f),
            })
        })
        .collect();

    let ncpu = runs.iter().map(|r| r.ncpu).max().unwrap_or(1);
    let tp = dirs.first().and_then(|d| Store::primary_throughput_of(d));
    let scaling = swept
        .as_ref()
        .and_then(|s| scaling(s, &variant_parameters, &points, ncpu, tp.as_deref()));
    let comparisons = comparisons(&variant_parameters, swept.as_deref(), &loaded);
    let findings = super::findings::evaluate(&groups, &points, &runs, swept.as_deref(), &variant_parameters);
    let title = if label_runs {
        format!(
            "perflab compare: {}",
            runs.iter().map(|r| r.run.as_str()).collect::<Vec<_>>().join(" vs ")
        )
    } else {
        format!("perflab report: {}", runs.first().map(|r| r.plan.as_str()).unwrap_or(""))
    };
    Ok(ReportModel {
        schema: 1,
        title: redact(&title),
        runs,
        swept,
        variant_parameters,
        points,
        scaling,
        comparisons,
        findings,
        failed,
        notes,
        charted,
    })
}

fn trial_series(l: &Loaded, several_runs: bool, runs: &[RunFacts]) -> TrialSeries {
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for s in &l.samples {
        for (k, v) in &s.values {
            if key_system_metric(k) {
                series.entry(k.clone()).or_default().push((s.t_s, *v));
            }
        }
    }
    let name = if several_runs {
        format!("{} trial {} ({})", runs[l.run].run, l.trial.id, l.point_label)
    } else {
        format!("trial {} ({})", l.trial.id, l.point_label)
    };
    TrialSeries {
        name,
        phases: l.trial.phases.clone(),
        series,
    }
}

fn point_report(label: &str, group: &[&Loaded], nruns: usize, stop_reason: Option<String>, label_runs: bool) -> PointReport {
    let ok: Vec<&&Loaded> = group.iter().filter(|l| l.trial.ok()).collect();
    // Metrics across repetitions.
    let mut names: BTreeMap<String, (String, Better)> = BTreeMap::new();
    for l in &ok {
        for m in &l.trial.metrics {
            names.entry(m.name.clone()).or_insert((m.unit.clone(), m.better));
        }
    }
    let mut metrics = Vec::new();
    for (name, (unit, better)) in names {
        let vals: Vec<f64> = ok.iter().filter_map(|l| l.trial.metric(&name)).collect();
        let Some(summary) = Summary::of(&vals) else {
            continue;
        };
        let between_run_cv_pct = if nruns > 1 && !label_runs {
            let means: Vec<f64> = (0..nruns)
                .filter_map(|r| {
                    let v: Vec<f64> = ok.iter().filter(|l| l.run == r).filter_map(|l| l.trial.metric(&name)).collect();
                    Summary::of(&v).map(|s| s.mean)
                })
                .collect();
            Summary::of(&means).and_then(|s| s.cv_pct)
        } else {
            None
        };
        metrics.push(MetricRow {
            name,
            unit,
            better,
            summary,
            between_run_cv_pct,
        });
    }
    // Latency percentiles from merged histograms (µs in the store, ms in the report).
    let mut by_name: BTreeMap<&str, Vec<&hdrhistogram::Histogram<u64>>> = BTreeMap::new();
    for l in &ok {
        for h in &l.trial.histograms {
            by_name.entry(h.name.as_str()).or_default().push(&h.hist);
        }
    }
    let ms = |us: f64| us / 1000.0;
    let latency = by_name
        .into_iter()
        .filter_map(|(name, hists)| {
            let merged = percentiles::merge(hists)?;
            let p = percentiles::of(&merged)?;
            Some(PercentileRow {
                spectrum: percentiles::spectrum(&merged).into_iter().map(|(x, v)| (x, ms(v))).collect(),
                histogram: name.to_string(),
                count: p.count,
                percentiles: p.values.iter().map(|q| (q.label.clone(), ms(q.value))).collect(),
                max_ms: ms(p.max),
                omitted: p.omitted,
            })
        })
        .collect();
    // System phases table.
    let mut sys_names: Vec<String> = Vec::new();
    for l in group {
        for s in &l.samples {
            for (k, _) in &s.values {
                if key_system_metric(k) && !sys_names.contains(k) {
                    sys_names.push(k.clone());
                }
            }
        }
    }
    sys_names.sort();
    let system = sys_names.iter().map(|m| phase_row(m, group)).collect();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for l in group {
        for (c, n) in &l.trial.errors {
            *errors.entry(c.clone()).or_default() += n;
        }
    }
    PointReport {
        label: redact(label),
        params: group[0].params.clone(),
        trials: group.len(),
        failed: group.len() - ok.len(),
        stop_reason,
        metrics,
        latency,
        system,
        errors: errors.into_iter().collect(),
    }
}
