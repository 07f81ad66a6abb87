//! `report.md`: the document as Markdown, charts linked from `charts/`. Every text goes through
//! [`md_cell`].

use super::{chart_files, Exporter, Input};
use crate::report::doc::{Block, Section, Table};

pub struct Markdown;

impl Exporter for Markdown {
    fn name(&self) -> &'static str {
        "md"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["markdown"]
    }

    fn files(&self, input: &Input) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
        let mut files = vec![("report.md".to_string(), markdown(&input.model.title, input.doc).into_bytes())];
        files.extend(chart_files(input));
        Ok(files)
    }
}

/// Escape for a Markdown table cell or paragraph (HTML is escaped too: Markdown renders raw HTML).
pub fn md_cell(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace('\n', " ")
}

/// The whole document as Markdown.
pub fn markdown(title: &str, doc: &[Section]) -> String {
    let mut o = format!("# {}\n\n", md_cell(title));
    o.push_str(&toc(doc));
    let mut appendix = false;
    for s in doc {
        if s.appendix && !appendix {
            appendix = true;
            o.push_str("## Appendix\n\nThe long tables: every figure at every point, the full comparison, the evidence.\n\n");
        }
        let level = if s.appendix { "###" } else { "##" };
        o.push_str(&format!("{level} {}\n\n", md_cell(&s.title)));
        for b in &s.blocks {
            match b {
                Block::Para(p) => o.push_str(&format!("{}\n\n", md_cell(p))),
                Block::Chart(name) => o.push_str(&format!("![{0}](charts/{0})\n\n", md_cell(name))),
                Block::Table(t) => table(&mut o, t),
            }
        }
    }
    o
}

/// The table of contents: the body's sections, then the appendix's.
fn toc(doc: &[Section]) -> String {
    let mut o = String::from("Contents: ");
    let body: Vec<String> = doc
        .iter()
        .filter(|s| !s.appendix)
        .map(|s| format!("[{}](#{})", md_cell(&s.title), s.anchor()))
        .collect();
    o.push_str(&body.join(" · "));
    if doc.iter().any(|s| s.appendix) {
        o.push_str(" · [Appendix](#appendix)");
    }
    o.push_str("\n\n");
    o
}

fn table(o: &mut String, t: &Table) {
    let row = |cells: &[String]| cells.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | ");
    o.push_str(&format!("| {} |\n", row(&t.header)));
    o.push_str(&format!("|{}\n", "---|".repeat(t.header.len())));
    for r in &t.rows {
        o.push_str(&format!("| {} |\n", row(r)));
    }
    o.push('\n');
}
