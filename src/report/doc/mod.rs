//! The report as a neutral document (sections of paragraphs, tables and charts) built from the
//! model; Markdown, HTML and the terminal render this one document, so they show the same figures.
//!
//! One function per section (`run`, `points`, `verdicts`); [`build`] is the list of them in
//! the order the report shows them.

mod points;
mod probes;
mod run;
mod table;
mod verdicts;

pub use table::{num, opt, param, Block, Section, Table};

use crate::report::model::ReportModel;

/// Build the document. `charts` are the chart files (name, SVG) in the order `charts::render`
/// made them; sections refer to them by name.
pub fn build(m: &ReportModel, charts: &[(String, String)]) -> Vec<Section> {
    [
        Some(run::run_facts(m)),
        Some(points::metrics(m)),
        Some(points::latency(m, charts)),
        Some(points::system(m, charts)),
        probes::section(m, charts),
        verdicts::scaling(m, charts),
        Some(verdicts::comparison(m)),
        Some(verdicts::findings(m)),
        Some(run::failed_trials(m)),
    ]
    .into_iter()
    .flatten()
    .collect()
}
