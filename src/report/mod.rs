//! Reports: terminal, Markdown, HTML, JSON, CSV and SVG, from one or more run stores.
//!
//! `assemble::build` makes a [`ReportModel`] (serialized as `report.json`) from the stores, with
//! one builder per part (`points`, `phases`, `scaling`, `compare`, `findings`) over the trials as
//! `loaded` keeps them; `charts` draws the SVGs; `doc::build` turns the model into sections of
//! tables, one function per section; each format of `export` writes that one document, and
//! `terminal` prints its summary. Output is deterministic: same store in, same bytes out.

mod answer;
mod assemble;
mod chart_kit;
pub mod charts;
pub mod cli;
mod compare;
mod cost;
mod diagnose;
pub mod doc;
pub mod export;
mod findings;
pub mod fmt;
pub mod hosts;
mod loaded;
pub mod model;
mod multi;
mod observe;
mod overview;
mod phases;
mod point_findings;
mod points;
mod probe_charts;
mod probes;
mod profiles;
mod related;
mod scaling;
mod seconds;
pub mod spec;
mod sweep_charts;
pub mod terminal;

pub use assemble::{build, MAX_TRIAL_CHARTS};
pub use loaded::safe;
pub use model::ReportModel;

use anyhow::Context;
use export::{csv::Csv, html::Html, json::Json, md::Markdown, png::Png, Exporter, Input, Sink};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Every format `perflab report` can write, in the order they are written and listed.
pub static EXPORTERS: [&dyn Exporter; 5] = [&Markdown, &Html, &Json, &Csv, &Png];

/// The output formats chosen: names of [`EXPORTERS`], in that list's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Formats(Vec<&'static str>);

impl Formats {
    /// Every format written by default (all but `png`).
    pub fn all() -> Formats {
        Formats(EXPORTERS.iter().filter(|e| e.by_default()).map(|e| e.name()).collect())
    }

    /// Parse "md,html,json,csv,png" (any order, any subset; `markdown` is `md`).
    pub fn parse(s: &str) -> anyhow::Result<Formats> {
        let mut chosen = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some(e) = EXPORTERS.iter().find(|e| e.name() == part || e.aliases().contains(&part)) else {
                let names: Vec<&str> = EXPORTERS.iter().map(|e| e.name()).collect();
                return Err(crate::error::usage(format!(
                    "unknown report format {part:?} (expected {})",
                    names.join(", ")
                )));
            };
            chosen.push(e.name());
        }
        Ok(Formats(EXPORTERS.iter().map(|e| e.name()).filter(|n| chosen.contains(n)).collect()))
    }

    /// The chosen exporters, in [`EXPORTERS`] order.
    pub fn exporters(&self) -> impl Iterator<Item = &'static dyn Exporter> + '_ {
        EXPORTERS.iter().copied().filter(|e| self.0.contains(&e.name()))
    }
}

/// Where the report files went.
#[derive(Clone, Debug, Default)]
pub struct ReportPaths {
    pub dir: PathBuf,
    /// (format, its report file), in [`EXPORTERS`] order.
    pub files: Vec<(&'static str, PathBuf)>,
    pub charts: Vec<PathBuf>,
    /// The terminal summary (also printed by the CLI).
    pub summary: String,
}

impl ReportPaths {
    /// The report file of a format (`md`, `html`, `json`, `csv`), if it was written.
    pub fn file(&self, format: &str) -> Option<&Path> {
        self.files.iter().find(|(f, _)| *f == format).map(|(_, p)| p.as_path())
    }
}

/// Write every format of the report of one run into its directory (called at the end of `perflab run`).
pub fn write_report(dir: &Path) -> anyhow::Result<ReportPaths> {
    write(&[dir], dir, Formats::all(), false)
}

/// `write_report` for callers that only list the files (`perflab run` / `perflab demo`): the report
/// files written, Markdown first.
pub fn write_default(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    Ok(write_report(dir)?.files.into_iter().map(|(_, p)| p).collect())
}

/// Build the model of `dirs` and write the chosen formats into `out`. With `compare`, each run is
/// a variant (`run=<dir name>`) instead of being pooled.
///
/// Runs of different plans (without `compare`) make one report with a section per plan
/// (`multi`).
pub fn write(dirs: &[&Path], out: &Path, formats: Formats, compare: bool) -> anyhow::Result<ReportPaths> {
    let experiments = if compare { None } else { multi::experiments(dirs)? };
    // Two runs compared must share something to compare (refused before anything is written).
    let related = match dirs {
        [a, b] if compare => Some(related::relate(a, b)?),
        _ => None,
    };
    let (model, doc, charts) = match experiments {
        Some(groups) => multi::build(&groups)?,
        None => {
            let mut model = assemble::build(dirs, compare)?;
            if let Some(r) = related {
                r.apply(&mut model)?;
            }
            related::caveats(&mut model);
            let charts = charts::render(&mut model)?;
            let doc = doc::build(&model, &charts);
            (model, doc, charts)
        }
    };
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let input = Input {
        model: &model,
        doc: &doc,
        charts: &charts,
        runs: dirs,
    };
    let mut paths = ReportPaths {
        dir: out.to_path_buf(),
        summary: terminal::summary(&model.title, &doc),
        ..Default::default()
    };
    let mut sink = Dir { out, written: Vec::new() };
    for e in formats.exporters() {
        let first = sink.written.len();
        e.write(&input, &mut sink)?;
        for (i, (name, p)) in sink.written[first..].iter().enumerate() {
            if i == 0 && e.report_file() {
                paths.files.push((e.name(), p.clone()));
            } else if name.starts_with("charts/") {
                paths.charts.push(p.clone());
            }
        }
    }
    Ok(paths)
}

/// The output directory as the exporters' [`Sink`]: every file written whole (under a temporary
/// name, then renamed), as the exporter makes it; a file beside the reports is written once.
struct Dir<'a> {
    out: &'a Path,
    /// (name, path) of each file written, in order.
    written: Vec<(String, PathBuf)>,
}

impl Sink for Dir<'_> {
    fn file(&mut self, name: &str, body: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>) -> anyhow::Result<()> {
        // Files beside the reports (charts/, csv/) that several formats share are written once.
        if self.written.iter().any(|(n, _)| n == name) {
            return Ok(());
        }
        let p = self.out.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        }
        // Whole or absent: a failed write (a full disk) leaves no empty or partial file behind.
        write_whole(&p, body).with_context(|| format!("cannot write {}", p.display()))?;
        self.written.push((name.to_string(), p));
        Ok(())
    }
}

/// `body`'s bytes into `path`, under a temporary name renamed into place once they are all written.
fn write_whole(path: &Path, body: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>) -> std::io::Result<()> {
    let mut f = crate::util::fs::AtomicFile::create(path)?;
    body(&mut f)?;
    f.commit()
}
