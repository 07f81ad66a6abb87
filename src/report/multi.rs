//! Several experiments in one report: `perflab report RUN_A RUN_B ...` over runs of different plans
//! writes one document (the runs of one plan still pool into one experiment): first one summary
//! across them (what ran, how many warnings each, one optimization table with the experiment in its
//! first column), one system table of every experiment's busiest point, and each experiment's answer
//! (its summary's tables); each experiment's own sections follow in the appendix. report.json is a model whose `experiments` are the experiments' own models;
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

/// The combined model, its document and its charts. The body holds the summary across the
/// experiments, one system table of every experiment's busiest point, and per experiment its
/// answer (the tables of its own summary, and its probes); each experiment's own sections, its
/// summary first, are in the appendix, a link away.
pub fn build(groups: &[Experiment]) -> anyhow::Result<Built> {
    let mut parts = Vec::new();
    let mut answers: Vec<Section> = Vec::new();
    let mut appendix: Vec<Section> = Vec::new();
    let mut all_charts = Vec::new();
    for (i, (plan, dirs)) in groups.iter().enumerate() {
        let mut m = assemble::build(dirs, false)?;
        super::related::caveats(&mut m);
        let charts = charts::render(&mut m)?;
        let prefix = format!("e{}_", i + 1);
        let plan = safe(plan);
        let sections = doc::build(&m, &charts);
        answers.push(answer(&plan, &sections));
        for mut s in sections {
            s.title = format!("{plan}: {}", s.title);
            s.appendix = true;
            for b in &mut s.blocks {
                match b {
                    Block::Chart(name) => *name = format!("{prefix}{name}"),
                    Block::Answer { row_ids, chart, .. } => {
                        for id in row_ids.iter_mut() {
                            *id = format!("{prefix}{id}");
                        }
                        if let Some(name) = chart {
                            *name = format!("{prefix}{name}");
                        }
                    }
                    Block::Linked { anchor, .. } if anchor.starts_with("answer") => *anchor = format!("{prefix}{anchor}"),
                    Block::Linked { anchor, .. } => {
                        // A section of this experiment: its heading is prefixed with the plan.
                        let title = format!("{}: {}", plan, anchor.replace('-', " "));
                        *anchor = Section::new(&title, Vec::new()).anchor();
                    }
                    Block::Link { section, .. } => *section = format!("{plan}: {section}"),
                    _ => {}
                }
            }
            appendix.push(s);
        }
        all_charts.extend(charts.into_iter().map(|(n, svg)| (format!("{prefix}{n}"), svg)));
        parts.push(m);
    }
    let mut sections = vec![summary(&parts)];
    sections.extend(systems(&parts));
    sections.extend(answers);
    sections.extend(appendix);
    let model = shell(parts);
    Ok((model, sections, all_charts))
}

/// One experiment's answer in the body: the tables of its summary and of its probes, and a link to
/// its own sections.
fn answer(plan: &str, sections: &[Section]) -> Section {
    let tables = |title: &'static str| {
        sections
            .iter()
            .filter(move |s| s.title == title)
            .flat_map(|s| s.blocks.iter())
            .filter_map(|b| match b {
                Block::Table(t) => Some(table_of(t)),
                _ => None,
            })
    };
    let mut blocks = vec![Block::Link {
        text: "Its summary (what ran, the warnings, the findings), its system table and every figure:".into(),
        section: format!("{plan}: Summary"),
    }];
    blocks.extend(tables("Summary"));
    blocks.extend(tables(doc::OPTIMIZATION));
    blocks.extend(tables("Latency probes: idle vs under load"));
    Section::new(plan, blocks)
}

/// One table of every experiment's busiest point: CPU busy, memory used, and the disks, interfaces
/// and processes the load moved.
fn systems(parts: &[ReportModel]) -> Option<Section> {
    let mut rows = Vec::new();
    for m in parts {
        let Some((p, headline)) = doc::system_headline(m) else {
            continue;
        };
        for r in headline {
            let mut row = vec![plan_of(m), safe(&p.label), r.metric.clone()];
            row.extend([r.baseline, r.under_load, r.peak, r.recovery].map(doc::opt));
            row.push(doc::recovery_cell(r.recovery_s, r.never_recovered));
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let header = [
        "experiment",
        "point",
        "metric",
        "Baseline",
        "Under load",
        "Peak",
        "Recovery",
        "recovery time",
    ];
    Some(Section::new(
        "System under load, every experiment",
        vec![
            Block::Para(format!(
                "Each experiment at its busiest point: CPU busy and memory used, and the disks, interfaces and \
                 processes the load moved (each experiment's own system table, in the appendix, has every metric). \
                 Baseline = mean before the load, Under load = mean during it, Peak = its highest sample, Recovery = \
                 mean after it. {}",
                doc::RECOVERY_NOTE
            )),
            table(&header, rows),
        ],
    ))
}

/// The summary across the experiments.
fn summary(parts: &[ReportModel]) -> Section {
    let names: Vec<String> = parts.iter().map(plan_of).collect();
    let mut blocks = vec![Block::Para(format!(
        "{} experiments in one report, a section each: {}. Runs of one plan are pooled into its experiment; each \
         experiment's warnings are in its own summary.",
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
                m.overview.warnings.len().to_string(),
            ]
        })
        .collect();
    blocks.push(table(&["experiment", "runs", "trials", "compared", "x", "warnings"], rows));
    let mut rows = Vec::new();
    let mut cis = doc::CiCells::new();
    for m in parts {
        for mut r in doc::optimization_rows(m, &mut cis) {
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
        blocks.extend(cis.note().map(Block::Para));
    }
    Section::new("Summary", blocks)
}

fn table_of(t: &Table) -> Block {
    Block::Table(Table {
        header: t.header.clone(),
        rows: t.rows.clone(),
    })
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
        thresholds: Vec::new(),
        failed: parts.iter().flat_map(|m| m.failed.clone()).collect(),
        notes: parts.iter().flat_map(|m| m.notes.clone()).collect(),
        spec: Default::default(),
        overview: Default::default(),
        charted: Vec::new(),
        seconds: Vec::new(),
        probes: Vec::new(),
        hosts: Default::default(),
        profiles: Default::default(),
        experiments: parts,
    }
}
