//! Reports: terminal, Markdown, HTML, JSON, CSV and SVG, from one or more run stores.
//!
//! `model::build` assembles a [`ReportModel`] (serialized as `report.json`); `doc::build` turns it
//! into sections of tables; `render` prints those as Markdown, HTML and terminal tables; `charts`
//! draws the SVGs. Output is deterministic: same store in, same bytes out.

mod assemble;
pub mod charts;
pub mod cli;
mod compare;
pub mod doc;
mod findings;
pub mod model;
mod phases;
pub mod render;
mod scaling;

pub use model::ReportModel;

/// `crate::store::redact`, made idempotent: the store already redacted what it kept, and redacting
/// `[redacted]` again would append a stray `]` each time.
pub fn safe(text: &str) -> String {
    let mut s = crate::store::redact(text);
    while s.contains("[redacted]]") {
        s = s.replace("[redacted]]", "[redacted]");
    }
    s
}

use anyhow::Context;
use std::path::{Path, PathBuf};

/// The output formats of `perflab report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Formats {
    pub md: bool,
    pub html: bool,
    pub json: bool,
    pub csv: bool,
}

impl Formats {
    pub fn all() -> Formats {
        Formats {
            md: true,
            html: true,
            json: true,
            csv: true,
        }
    }

    /// Parse "md,html,json,csv".
    pub fn parse(s: &str) -> anyhow::Result<Formats> {
        let mut f = Formats {
            md: false,
            html: false,
            json: false,
            csv: false,
        };
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "md" | "markdown" => f.md = true,
                "html" => f.html = true,
                "json" => f.json = true,
                "csv" => f.csv = true,
                other => {
                    return Err(crate::error::usage(format!(
                        "unknown report format {other:?} (expected md, html, json, csv)"
                    )))
                }
            }
        }
        Ok(f)
    }
}

/// Where the report files went.
#[derive(Clone, Debug, Default)]
pub struct ReportPaths {
    pub dir: PathBuf,
    pub markdown: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub charts: Vec<PathBuf>,
    /// The terminal summary (also printed by the CLI).
    pub summary: String,
}

/// Write every format of the report of one run into its directory (called at the end of `perflab run`).
pub fn write_report(dir: &Path) -> anyhow::Result<ReportPaths> {
    write(&[dir], dir, Formats::all(), false)
}

/// `write_report` for callers that only list the files (`perflab run` / `perflab demo`): the report
/// files written, Markdown first.
pub fn write_default(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let p = write_report(dir)?;
    Ok([p.markdown, p.html, p.json, p.csv].into_iter().flatten().collect())
}

/// Build the model of `dirs` and write the chosen formats into `out`. With `compare`, each run is
/// a variant (`run=<dir name>`) instead of being pooled.
pub fn write(dirs: &[&Path], out: &Path, formats: Formats, compare: bool) -> anyhow::Result<ReportPaths> {
    let model = model::build(dirs, compare)?;
    let charts = charts::render(&model)?;
    let doc = doc::build(&model, &charts);
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut paths = ReportPaths {
        dir: out.to_path_buf(),
        summary: render::terminal(&model.title, &doc),
        ..Default::default()
    };
    let put = |name: &str, text: &str| -> anyhow::Result<PathBuf> {
        let p = out.join(name);
        crate::util::fs::write_atomic(&p, text).with_context(|| format!("cannot write {}", p.display()))?;
        Ok(p)
    };
    if formats.md || formats.html {
        let cdir = out.join("charts");
        std::fs::create_dir_all(&cdir).with_context(|| format!("cannot create {}", cdir.display()))?;
        for (name, svg) in &charts {
            let p = cdir.join(name);
            crate::util::fs::write_atomic(&p, svg).with_context(|| format!("cannot write {}", p.display()))?;
            paths.charts.push(p);
        }
    }
    if formats.md {
        paths.markdown = Some(put("report.md", &render::markdown(&model.title, &doc))?);
    }
    if formats.html {
        paths.html = Some(put("report.html", &render::html_page(&model.title, &doc, &charts))?);
    }
    if formats.json {
        let mut text = serde_json::to_string_pretty(&model)?;
        text.push('\n');
        paths.json = Some(put("report.json", &safe(&text))?);
    }
    if formats.csv {
        paths.csv = Some(put("report.csv", &summary_csv(&model)?)?);
        if dirs.len() == 1 {
            let store = crate::store::Store::open(dirs[0])?;
            crate::store::export::to_csv(&store, &out.join("csv"))?;
        }
    }
    Ok(paths)
}

/// One row per point × metric: the same numbers as the metrics table.
fn summary_csv(m: &ReportModel) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "point", "metric", "unit", "n", "mean", "median", "sd", "min", "max", "ci95", "cv_pct",
    ])?;
    for p in &m.points {
        for r in &p.metrics {
            let s = &r.summary;
            let o = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
            w.write_record([
                safe(&p.label),
                r.name.clone(),
                r.unit.clone(),
                s.n.to_string(),
                s.mean.to_string(),
                s.median.to_string(),
                s.sd.to_string(),
                s.min.to_string(),
                s.max.to_string(),
                o(s.ci95),
                o(s.cv_pct),
            ])?;
        }
    }
    Ok(String::from_utf8(w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?)?)
}
