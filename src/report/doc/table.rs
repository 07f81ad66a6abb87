//! The document's building blocks (sections of paragraphs, tables and charts) and the number
//! formatting every renderer shares.

use crate::report::loaded::safe;

/// Stable number formatting: 4 significant digits (no exponent), at most 3 decimals.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let a = v.abs();
    let decimals = if a >= 1000.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 10.0 {
        2
    } else {
        3
    };
    let s = format!("{v:.decimals$}");
    if s == "-0" || s.starts_with("-0.") && s.trim_start_matches("-0.").chars().all(|c| c == '0') {
        s.trim_start_matches('-').to_string()
    } else {
        s
    }
}

/// A parameter value (concurrency, cpus): whole numbers without decimals, others as `num`.
pub fn param(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        num(v)
    }
}

/// A figure, or "–" when there is none.
pub fn opt(v: Option<f64>) -> String {
    v.map_or("–".into(), num)
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
}

pub struct Section {
    pub title: String,
    pub blocks: Vec<Block>,
}

impl Section {
    pub fn new(title: &str, blocks: Vec<Block>) -> Section {
        Section {
            title: title.into(),
            blocks,
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
