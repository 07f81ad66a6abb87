//! Markdown, HTML and terminal renderings of the document. Every text goes through one escaping
//! function per format (`md_cell`, `html`).

use super::doc::{Block, Section};

/// Escape for HTML text and attribute values.
pub fn html(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// Escape for a Markdown table cell or paragraph (HTML is escaped too: Markdown renders raw HTML).
pub fn md_cell(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace('\n', " ")
}

pub fn markdown(title: &str, doc: &[Section]) -> String {
    let mut o = format!("# {}\n\n", md_cell(title));
    for s in doc {
        o.push_str(&format!("## {}\n\n", md_cell(&s.title)));
        for b in &s.blocks {
            match b {
                Block::Para(p) => o.push_str(&format!("{}\n\n", md_cell(p))),
                Block::Chart(name) => o.push_str(&format!("![{0}](charts/{0})\n\n", md_cell(name))),
                Block::Table(t) => {
                    o.push_str(&format!(
                        "| {} |\n",
                        t.header.iter().map(|h| md_cell(h)).collect::<Vec<_>>().join(" | ")
                    ));
                    o.push_str(&format!("|{}\n", "---|".repeat(t.header.len())));
                    for r in &t.rows {
                        o.push_str(&format!("| {} |\n", r.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | ")));
                    }
                    o.push('\n');
                }
            }
        }
    }
    o
}

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1400px}\
table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:13px}\
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right;vertical-align:top}\
th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}\
h2{border-bottom:2px solid #ddd;padding-bottom:3px;margin-top:1.6em}\
figure{margin:1em 0}svg{max-width:100%;height:auto}";

/// One self-contained HTML file: inline CSS and inline SVG, no scripts, no external resources.
pub fn html_page(title: &str, doc: &[Section], charts: &[(String, String)]) -> String {
    let mut o = String::new();
    o.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    o.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n");
    o.push_str(&format!("<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n", html(title)));
    o.push_str(&format!("<h1>{}</h1>\n", html(title)));
    for s in doc {
        o.push_str(&format!("<h2>{}</h2>\n", html(&s.title)));
        for b in &s.blocks {
            match b {
                Block::Para(p) => o.push_str(&format!("<p>{}</p>\n", html(p))),
                Block::Chart(name) => {
                    if let Some((_, svg)) = charts.iter().find(|(n, _)| n == name) {
                        // plotters escapes every text it draws; strip the XML prolog for inline use.
                        let body = svg.trim_start_matches(|c| c != '<');
                        let body = if body.starts_with("<?xml") {
                            body.split_once("?>").map_or(body, |(_, rest)| rest.trim_start())
                        } else {
                            body
                        };
                        o.push_str(&format!(
                            "<figure class=\"chart\" id=\"{}\">\n{}\n<figcaption>{}</figcaption></figure>\n",
                            html(name),
                            body,
                            html(name)
                        ));
                    }
                }
                Block::Table(t) => {
                    o.push_str("<table>\n<thead><tr>");
                    for h in &t.header {
                        o.push_str(&format!("<th>{}</th>", html(h)));
                    }
                    o.push_str("</tr></thead>\n<tbody>\n");
                    for r in &t.rows {
                        o.push_str("<tr>");
                        for c in r {
                            o.push_str(&format!("<td>{}</td>", html(c)));
                        }
                        o.push_str("</tr>\n");
                    }
                    o.push_str("</tbody>\n</table>\n");
                }
            }
        }
    }
    o.push_str("</body>\n</html>\n");
    o
}

/// The terminal summary: the metrics, comparison and findings tables.
pub fn terminal(title: &str, doc: &[Section]) -> String {
    use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};
    let mut o = format!("{title}\n");
    for s in doc.iter().filter(|s| {
        matches!(
            s.title.as_str(),
            "Run" | "Metrics per point" | "Latency percentiles" | "Comparison of variants" | "Bottleneck findings"
        )
    }) {
        o.push_str(&format!("\n{}\n", s.title));
        for b in &s.blocks {
            if let Block::Table(t) = b {
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
