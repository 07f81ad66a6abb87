//! Assembling the report model from stores: load the trials, find the swept and variant
//! parameters, then hand each section its data (points, scaling, comparisons, findings).

use super::compare::comparisons;
use super::findings;
use super::loaded::{key_system_metric, params_of, run_name, safe, Loaded};
use super::model::*;
use super::overview;
use super::phases::system_rows;
use super::points::{point_report, Pooling};
use super::scaling::scaling;
use super::spec::{Declared, ReportSpec};
use crate::analysis::table::SampleTable;
use crate::store::{Store, StoredRun, StoredTrial};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

/// How many trials get a time-series chart at most (the report stays readable and bounded).
pub const MAX_TRIAL_CHARTS: usize = 24;

/// Everything read from the run directories.
#[derive(Default)]
struct Runs {
    facts: Vec<RunFacts>,
    loaded: Vec<Loaded>,
    /// Point labels in plan order (with ` run=<dir>` when runs are compared).
    point_order: Vec<String>,
    stop_reasons: BTreeMap<String, Option<String>>,
    notes: Vec<String>,
    /// The probes of each trial of `loaded`, at the same index.
    probes: Vec<Vec<crate::store::ProbeRecord>>,
    /// The first run's `[report]` section.
    spec: Option<ReportSpec>,
    /// What the first run's plan declares about its variants.
    declared: Option<Declared>,
    /// Every run's thresholds, judged per point.
    thresholds: Vec<ThresholdRow>,
}

/// The label of a plan's one point when it has no parameters (its stored label is empty).
pub const ONLY_POINT: &str = "the only point";

/// Assemble the model from run directories. With `label_runs`, each run becomes a value of a
/// pseudo-parameter `run` (for `perflab compare`); otherwise runs of one plan are pooled.
pub fn build(dirs: &[&Path], label_runs: bool) -> anyhow::Result<ReportModel> {
    let mut r = Runs::default();
    for (ri, dir) in dirs.iter().enumerate() {
        load_run(&mut r, ri, dir, label_runs)?;
    }
    super::cost::add_to_trials(&mut r.loaded)?;
    if label_runs && same_run(dirs) {
        r.notes
            .push("the runs compared are one and the same run: every difference is zero by construction, so this compares nothing".into());
    }
    let spec = r.spec.take().unwrap_or_default();
    let declared = r.declared.take().unwrap_or_default();
    let shape = shape(&r.loaded, &spec, &declared, label_runs);
    let (swept, variant_parameters, compare) = (shape.x.clone(), shape.variants.clone(), shape.compare.clone());
    let pooling = Pooling {
        runs: dirs.len(),
        compared: label_runs,
    };
    let tp = dirs.first().and_then(|d| Store::primary_throughput_of(d));
    let mut points = Vec::new();
    let mut groups: Vec<(String, Vec<&Loaded>)> = Vec::new();
    for label in &r.point_order {
        let group: Vec<&Loaded> = r.loaded.iter().filter(|l| &l.point_label == label).collect();
        if group.is_empty() {
            continue;
        }
        let stop = r.stop_reasons.get(label).cloned().flatten();
        // One point's summaries at a time: the report's memory stays that of one point.
        let summaries = group.iter().map(|l| l.summaries()).collect::<anyhow::Result<Vec<_>>>()?;
        let mut point = point_report(label, &group, pooling, stop, system_rows(&summaries, &spec.system));
        point.headline = super::answer::headline_of(&point, tp.as_deref());
        groups.push((point.label.clone(), group));
        points.push(point);
    }
    let with_samples = groups.iter().filter(|(_, g)| g.iter().any(|l| l.sampled())).count();
    if with_samples > MAX_TRIAL_CHARTS {
        r.notes.push(format!(
            "time-series charts are drawn for the first {MAX_TRIAL_CHARTS} of {with_samples} points"
        ));
    }
    let charted = charted(&groups, &points, &r.facts)?;
    let seconds = super::seconds::build(&groups, &points, r.facts.len() > 1, MAX_TRIAL_CHARTS)?;
    let ncpu = r.facts.iter().map(|f| f.ncpu).max().unwrap_or(1);
    let mut scaling = swept.as_ref().and_then(|s| scaling(s, &variant_parameters, &points, ncpu));
    let comparisons = compare.as_deref().map_or_else(Vec::new, |c| {
        comparisons(
            c,
            spec.baseline.as_deref(),
            &variant_parameters,
            swept.as_deref(),
            &r.loaded,
            &points,
        )
    });
    let mut findings = findings::evaluate(&groups, &points, &r.facts, swept.as_deref(), &variant_parameters)?;
    let (hosts, host_series) = super::hosts::build(&host_inputs(dirs, &r.facts, &groups, label_runs, charted.len()), &mut findings)?;
    let mut charted = charted;
    charted.extend(
        host_series
            .into_iter()
            .map(|(name, phases, series)| TrialSeries { name, phases, series }),
    );
    let probes = super::probes::build(&r.point_order, &r.loaded, &r.probes);
    findings.extend(super::probes::findings(&probes));
    let diagnoses = super::diagnose::findings(&groups, &points, &findings, swept.as_deref(), &variant_parameters);
    findings.extend(diagnoses);
    crate::analysis::bottleneck::rank(&mut findings);
    if let Some(s) = scaling.as_mut() {
        super::diagnose::why_flat(s, &points, &variant_parameters, &findings);
    }
    let failed = failed_trials(&r.loaded, &r.facts);
    let overview = overview::build(&overview::Inputs {
        spec: &spec,
        compare: compare.as_deref(),
        x: swept.as_deref(),
        dimensions: &shape.dimensions,
        set_by_variant: &shape.set_by_variant,
        points: &points,
        groups: &groups,
        scaling: scaling.as_ref(),
        findings: &findings,
        thresholds: &r.thresholds,
        runs: &r.facts,
        notes: &r.notes,
    });
    let mut overview = overview;
    overview.warnings.extend(super::hosts::warnings(&hosts));
    let headlines: Vec<Option<&str>> = points.iter().map(|p| p.headline.as_deref()).collect();
    let profiles = super::profiles::build(&groups, &headlines, compare.as_deref(), overview.baseline.as_deref())?;
    super::profiles::quote_in_findings(&mut findings, &profiles);
    super::diagnose::flag_cells(&mut overview.answer, &findings);
    Ok(ReportModel {
        schema: SCHEMA,
        title: safe(&title(&r.facts, label_runs)),
        runs: r.facts,
        swept,
        variant_parameters,
        points,
        scaling,
        comparisons,
        findings,
        thresholds: r.thresholds,
        failed,
        notes: r.notes,
        spec,
        overview,
        charted,
        seconds,
        probes,
        experiments: Vec::new(),
        hosts,
        profiles,
    })
}

