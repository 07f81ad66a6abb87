//! The report model: everything the renderers print, assembled from one or more stores. It is
//! serialized as `report.json` (schema in docs/report-json.md), so JSON and tables hold the same
//! numbers. Rendering never computes; it only formats this model.

use super::safe as redact;
use super::stats::{welch, welch_ci, Summary, PERCENTILES};
use crate::store::{Store, StoredTrial};
use crate::workload::Better;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Clone, Debug, Serialize)]
pub struct RunFacts {
    pub run: String,
    pub plan: String,
    pub plan_file: String,
    pub host: String,
    pub kernel: String,
    pub ncpu: u32,
    pub mem_total_mb: f64,
    pub seed: u64,
    pub status: String,
    pub perflab_version: String,
    pub started_unix: f64,
    pub ended_unix: Option<f64>,
    pub planned_trials: usize,
    pub trials_ok: usize,
    pub trials_failed: usize,
    pub limit_mechanism: Option<String>,
    pub limit_proof: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct MetricRow {
    pub name: String,
    pub unit: String,
    pub better: Better,
    pub summary: Summary,
    /// CV (%) of the per-run means when several runs are pooled; None otherwise.
    pub between_run_cv_pct: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PercentileRow {
    pub histogram: String,
    /// Values in the merged histogram (all ok trials of the point).
    pub count: u64,
    /// (label, value in ms); only the percentiles the count supports.
    pub percentiles: Vec<(String, f64)>,
    pub max_ms: f64,
    /// Percentiles left out because the sample is too small, e.g. "p99.9 needs >= 1000 values".
    pub omitted: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PhaseRow {
    pub metric: String,
    pub baseline: Option<f64>,
    pub under_load: Option<f64>,
    pub peak: Option<f64>,
    pub recovery: Option<f64>,
    /// Worst (largest) seconds after the load ended until the metric was back within 10 % of its
    /// baseline, over the point's trials; None if it never came back or there is no recovery phase.
    pub recovery_s: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PointReport {
    pub label: String,
    pub params: BTreeMap<String, Value>,
    pub trials: usize,
    pub failed: usize,
    pub stop_reason: Option<String>,
    pub metrics: Vec<MetricRow>,
    pub latency: Vec<PercentileRow>,
    pub system: Vec<PhaseRow>,
    pub errors: Vec<(String, u64)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ScalingRow {
    pub variant: String,
    pub x: f64,
    pub n: usize,
    pub throughput: f64,
    pub ci95: Option<f64>,
    pub speedup: Option<f64>,
    pub efficiency: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Scaling {
    pub parameter: String,
    pub throughput_metric: String,
    pub unit: String,
    pub rows: Vec<ScalingRow>,
    /// Per variant: the x after which throughput gains < 5 % while latency grows.
    pub knees: Vec<(String, f64)>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    Improved,
    Regressed,
    NoSignificantDifference,
    Changed,
    TooFewSamples { need: usize },
}

impl Verdict {
    pub fn text(&self) -> String {
        match self {
            Verdict::Improved => "improved".into(),
            Verdict::Regressed => "regressed".into(),
            Verdict::NoSignificantDifference => "no significant difference".into(),
            Verdict::Changed => "changed (no better direction)".into(),
            Verdict::TooFewSamples { need } => format!("too few samples (need >= {need})"),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub parameter: String,
    pub a: String,
    pub b: String,
    /// The other parameters held fixed, e.g. "concurrency=10".
    pub at: String,
    pub metric: String,
    pub unit: String,
    pub n_a: usize,
    pub n_b: usize,
    pub mean_a: f64,
    pub mean_b: f64,
    pub delta_pct: Option<f64>,
    /// 95 % CI of the Δ % (Welch CI of the difference divided by mean a).
    pub ci95_low_pct: Option<f64>,
    pub ci95_high_pct: Option<f64>,
    pub test: String,
    pub p: Option<f64>,
    pub verdict: Verdict,
}

#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub resource: String,
    pub kind: String,
    pub severity: String,
    pub points: Vec<String>,
    pub evidence: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct FailedTrial {
    pub run: String,
    pub trial: usize,
    pub point: String,
    pub reason: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct ReportModel {
    pub schema: u32,
    pub title: String,
    pub runs: Vec<RunFacts>,
    pub swept: Option<String>,
    pub variant_parameters: Vec<String>,
    pub points: Vec<PointReport>,
    pub scaling: Option<Scaling>,
    pub comparisons: Vec<Comparison>,
    pub findings: Vec<Finding>,
    pub failed: Vec<FailedTrial>,
    pub notes: Vec<String>,
    /// Trial ids (run index, trial id, point label) that have a time-series chart.
    #[serde(skip)]
    pub charted: Vec<TrialSeries>,
}

/// The monitor samples of one trial, kept for its time-series chart (not in the JSON).
#[derive(Clone, Debug)]
pub struct TrialSeries {
    pub name: String,
    pub phases: Vec<(String, f64, f64)>,
    /// metric → (t_s, value)
    pub series: BTreeMap<String, Vec<(f64, f64)>>,
}

/// One trial with the run it came from and its parameters.
struct Loaded {
    run: usize,
    point_label: String,
    params: BTreeMap<String, Value>,
    trial: StoredTrial,
    samples: Vec<crate::store::TaggedSample>,
}

/// How many trials get a time-series chart at most (the report stays readable and bounded).
pub const MAX_TRIAL_CHARTS: usize = 24;

fn run_name(dir: &Path) -> String {
    dir.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string())
}

fn value_text(v: &Value) -> String {
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
            status: run.status.clone(),
            perflab_version: run.perflab_version.clone(),
            started_unix: run.started_unix,
            ended_unix: run.ended_unix,
            planned_trials: run.planned_trials,
            trials_ok: ok,
            trials_failed: trials.len() - ok,
            limit_mechanism: limited.and_then(|t| t.limit_mechanism.clone()),
            limit_proof: limited.and_then(|t| t.limit_proof.clone()),
        });
        if ri > 0 && !label_runs && runs[0].plan != run.plan_name {
            notes.push(format!(
                "run {} has plan {:?}, not {:?}: pooled anyway",
                name, run.plan_name, runs[0].plan
            ));
        }
        for t in trials {
            let samples = store.samples(t.id)?;
            let mut params = params_of(&t.params_json);
            let mut label = labels
                .get(&t.point)
                .cloned()
                .unwrap_or_else(|| format!("point {}", t.point));
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
    let varying: Vec<(&String, &Vec<Value>)> =
        values.iter().filter(|(_, v)| v.len() >= 2).collect();
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
    let mut charted = Vec::new();
    for label in &point_order {
        let group: Vec<&Loaded> = loaded.iter().filter(|l| &l.point_label == label).collect();
        if group.is_empty() {
            continue;
        }
        points.push(point_report(
            label,
            &group,
            dirs.len(),
            stop_reasons.get(label).cloned().flatten(),
            label_runs,
        ));
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

    let scaling = swept
        .as_ref()
        .and_then(|s| scaling(s, &variant_parameters, &points));
    let comparisons = comparisons(&variant_parameters, swept.as_deref(), &loaded);
    let findings = super::findings::evaluate(&points, &runs, swept.as_deref());
    let title = if label_runs {
        format!(
            "perflab compare: {}",
            runs.iter()
                .map(|r| r.run.as_str())
                .collect::<Vec<_>>()
                .join(" vs ")
        )
    } else {
        format!(
            "perflab report: {}",
            runs.first().map(|r| r.plan.as_str()).unwrap_or("")
        )
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
        format!(
            "{} trial {} ({})",
            runs[l.run].run, l.trial.id, l.point_label
        )
    } else {
        format!("trial {} ({})", l.trial.id, l.point_label)
    };
    TrialSeries {
        name,
        phases: l.trial.phases.clone(),
        series,
    }
}

fn point_report(
    label: &str,
    group: &[&Loaded],
    nruns: usize,
    stop_reason: Option<String>,
    label_runs: bool,
) -> PointReport {
    let ok: Vec<&&Loaded> = group.iter().filter(|l| l.trial.ok()).collect();
    // Metrics across repetitions.
    let mut names: BTreeMap<String, (String, Better)> = BTreeMap::new();
    for l in &ok {
        for m in &l.trial.metrics {
            names
                .entry(m.name.clone())
                .or_insert((m.unit.clone(), m.better));
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
                    let v: Vec<f64> = ok
                        .iter()
                        .filter(|l| l.run == r)
                        .filter_map(|l| l.trial.metric(&name))
                        .collect();
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
    // Latency percentiles from merged histograms.
    let mut merged: BTreeMap<String, hdrhistogram::Histogram<u64>> = BTreeMap::new();
    for l in &ok {
        for h in &l.trial.histograms {
            match merged.get_mut(&h.name) {
                Some(m) => {
                    let _ = m.add(&h.hist);
                }
                None => {
                    merged.insert(h.name.clone(), h.hist.clone());
                }
            }
        }
    }
    let latency = merged
        .iter()
        .filter(|(_, h)| !h.is_empty())
        .map(|(name, h)| {
            let count = h.len();
            let mut percentiles = Vec::new();
            let mut omitted = Vec::new();
            for (p, q, need) in PERCENTILES {
                if count >= need {
                    percentiles.push((p.to_string(), h.value_at_quantile(q) as f64 / 1000.0));
                } else {
                    omitted.push(format!("{p} needs >= {need} values"));
                }
            }
            PercentileRow {
                histogram: name.clone(),
                count,
                percentiles,
                max_ms: h.max() as f64 / 1000.0,
                omitted,
            }
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

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn phase_row(metric: &str, group: &[&Loaded]) -> PhaseRow {
    let mut by_phase: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut recovery_s: Option<f64> = None;
    let mut any_unrecovered = false;
    for l in group {
        let mut base = Vec::new();
        for s in &l.samples {
            if let Some((_, v)) = s.values.iter().find(|(k, _)| k == metric) {
                by_phase.entry(s.phase.as_str()).or_default().push(*v);
                if s.phase == "baseline" {
                    base.push(*v);
                }
            }
        }
        let load_end = l
            .trial
            .phases
            .iter()
            .filter(|p| p.0 == "load")
            .map(|p| p.2)
            .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
        if let (Some(b), Some(end)) = (mean(&base), load_end) {
            let back = l
                .samples
                .iter()
                .filter(|s| s.phase == "recovery")
                .filter_map(|s| {
                    s.values
                        .iter()
                        .find(|(k, _)| k == metric)
                        .map(|(_, v)| (s.t_s, *v))
                })
                .find(|(_, v)| (v - b).abs() <= 0.1 * b.abs().max(1e-9));
            match back {
                Some((t, _)) => {
                    let r = (t - end).max(0.0);
                    recovery_s = Some(recovery_s.map_or(r, |x| x.max(r)));
                }
                None => any_unrecovered = true,
            }
        }
    }
    let get = |p: &str| by_phase.get(p).cloned().unwrap_or_default();
    PhaseRow {
        metric: metric.to_string(),
        baseline: mean(&get("baseline")),
        under_load: mean(&get("load")),
        peak: get("load")
            .into_iter()
            .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b)))),
        recovery: mean(&get("recovery")),
        recovery_s: if any_unrecovered { None } else { recovery_s },
    }
}

/// The variant of a point: its variant parameters as "k=v k=v" (or "all").
pub fn variant_of(params: &BTreeMap<String, Value>, variant_params: &[String]) -> String {
    let parts: Vec<String> = variant_params
        .iter()
        .filter_map(|k| params.get(k).map(|v| format!("{k}={}", value_text(v))))
        .collect();
    if parts.is_empty() {
        "all".into()
    } else {
        redact(&parts.join(" "))
    }
}

fn pick_throughput(points: &[PointReport]) -> Option<(String, String)> {
    let mut best: Option<(String, String)> = None;
    for p in points {
        for m in &p.metrics {
            if m.better == Better::Higher && m.name.ends_with("_per_s") {
                if m.name == "requests_per_s" {
                    return Some((m.name.clone(), m.unit.clone()));
                }
                if best.is_none() {
                    best = Some((m.name.clone(), m.unit.clone()));
                }
            }
        }
    }
    best
}

fn scaling(swept: &str, variant_params: &[String], points: &[PointReport]) -> Option<Scaling> {
    let (metric, unit) = pick_throughput(points)?;
    let mut by_variant: BTreeMap<String, Vec<ScalingRow>> = BTreeMap::new();
    for p in points {
        let Some(x) = p.params.get(swept).and_then(|v| v.as_f64()) else {
            continue;
        };
        let Some(m) = p.metrics.iter().find(|m| m.name == metric) else {
            continue;
        };
        let lat = p
            .latency
            .iter()
            .find(|l| l.histogram == "latency")
            .or(p.latency.first());
        let pct = |name: &str| {
            lat.and_then(|l| {
                l.percentiles
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| *v)
            })
        };
        let variant = variant_of(&p.params, variant_params);
        by_variant
            .entry(variant.clone())
            .or_default()
            .push(ScalingRow {
                variant,
                x,
                n: m.summary.n,
                throughput: m.summary.mean,
                ci95: m.summary.ci95,
                speedup: None,
                efficiency: None,
                p50_ms: pct("p50"),
                p99_ms: pct("p99"),
            });
    }
    let mut rows = Vec::new();
    let mut knees = Vec::new();
    for (variant, mut v) in by_variant {
        v.sort_by(|a, b| a.x.total_cmp(&b.x));
        let (x0, t0) = (v[0].x, v[0].throughput);
        for r in &mut v {
            if t0 > 0.0 && x0 > 0.0 {
                let s = r.throughput / t0;
                r.speedup = Some(s);
                r.efficiency = Some(s / (r.x / x0));
            }
        }
        for w in v.windows(2) {
            let gain = if w[0].throughput > 0.0 {
                w[1].throughput / w[0].throughput - 1.0
            } else {
                0.0
            };
            let lat_grows = match (w[0].p50_ms, w[1].p50_ms) {
                (Some(a), Some(b)) => b > a,
                _ => true,
            };
            if gain < 0.05 && lat_grows {
                knees.push((variant.clone(), w[0].x));
                break;
            }
        }
        rows.extend(v);
    }
    Some(Scaling {
        parameter: swept.to_string(),
        throughput_metric: metric,
        unit,
        rows,
        knees,
    })
}

fn comparisons(
    variant_params: &[String],
    swept: Option<&str>,
    loaded: &[Loaded],
) -> Vec<Comparison> {
    let mut out = Vec::new();
    for vp in variant_params {
        // Group ok trials by the other parameters held fixed.
        let mut groups: BTreeMap<String, Vec<&Loaded>> = BTreeMap::new();
        for l in loaded.iter().filter(|l| l.trial.ok()) {
            let at: Vec<String> = l
                .params
                .iter()
                .filter(|(k, _)| {
                    *k != vp && (Some(k.as_str()) == swept || variant_params.contains(k))
                })
                .map(|(k, v)| format!("{k}={}", value_text(v)))
                .collect();
            groups.entry(redact(&at.join(" "))).or_default().push(l);
        }
        // Order groups by swept value numerically when possible.
        let mut keys: Vec<(f64, String)> = groups
            .iter()
            .map(|(k, g)| {
                let x = swept
                    .and_then(|s| g[0].params.get(s))
                    .and_then(|v| v.as_f64())
                    .unwrap_or(0.0);
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
                    metric_names
                        .entry(m.name.clone())
                        .or_insert((m.unit.clone(), m.better));
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
                    let (Some(sa), Some(sb)) =
                        (Summary::of(&sample(a_val)), Summary::of(&sample(b_val)))
                    else {
                        continue;
                    };
                    out.push(compare_one(
                        vp, a_val, b_val, &at, metric, unit, *better, &sa, &sb,
                    ));
                }
            }
        }
    }
    out
}

/// The number of repetitions a side needs for a comparison.
pub const MIN_SAMPLES: usize = 3;

#[allow(clippy::too_many_arguments)]
fn compare_one(
    vp: &str,
    a: &Value,
    b: &Value,
    at: &str,
    metric: &str,
    unit: &str,
    better: Better,
    sa: &Summary,
    sb: &Summary,
) -> Comparison {
    let delta_pct = (sa.mean != 0.0).then(|| 100.0 * (sb.mean - sa.mean) / sa.mean.abs());
    let mut c = Comparison {
        parameter: vp.to_string(),
        a: redact(&value_text(a)),
        b: redact(&value_text(b)),
        at: at.to_string(),
        metric: metric.to_string(),
        unit: unit.to_string(),
        n_a: sa.n,
        n_b: sb.n,
        mean_a: sa.mean,
        mean_b: sb.mean,
        delta_pct,
        ci95_low_pct: None,
        ci95_high_pct: None,
        test: "Welch's t".into(),
        p: None,
        verdict: Verdict::TooFewSamples { need: MIN_SAMPLES },
    };
    if sa.n < MIN_SAMPLES || sb.n < MIN_SAMPLES {
        return c;
    }
    let Some((_, df, p)) = welch(sa, sb) else {
        return c;
    };
    c.p = Some(p);
    if sa.mean != 0.0 {
        let (lo, hi) = welch_ci(sa, sb, df);
        c.ci95_low_pct = Some(100.0 * lo / sa.mean.abs());
        c.ci95_high_pct = Some(100.0 * hi / sa.mean.abs());
    }
    let up = sb.mean > sa.mean;
    c.verdict = if p >= 0.05 {
        Verdict::NoSignificantDifference
    } else {
        match better {
            Better::Higher if up => Verdict::Improved,
            Better::Higher => Verdict::Regressed,
            Better::Lower if up => Verdict::Regressed,
            Better::Lower => Verdict::Improved,
            Better::Neither => Verdict::Changed,
        }
    };
    c
}
