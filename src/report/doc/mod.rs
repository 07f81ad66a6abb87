//! The report as a neutral document (sections of paragraphs, tables and charts) built from the
//! model; Markdown, HTML and the terminal render this one document, so they show the same figures.
//!
//! One function per section (`summary`, `run`, `points`, `verdicts`); [`build`] is the list of them in
//! the order the report shows them.

mod hosts;
mod points;
mod probes;
mod profiles;
mod run;
mod summary;
mod system;
mod table;
mod verdicts;

pub use summary::{optimization_rows, OPTIMIZATION, OPTIMIZATION_HEADER};
pub use system::{headline as system_headline, ALL_POINTS};
pub use table::{delta_pct, num, num_ci, opt, param, recovery_cell, sig2, Block, CiCells, Section, Table, RECOVERY_NOTE};

use crate::report::model::ReportModel;

/// Build the document. `charts` are the chart files (name, SVG) in the order `charts::render`
/// made them; sections refer to them by name.
pub fn build(m: &ReportModel, charts: &[(String, String)]) -> Vec<Section> {
    // What the plan asks comes first: its probes (idle vs under load), then for a sweep without
    // probes or variants the scaling, otherwise the system under load (Baseline / Under load /
    // Peak / Recovery, what a before/after report shows under its answer); then the variants side
    // by side.
    let (system, scaling) = (system::summary(m), verdicts::scaling(m, charts));
    let sweep_first = m.scaling.is_some() && m.probes.is_empty() && m.overview.compare.is_none();
    let (first, second) = match sweep_first {
        true => (scaling, system),
        false => (system, scaling),
    };
    let mut sections: Vec<Section> = [
        Some(summary::summary(m, charts)),
        hosts::compared(m),
        probes::section(m),
        first,
        summary::cost(m),
        summary::optimization(m),
        second,
        verdicts::latency_charts(charts),
        Some(verdicts::findings(m)),
        profiles::section(m),
        Some(run::run_facts(m)),
        hosts::facts(m),
        Some(verdicts::comparison(m).in_appendix()),
        Some(points::metrics(m).in_appendix()),
        Some(points::latency(m, charts).in_appendix()),
        Some(system::all_points(m, charts).in_appendix()),
        probes::details(m, charts).map(Section::in_appendix),
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
    // The body first, then the appendix (a host's every-point table joins the appendix).
    sections.sort_by_key(|s| s.appendix);
    sections
}