/// What the per-host parts need (`report/hosts.rs`).
fn host_inputs<'a>(
    dirs: &'a [&'a Path],
    facts: &[RunFacts],
    groups: &'a [(String, Vec<&'a Loaded>)],
    compare: bool,
    charted: usize,
) -> super::hosts::Inputs<'a> {
    let runs = facts
        .iter()
        .map(|f| super::hosts::RunMachine {
            run: f.run.clone(),
            hostname: f.host.clone(),
            kernel: f.kernel.clone(),
            ncpu: f.ncpu,
            mem_total_mb: f.mem_total_mb,
            perflab_version: f.perflab_version.clone(),
        })
        .collect();
    super::hosts::Inputs {
        dirs,
        runs,
        groups,
        compare,
        charted,
    }
}

/// Read one run directory into `r`: its facts, notes, points and trials.
fn load_run(r: &mut Runs, ri: usize, dir: &Path, label_runs: bool) -> anyhow::Result<()> {
    let store = Rc::new(Store::open(dir)?);
    let run = store.run()?;
    let name = run_name(dir);
    let trials = store.trials()?;
    let mut labels: BTreeMap<usize, String> = BTreeMap::new();
    for p in store.points()? {
        let label = if p.label.is_empty() { ONLY_POINT.to_string() } else { p.label };
        if !r.point_order.contains(&label) && !label_runs {
            r.point_order.push(label.clone());
        }
        r.stop_reasons.insert(label.clone(), p.stop_reason.clone());
        labels.insert(p.id, label);
    }
    for t in store.thresholds()? {
        let point = labels.get(&t.point).cloned().unwrap_or_else(|| format!("point {}", t.point));
        r.thresholds.push(ThresholdRow {
            expr: safe(&t.expr),
            point: safe(&if label_runs { format!("{point} run={name}") } else { point }),
            observed: t.observed,
            passed: t.passed,
            basis: t.basis.as_deref().map(safe),
        });
    }
    let mut facts = run_facts(&name, &run, &trials);
    let merged = store.merged()?;
    facts.partial = merged.as_ref().map(|m| m.partial.clone()).unwrap_or_default();
    facts.segments = merged.map(|m| {
        let each: Vec<String> = m.segments.iter().map(|s| format!("{} on {}", s.segment, s.hostname)).collect();
        if m.partial.is_empty() {
            format!("{} segments ({})", m.count, each.join(", "))
        } else {
            format!(
                "{} of {} segments ({}), PARTIAL: {}",
                m.segments.len(),
                m.count,
                each.join(", "),
                m.partial.join("; ")
            )
        }
    });
    r.facts.push(facts);
    if r.spec.is_none() {
        r.spec = Some(ReportSpec::from_plan(&run.plan_source));
        r.declared = Some(Declared::from_plan(&run.plan_source));
    }
    if ri > 0 && r.facts[0].plan != run.plan_name {
        r.notes.push(format!(
            "run {} has plan {:?}, not {:?}: {} anyway",
            name,
            run.plan_name,
            r.facts[0].plan,
            if label_runs { "compared" } else { "pooled" }
        ));
    }
    // What the run could not do (points or variants skipped here), once however many runs say it.
    for n in store.notes()? {
        if !r.notes.contains(&n) {
            r.notes.push(n);
        }
    }
    session_notes(r, &store, &trials, &name, label_runs)?;
    for t in trials {
        let sampled = store.has_phase_summaries(t.id, &t.phases)?;
        let mut params = params_of(&t.params_json);
        let mut label = labels.get(&t.point).cloned().unwrap_or_else(|| format!("point {}", t.point));
        if label_runs {
            params.insert("run".into(), Value::String(name.clone()));
            label = format!("{label} run={name}");
            if !r.point_order.contains(&label) {
                r.point_order.push(label.clone());
            }
        }
        r.probes.push(store.probes(t.id)?);
        r.loaded.push(Loaded {
            run: ri,
            point_label: label,
            params,
            trial: t,
            sampled,
            store: Rc::clone(&store),
        });
    }
    Ok(())
}

