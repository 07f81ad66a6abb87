//! The report as a neutral document (sections of paragraphs, tables and charts) built from the
//! model; Markdown, HTML and the terminal render this one document, so they show the same figures.
//!
//! One function per section (`summary`, `run`, `points`, `verdicts`); [`build`] is the list of them in
//! the order the report shows them.

mod hosts;
mod points;
mod probes;
mod run;
mod summary;
mod table;
mod verdicts;

pub use summary::{optimization_rows, OPTIMIZATION_HEADER};
pub use table::{num, num_ci, opt, param, Block, Section, Table};

use crate::report::model::ReportModel;

/// Build the document. `charts` are the chart files (name, SVG) in the order `charts::render`
/// made them; sections refer to them by name.
pub fn build(m: &ReportModel, charts: &[(String, String)]) -> Vec<Section> {
    let mut sections: Vec<Section> = [
        Some(summary::summary(m, charts)),
        hosts::compared(m),
        Some(run::run_facts(m)),
        hosts::facts(m),
        verdicts::scaling(m, charts),
        verdicts::latency_charts(charts),
        Some(verdicts::findings(m)),
        points::system_summary(m),
        probes::section(m, charts),
        Some(verdicts::comparison(m).in_appendix()),
        Some(points::metrics(m).in_appendix()),
        Some(points::latency(m, charts).in_appendix()),
        Some(points::system(m, charts).in_appendix()),
        verdicts::findings_evidence(m).map(Section::in_appendix),
        Some(run::failed_trials(m).in_appendix()),
    ]
    .into_iter()
    .flatten()
    .collect();
    // Each remote host's tables and charts, after this machine's system summary.
    let at = match sections.iter().position(|s| s.title == "System under load") {
        Some(i) => i + 1,
        None => sections.iter().position(|s| s.appendix).unwrap_or(sections.len()),
    };
    sections.splice(at..at, hosts::per_host(m, charts));
    sections
}
