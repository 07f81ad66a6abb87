//! Several experiments in one report: `perflab report RUN_A RUN_B ...` over runs of different plans
//! writes one document with a section per experiment (the runs of one plan still pool into one
//! experiment) and, first, one summary across them: what ran, each experiment's warnings, and one
//! optimization table (metric, variant, before, after, Δ %, 95 % CI, verdict) with the experiment
//! in its first column. report.json is a model whose `experiments` are the experiments' own models;
//! the charts of experiment i are `charts/e<i>_<name>.svg`.

use super::assemble;
use super::charts;
use super::doc::{self, Block, Section, Table};
use super::loaded::safe;
use super::model::{ReportModel, SCHEMA};
use crate::store::Store;
use std::path::Path;

/// A plan's name and its run directories.
pub type Experiment<'a> = (String, Vec<&'a Path>);

/// The combined model, its document, and the charts as (file name, SVG).
pub type Built = (ReportModel, Vec<Section>, Vec<(String, String)>);

/// The run directories grouped by plan name, in the order the plans first appear; None when they
/// are all of one plan (one experiment: the ordinary report).
pub fn experiments<'a>(dirs: &[&'a Path]) -> anyhow::Result<Option<Vec<Experiment<'a>>>> {
    let mut groups: Vec<Experiment> = Vec::new();
    for d in dirs {
        let plan = Store::open(d)?.run()?.plan_name;
        match groups.iter_mut().find(|(p, _)| *p == plan) {
            Some((_, g)) => g.push(d),
            None => groups.push((plan, vec![d])),
        }
    }
    Ok((groups.len() > 1).then_some(groups))
}

/// The combined model, its document and its charts.
pub fn build(groups: &[Experiment]) -> anyhow::Result<Built> {
    let mut parts = Vec::new();
    let mut body: Vec<Section> = Vec::new();
    let mut appendix: Vec<Section> = Vec::new();
    let mut all_charts = Vec::new();
    for (i, (plan, dirs)) in groups.iter().enumerate() {
        let mut m = assemble::build(dirs, false)?;
        super::related::caveats(&mut m);
        let charts = charts::render(&mut m)?;
        let prefix = format!("e{}_", i + 1);
        for mut s in doc::build(&m, &charts) {
            s.title = format!("{}: {}", safe(plan), s.title);
            for b in &mut s.blocks {
                if let Block::Chart(name) = b {
                    *name = format!("{prefix}{name}");
                }
            }
            if s.appendix {
                appendix.push(s);
            } else {
                body.push(s);
            }
        }
        all_charts.extend(charts.into_iter().map(|(n, svg)| (format!("{prefix}{n}"), svg)));
        parts.push(m);
    }
    let summary = summary(&parts);
    let model = shell(parts);
    let mut sections = vec![summary];
    sections.extend(body);
    sections.extend(appendix);
    Ok((model, sections, all_charts))
}

/// The summary across the experiments.
fn summary(parts: &[ReportModel]) -> Section {
    let names: Vec<String> = parts.iter().map(plan_of).collect();
    let mut blocks = vec![Block::Para(format!(
        "{} experiments in one report, a section each: {}. Runs of one plan are pooled into its experiment.",
        parts.len(),
        names.join(", ")
    ))];
    let rows = parts
        .iter()
        .map(|m| {
            let ok: usize = m.runs.iter().map(|r| r.trials_ok).sum();
            let failed: usize = m.runs.iter().map(|r| r.trials_failed).sum();
            vec![
                plan_of(m),
                m.runs.len().to_string(),
                format!("{ok} ok / {failed} failed"),
                safe(m.overview.compare.as_deref().unwrap_or("–")),
                safe(m.overview.x.as_deref().unwrap_or("–")),
            ]
        })
        .collect();
    blocks.push(table(&["experiment", "runs", "trials", "compared", "x"], rows));
    for m in parts {
        for w in &m.overview.warnings {
            blocks.push(Block::Para(format!("Warning ({}): {w}", plan_of(m))));
        }
    }
    let mut rows = Vec::new();
    for m in parts {
        for mut r in doc::optimization_rows(m) {
            r.insert(0, plan_of(m));
            rows.push(r);
        }
    }
    if !rows.is_empty() {
        let mut header = vec!["experiment"];
        header.extend(doc::OPTIMIZATION_HEADER);
        blocks.push(Block::Para(
            "Optimization summary across the experiments: in each, the other values of its compared parameter against its baseline, at its largest x.".into(),
        ));
        blocks.push(table(&header, rows));
    }
    Section::new("Summary", blocks)
}

fn table(header: &[&str], rows: Vec<Vec<String>>) -> Block {
    Block::Table(Table {
        header: header.iter().map(|s| s.to_string()).collect(),
        rows,
    })
}

fn plan_of(m: &ReportModel) -> String {
    safe(m.runs.first().map_or("", |r| r.plan.as_str()))
}

/// The model report.json holds: every run's facts and notes, the experiments' models.
fn shell(parts: Vec<ReportModel>) -> ReportModel {
    let names: Vec<String> = parts.iter().map(plan_of).collect();
    ReportModel {
        schema: SCHEMA,
        title: safe(&format!("perflab report: {}", names.join(" + "))),
        runs: parts.iter().flat_map(|m| m.runs.clone()).collect(),
        swept: None,
        variant_parameters: Vec::new(),
        points: Vec::new(),
        scaling: None,
        comparisons: Vec::new(),
        findings: Vec::new(),
        failed: parts.iter().flat_map(|m| m.failed.clone()).collect(),
        notes: parts.iter().flat_map(|m| m.notes.clone()).collect(),
        spec: Default::default(),
        overview: Default::default(),
        charted: Vec::new(),
        probes: Vec::new(),
        hosts: Default::default(),
        experiments: parts,
    }
}