fn run_facts(name: &str, run: &StoredRun, trials: &[StoredTrial]) -> RunFacts {
    let ok = trials.iter().filter(|t| t.ok()).count();
    let limited = trials.iter().find(|t| t.limit_mechanism.is_some());
    RunFacts {
        run: name.to_string(),
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
        segments: None,
        partial: Vec::new(),
    }
}

/// The matrix as the report reads it.
struct Shape {
    /// The compared parameter: `run` for `perflab compare`, `[report] compare`, or `variant` when
    /// the plan has `[variant.<value>]` tables or a matrix parameter of that name; never another.
    compare: Option<String>,
    /// The x parameter: `[report] x`, or the numeric one with most values (never the compared one,
    /// nor one a variant sets).
    x: Option<String>,
    /// Every varying parameter but x and those a variant sets (the compared one included).
    variants: Vec<String>,
    /// `variants` without the compared one: the answer table's dimensions.
    dimensions: Vec<String>,
    /// The varying parameters a `[variant.<value>]` sets (`model = "event-loop"`).
    set_by_variant: Vec<String>,
}

/// Which parameters vary, and what each is to the report.
fn shape(loaded: &[Loaded], spec: &ReportSpec, declared: &Declared, label_runs: bool) -> Shape {
    let mut values: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for (k, v) in loaded.iter().flat_map(|l| &l.params) {
        let e = values.entry(k).or_default();
        if !e.contains(&v) {
            e.push(v);
        }
    }
    let varying: Vec<(&str, &Vec<&Value>)> = values.iter().map(|(k, v)| (*k, v)).filter(|(_, v)| v.len() >= 2).collect();
    let varies = |k: &str| varying.iter().any(|(n, _)| *n == k);
    let compare = if label_runs {
        Some("run".to_string())
    } else if let Some(c) = &spec.compare {
        varies(c).then(|| c.clone())
    } else {
        (varies("variant") || (declared.variant_tables && values.contains_key("variant"))).then(|| "variant".to_string())
    };
    let set_by_variant: Vec<String> = declared
        .variant_sets
        .iter()
        .filter(|k| compare.as_deref() == Some("variant") && varies(k))
        .cloned()
        .collect();
    let free = |k: &str| k != "run" && Some(k) != compare.as_deref() && !set_by_variant.iter().any(|s| s == k);
    let chosen = spec.x.as_deref().filter(|x| varies(x) && free(x));
    let x = chosen.map(String::from).or_else(|| {
        varying
            .iter()
            .filter(|(k, v)| free(k) && v.iter().all(|x| x.is_number()))
            .max_by_key(|(_, v)| v.len())
            .map(|(k, _)| k.to_string())
    });
    let variants: Vec<String> = varying
        .iter()
        .map(|(k, _)| k.to_string())
        .filter(|k| Some(k) != x.as_ref() && !set_by_variant.contains(k))
        .collect();
    let dimensions = variants.iter().filter(|k| Some(*k) != compare.as_ref()).cloned().collect();
    Shape {
        compare,
        x,
        variants,
        dimensions,
        set_by_variant,
    }
}

