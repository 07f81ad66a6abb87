//! `report.md`: the document as Markdown, charts linked from `charts/`. Every text goes through
//! [`md_cell`].

use super::{chart_files, Exporter, Input, Sink};
use crate::report::chart_kit::caption_of;
use crate::report::doc::{Block, Section, Table};

pub struct Markdown;

impl Exporter for Markdown {
    fn name(&self) -> &'static str {
        "md"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["markdown"]
    }

    fn write(&self, input: &Input, sink: &mut dyn Sink) -> anyhow::Result<()> {
        let text = markdown(&input.model.title, input.doc, input.charts);
        sink.file("report.md", &mut |w| w.write_all(text.as_bytes()))?;
        drop(text);
        chart_files(input, sink)
    }
}

/// Escape for a Markdown table cell or paragraph, so that the text pastes as it reads: plain
/// symbols stay plain (`p99 < 5 ms`, `CPU >= 90 %`); only what Markdown would take for markup is
/// backslash-escaped: a `<` that could open an HTML tag, an `&` that could start an entity, a `|`,
/// a `>` at the start (a quote).
pub fn md_cell(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        match c {
            '<' if next.is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?')) => o.push_str("\\<"),
            '&' if next.is_some_and(|n| n.is_ascii_alphanumeric() || n == '#') => o.push_str("\\&"),
            '>' if o.trim().is_empty() => o.push_str("\\>"),
            '|' => o.push_str("\\|"),
            '\n' => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

/// The whole document as Markdown; each chart is followed by its caption.
pub fn markdown(title: &str, doc: &[Section], charts: &[(String, String)]) -> String {
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
                Block::Chart(name) => {
                    o.push_str(&format!("![{0}](charts/{0})\n\n", md_cell(name)));
                    let svg = charts.iter().find(|(n, _)| n == name).map(|(_, s)| s.as_str());
                    if let Some(c) = svg.and_then(caption_of) {
                        o.push_str(&format!("*{}*: {}\n\n", md_cell(name), md_cell(&c)));
                    }
                }
                Block::Table(t) => table(&mut o, t),
                Block::Answer { table: t, row_ids, chart } => {
                    anchored_table(&mut o, t, row_ids);
                    if let Some(name) = chart {
                        o.push_str(&format!("![{0}](charts/{0})\n\n", md_cell(name)));
                    }
                }
                Block::Linked { text, anchor } => {
                    o.push_str(&format!("{} [↗](#{})\n\n", md_cell(text), anchor_id(anchor)));
                }
                Block::Link { text, section } => match doc.iter().find(|s| s.title == *section) {
                    Some(target) => o.push_str(&format!("{} [{}](#{})\n\n", md_cell(text), md_cell(&target.title), target.anchor())),
                    None => o.push_str(&format!("{}\n\n", md_cell(text))),
                },
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

/// An anchor as written into the page: letters, digits and dashes only.
fn anchor_id(a: &str) -> String {
    a.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').collect()
}

/// A table whose rows start with an HTML anchor (`<a id="…"></a>`), so a link can point at a row.
fn anchored_table(o: &mut String, t: &Table, row_ids: &[String]) {
    let row = |cells: &[String]| cells.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | ");
    o.push_str(&format!("| {} |\n", row(&t.header)));
    o.push_str(&format!("|{}\n", "---|".repeat(t.header.len())));
    for (i, r) in t.rows.iter().enumerate() {
        let id = row_ids
            .get(i)
            .map_or(String::new(), |id| format!("<a id=\"{}\"></a>", anchor_id(id)));
        o.push_str(&format!("| {id}{} |\n", row(r)));
    }
    o.push('\n');
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
