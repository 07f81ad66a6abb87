//! The report's file formats behind one trait: each format is an [`Exporter`] that turns the model,
//! its document and the charts into files. `report::Formats` picks exporters from one list by the
//! names `--format` takes; adding a format is a file here and an entry in that list.
//!
//! Every exporter implements the trait in its own file (`md`, `html`, `json`, `csv`, `png`); this module
//! only defines the trait, its input and where the files go ([`Sink`]), so the formats depend on it
//! and never the other way. Exporters write each file as they make it: the HTML page goes straight
//! to its file, each chart is written from the one copy of its SVG.

pub mod csv;
pub mod html;
pub mod html_seconds;
pub mod json;
pub mod md;
pub mod png;

use crate::report::doc::Section;
use crate::report::model::ReportModel;
use std::io::Write;
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

    /// Whether the first file [`Exporter::write`] writes is a report file the command line names (`png`
    /// only writes files beside the reports).
    fn report_file(&self) -> bool {
        true
    }

    /// Whether the format is written when none is chosen (at the end of `perflab run`); `png`
    /// is written only when asked for.
    fn by_default(&self) -> bool {
        true
    }

    /// Write this format's files into `sink`, each as it is made (nothing holds the whole
    /// report in memory). The first file is the report file the command line names (if
    /// [`Exporter::report_file`]); the others go beside it (`charts/…`, `csv/…`).
    fn write(&self, input: &Input, sink: &mut dyn Sink) -> anyhow::Result<()>;
}

/// Where the exporters' files go. Each file is written whole or not at all; a file beside the
/// reports that another format already wrote (`charts/…`) is written once.
pub trait Sink {
    /// Write the file `name` (relative to the output directory): `body` writes its bytes
    /// straight into it.
    fn file(&mut self, name: &str, body: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>) -> anyhow::Result<()>;
}

/// The chart files, under `charts/` (the Markdown and HTML reports refer to them there), each
/// written from the one SVG text the report keeps.
pub fn chart_files(input: &Input, sink: &mut dyn Sink) -> anyhow::Result<()> {
    for (name, svg) in input.charts {
        sink.file(&format!("charts/{name}"), &mut |w| w.write_all(svg.as_bytes()))?;
    }
    Ok(())
}

/// Text written straight to a file with `push_str`, as one would build a `String`: the first
/// write error is kept and returned by [`Text::finish`] (later writes are skipped).
pub struct Text<'a> {
    w: &'a mut dyn Write,
    err: Option<std::io::Error>,
}

impl<'a> Text<'a> {
    pub fn new(w: &'a mut dyn Write) -> Text<'a> {
        Text { w, err: None }
    }

    pub fn push_str(&mut self, s: &str) {
        if self.err.is_none() {
            if let Err(e) = self.w.write_all(s.as_bytes()) {
                self.err = Some(e);
            }
        }
    }

    /// The first write error, if any.
    pub fn finish(self) -> std::io::Result<()> {
        self.err.map_or(Ok(()), Err)
    }
}