/// Do the directories name one run twice (`perflab compare RUN RUN`)?
fn same_run(dirs: &[&Path]) -> bool {
    let canon: Vec<_> = dirs.iter().map(|d| d.canonicalize().unwrap_or_else(|_| d.to_path_buf())).collect();
    canon.windows(2).any(|w| w[0] == w[1])
}

/// The trials that get a time-series chart: at each point (in point order, the first
/// `MAX_TRIAL_CHARTS` points with samples) its median repetition, by the point's headline
/// throughput where the trials have it (the lower middle of an even count), else its middle
/// repetition. Only these trials' samples are read.
fn charted(groups: &[(String, Vec<&Loaded>)], points: &[PointReport], runs: &[RunFacts]) -> anyhow::Result<Vec<TrialSeries>> {
    let mut out = Vec::new();
    for ((_, g), p) in groups.iter().zip(points) {
        let mut sampled: Vec<&Loaded> = g.iter().copied().filter(|l| l.sampled()).collect();
        if sampled.is_empty() {
            continue;
        }
        if out.len() == MAX_TRIAL_CHARTS {
            break;
        }
        let tp = p.headline.as_deref();
        let key = |l: &Loaded| tp.and_then(|m| l.trial.metric(m));
        if sampled.iter().all(|l| key(l).is_some()) {
            sampled.sort_by(|a, b| key(a).unwrap_or(0.0).total_cmp(&key(b).unwrap_or(0.0)));
        }
        let median = sampled[(sampled.len() - 1) / 2];
        out.push(trial_series(median, runs.len() > 1, runs, &median.sample_table()?));
    }
    Ok(out)
}

/// The key metrics of a trial's samples, read by column (the trial's other metrics are never
/// made into `(name, value)` pairs).
fn trial_series(l: &Loaded, several_runs: bool, runs: &[RunFacts], table: &SampleTable) -> TrialSeries {
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for (c, name) in table.names().iter().enumerate().filter(|(_, n)| key_system_metric(n)) {
        let points: Vec<(f64, f64)> = (0..table.len())
            .filter_map(|row| table.value(row, c).map(|v| (table.t_s(row), v)))
            .collect();
        if !points.is_empty() {
            series.insert(name.clone(), points);
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

fn failed_trials(loaded: &[Loaded], runs: &[RunFacts]) -> Vec<FailedTrial> {
    loaded
        .iter()
        .filter_map(|l| {
            l.trial.failure.as_ref().map(|f| FailedTrial {
                run: runs[l.run].run.clone(),
                trial: l.trial.id,
                point: l.point_label.clone(),
                reason: safe(&f.to_string()),
            })
        })
        .collect()
}

fn title(runs: &[RunFacts], label_runs: bool) -> String {
    if label_runs {
        let names: Vec<&str> = runs.iter().map(|r| r.run.as_str()).collect();
        format!("perflab compare: {}", names.join(" vs "))
    } else {
        format!("perflab report: {}", runs.first().map(|r| r.plan.as_str()).unwrap_or(""))
    }
}

/// How each database target of the run was connected to (TLS version and cipher, authentication),
/// from its trials' raw output, as notes of the Run section; runs compared with a different one
/// are flagged.
fn session_notes(r: &mut Runs, store: &Store, trials: &[StoredTrial], name: &str, label_runs: bool) -> anyhow::Result<()> {
    use crate::model::result::DB_SESSION_LINE as SESSION_LINE;
    let mut seen: Vec<String> = Vec::new();
    for t in trials {
        for line in store.raw_output(t.id)? {
            if line.starts_with(SESSION_LINE) && !seen.contains(&line) {
                seen.push(line);
            }
        }
    }
    for line in seen {
        let note = format!("run {name}: {line}");
        if label_runs {
            let target = line.rsplit_once(": ").map_or(line.as_str(), |(t, _)| t);
            let other = r
                .notes
                .iter()
                .find(|n| n.contains(&format!("{target}: ")) && !n.ends_with(line.rsplit_once(": ").map_or("", |(_, f)| f)))
                .cloned();
            if let Some(other) = other {
                r.notes
                    .push(format!("the runs connect to the database differently: {other}; {note}"));
            }
        }
        if !r.notes.contains(&note) {
            r.notes.push(note);
        }
    }
    Ok(())
}
