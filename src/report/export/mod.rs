//! The report's file formats behind one trait: each format is an [`Exporter`] that turns the model,
//! its document and the charts into files. `report::Formats` picks exporters from one list by the
//! names `--format` takes; adding a format is a file here and an entry in that list.
//!
//! Every exporter implements the trait in its own file (`md`, `html`, `json`, `csv`, `png`); this module
//! only defines the trait and its input, so the formats depend on it and never the other way.

pub mod csv;
pub mod html;
pub mod json;
pub mod md;
pub mod png;

use crate::report::doc::Section;
use crate::report::model::ReportModel;
use std::path::Path;

/// What every exporter is given.
pub struct Input<'a> {
    pub model: &'a ReportModel,
    /// The document built from the model (the tables every format shows).
    pub doc: &'a [Section],
    /// The charts as (file name, SVG), in the order they were drawn.
    pub charts: &'a [(String, String)],
    /// The run directories the report is of.
    pub runs: &'a [&'a Path],
}

/// One output format of `perflab report`.
pub trait Exporter: Sync {
    /// The name `--format` takes, e.g. `md`.
    fn name(&self) -> &'static str;

    /// Other names `--format` accepts, e.g. `markdown`.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether the first of [`Exporter::files`] is a report file the command line names (`png`
    /// only writes files beside the reports).
    fn report_file(&self) -> bool {
        true
    }

    /// Whether the format is written when none is chosen (at the end of `perflab run`); `png`
    /// is written only when asked for.
    fn by_default(&self) -> bool {
        true
    }

    /// The files to write, as (path relative to the output directory, bytes). The first is the
    /// report file the command line names (if [`Exporter::report_file`]); the others go beside it
    /// (`charts/…`, `csv/…`).
    fn files(&self, input: &Input) -> anyhow::Result<Vec<(String, Vec<u8>)>>;
}

/// The chart files, under `charts/` (the Markdown and HTML reports refer to them there).
pub fn chart_files(input: &Input) -> Vec<(String, Vec<u8>)> {
    input
        .charts
        .iter()
        .map(|(name, svg)| (format!("charts/{name}"), svg.clone().into_bytes()))
        .collect()
}
