//! The terminal summary `perflab report` prints: the document's Summary section (its lines and
//! tables), the optimization summary and the one-line findings.

use super::doc::{Block, Section};
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};

/// The terminal summary: the Summary section (lines and tables) and the findings' lines.
pub fn summary(title: &str, doc: &[Section]) -> String {
    let mut o = format!("{title}\n");
    for s in doc
        .iter()
        .filter(|s| matches!(s.title.as_str(), "Summary" | super::doc::OPTIMIZATION | "Bottleneck findings"))
    {
        o.push_str(&format!("\n{}\n", s.title));
        for b in &s.blocks {
            if let Block::Para(p) = b {
                if s.title == "Summary" || !p.starts_with("A rule fires") {
                    o.push_str(&format!("{p}\n"));
                }
            }
            if let Block::Linked { text, .. } = b {
                o.push_str(&format!("{text}\n"));
            }
            if let Block::Link { text, section } = b {
                o.push_str(&format!("{text} {section} (in the report files)\n"));
            }
            let t = match b {
                Block::Table(t) | Block::Answer { table: t, .. } => Some(t),
                _ => None,
            };
            if let Some(t) = t {
                let mut tab = Table::new();
                tab.load_style(UTF8_FULL_CONDENSED)
                    .set_content_arrangement(ContentArrangement::Dynamic)
                    .set_width(160)
                    .set_header(t.header.clone());
                for r in &t.rows {
                    tab.add_row(r.clone());
                }
                o.push_str(&format!("{tab}\n"));
            }
        }
    }
    o
}
