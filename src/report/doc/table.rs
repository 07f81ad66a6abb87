//! The document's building blocks (sections of paragraphs, tables and charts) and the number
//! formatting every renderer shares.

pub use crate::report::fmt::{delta_pct, num, num_ci, param, pct_ci, sig2, CiCells, MIN_CI_N};
use crate::report::loaded::safe;

/// A figure, or "–" when there is none.
pub fn opt(v: Option<f64>) -> String {
    v.map_or("–".into(), num)
}

/// "1 trial", "3 trials".
pub fn trials(n: usize) -> String {
    match n {
        1 => "1 trial".into(),
        n => format!("{n} trials"),
    }
}

/// "name (unit)", or the bare name for a count without a unit.
pub fn with_unit(name: &str, unit: &str) -> String {
    if unit.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({})", safe(unit))
    }
}

pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

pub enum Block {
    Para(String),
    Table(Table),
    /// A chart file name under `charts/`.
    Chart(String),
    /// The answer: a table whose rows carry anchors (the observations link to them), with its
    /// chart beside it (HTML) or after it (Markdown, as an image link).
    Answer {
        table: Table,
        /// One anchor per row of `table`.
        row_ids: Vec<String>,
        chart: Option<String>,
    },
    /// A sentence that links to an anchor of the page (an answer row, a section).
    Linked {
        text: String,
        anchor: String,
    },
    /// A paragraph ending with a link to another section of the document, named by its title
    /// ("Every metric at every point: System per point").
    Link {
        text: String,
        section: String,
    },
}

pub struct Section {
    pub title: String,
    pub blocks: Vec<Block>,
    /// Details on demand: shown after the body, under "Appendix" (collapsed in HTML).
    pub appendix: bool,
}

impl Section {
    pub fn new(title: &str, blocks: Vec<Block>) -> Section {
        Section {
            title: title.into(),
            blocks,
            appendix: false,
        }
    }

    /// The same section, moved to the appendix.
    pub fn in_appendix(mut self) -> Section {
        self.appendix = true;
        self
    }

    /// The anchor of the section's heading (`#summary`, `#appendix-metrics-per-point`).
    pub fn anchor(&self) -> String {
        let mut slug = String::new();
        for c in self.title.chars() {
            if c.is_ascii_alphanumeric() {
                slug.push(c.to_ascii_lowercase());
            } else if !slug.ends_with('-') && !slug.is_empty() {
                slug.push('-');
            }
        }
        let slug = slug.trim_end_matches('-');
        if self.appendix {
            format!("appendix-{slug}")
        } else {
            slug.to_string()
        }
    }
}

/// A table block from a header and its rows.
pub fn table(header: &[&str], rows: Vec<Vec<String>>) -> Block {
    Block::Table(Table {
        header: header.iter().map(|s| s.to_string()).collect(),
        rows,
    })
}

/// The charts whose file name starts with `prefix`, in the order they were drawn.
pub fn chart_blocks(charts: &[(String, String)], prefix: &str) -> Vec<Block> {
    charts
        .iter()
        .filter(|(name, _)| name.starts_with(prefix))
        .map(|(name, _)| Block::Chart(name.clone()))
        .collect()
}

/// One row of a Baseline / Under load / Peak / Recovery table: the metric, its four phase figures,
/// its recovery time (None where the load did not move it) and whether it never came back.
pub type PhaseCells<'a> = (&'a str, [Option<f64>; 4], Option<f64>, bool);

/// The recovery-time cell: "0.25 s", "not back" (the load moved it and it never came back within
/// the recovery phase), or "–" (the load did not move it beyond its baseline's noise, or there was
/// no recovery phase).
pub fn recovery_cell(recovery_s: Option<f64>, never: bool) -> String {
    match (recovery_s, never) {
        (Some(s), _) => format!("{} s", num(s)),
        (None, true) => "not back".into(),
        (None, false) => "–".into(),
    }
}

/// What the recovery-time column means, said once under a system table.
pub const RECOVERY_NOTE: &str = "Recovery time = worst seconds after the load until back at the baseline \
     (within 10 %, or 3 sd of its samples), given only where the load moved the metric; \"not back\" = not within \
     the recovery phase.";

/// The Baseline / Under load / Peak / Recovery table of one point: per metric its four phase
/// figures and its recovery time (this machine's and every remote host's).
pub fn system_table<'a>(rows: impl Iterator<Item = PhaseCells<'a>>) -> Block {
    let rows = rows
        .map(|(metric, [baseline, under_load, peak, recovery], recovery_s, never)| {
            vec![
                metric.to_string(),
                opt(baseline),
                opt(under_load),
                opt(peak),
                opt(recovery),
                recovery_cell(recovery_s, never),
            ]
        })
        .collect();
    table(&["metric", "Baseline", "Under load", "Peak", "Recovery", "recovery time"], rows)
}
