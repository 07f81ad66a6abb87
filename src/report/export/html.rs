//! `report.html`: one self-contained page (inline CSS and SVG, no scripts, no external resources).
//! Every text goes through [`escape`].

use super::{chart_files, Exporter, Input, Sink, Text};
use crate::report::chart_kit::caption_of;
use crate::report::doc::{Block, Section, Table};

pub struct Html;

impl Exporter for Html {
    fn name(&self) -> &'static str {
        "html"
    }

    fn write(&self, input: &Input, sink: &mut dyn Sink) -> anyhow::Result<()> {
        sink.file("report.html", &mut |w| write_page(w, &input.model.title, input.doc, input.charts))?;
        chart_files(input, sink)
    }
}

/// Escape for HTML text and attribute values.
pub fn escape(s: &str) -> String {
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

/// The page's style. The body's sections sit in a grid of columns at least 600 px wide (two on a
/// 1400 px screen): the first section (the summary) and any with a wide table span the page, the
/// others share a row, so that the summary and the tables after it fit the first screen.
const CSS: &str = "body{font-family:system-ui,sans-serif;margin:0.8em 1.6em;color:#222;max-width:1400px;\
font-size:14px;line-height:1.35}\
table{border-collapse:collapse;margin:0.3em 0 0.8em;font-size:13px;line-height:1.25}\
th,td{border:1px solid #ccc;padding:1px 6px;text-align:right;vertical-align:top}\
th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}\
p{margin:0.3em 0}h1{font-size:1.6em;margin:0 0 0.2em}\
h2{font-size:1.25em;border-bottom:2px solid #ddd;padding-bottom:2px;margin:0.8em 0 0.3em}\
main{display:grid;grid-template-columns:repeat(auto-fit,minmax(600px,1fr));column-gap:2em;align-items:start}\
main>section{min-width:0;overflow-x:auto}main>section.wide{grid-column:1/-1}\
figure{margin:0.6em 0}svg{max-width:100%;height:auto}\
nav.toc{font-size:13px;margin-bottom:0.3em}\
details{margin:0.6em 0}summary{font-weight:bold;cursor:pointer;font-size:1.1em}\
.answer{display:flex;gap:1em;align-items:flex-start}.answer>div{flex:1 1 auto;min-width:0;overflow-x:auto}\
.answer>figure{flex:0 0 460px;margin:0}.answer figcaption{font-size:12px}.answer table{margin-top:0}\
p.obs{margin:0.2em 0;font-size:14px}p.obs a{text-decoration:none}tr:target{background:#fff3b0}";

/// Tables wider than this many columns make their section span the page.
const NARROW_COLUMNS: usize = 9;

/// Does the section take the page's whole width: the first one, or one with a wide table?
fn wide(i: usize, s: &Section) -> bool {
    i == 0
        || s.blocks
            .iter()
            .any(|b| matches!(b, Block::Table(t) if t.header.len() > NARROW_COLUMNS))
}

/// The page: the document's sections with the charts inline, written straight to `w` (the page
/// is never held whole in memory).
pub fn write_page(w: &mut dyn std::io::Write, title: &str, doc: &[Section], charts: &[(String, String)]) -> std::io::Result<()> {
    let mut o = Text::new(w);
    o.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    o.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n");
    o.push_str(&format!(
        "<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        escape(title)
    ));
    o.push_str(&format!("<h1>{}</h1>\n", escape(title)));
    toc(&mut o, doc);
    o.push_str("<main>\n");
    let mut appendix = false;
    for (i, s) in doc.iter().enumerate() {
        if s.appendix && !appendix {
            appendix = true;
            o.push_str("</main>\n<h2 id=\"appendix\">Appendix</h2>\n");
        }
        if s.appendix {
            o.push_str(&format!(
                "<details id=\"{}\"><summary>{}</summary>\n",
                escape(&s.anchor()),
                escape(&s.title)
            ));
        } else {
            let class = if wide(i, s) { " class=\"wide\"" } else { "" };
            o.push_str(&format!(
                "<section{class}>\n<h2 id=\"{}\">{}</h2>\n",
                escape(&s.anchor()),
                escape(&s.title)
            ));
        }
        blocks(&mut o, s, doc, charts);
        o.push_str(if s.appendix { "</details>\n" } else { "</section>\n" });
    }
    if !appendix {
        o.push_str("</main>\n");
    }
    o.push_str("</body>\n</html>\n");
    o.finish()
}

/// A section's paragraphs, tables, charts and links.
fn blocks(o: &mut Text, s: &Section, doc: &[Section], charts: &[(String, String)]) {
    for b in &s.blocks {
        match b {
            Block::Para(p) => o.push_str(&format!("<p>{}</p>\n", escape(p))),
            Block::Chart(name) => {
                if let Some((_, svg)) = charts.iter().find(|(n, _)| n == name) {
                    figure(o, name, svg);
                }
            }
            Block::Table(t) => table(o, t, &[]),
            Block::Answer { table: t, row_ids, chart } => {
                o.push_str("<div class=\"answer\">\n<div>\n");
                table(o, t, row_ids);
                o.push_str("</div>\n");
                if let Some((name, svg)) = chart.as_ref().and_then(|c| charts.iter().find(|(n, _)| n == c)) {
                    figure(o, name, svg);
                }
                o.push_str("</div>\n");
            }
            Block::Linked { text, anchor } => o.push_str(&format!(
                "<p class=\"obs\">{} <a href=\"#{}\" title=\"the row it reads\">↗</a></p>\n",
                escape(text),
                escape(anchor)
            )),
            Block::Link { text, section } => match doc.iter().find(|s| s.title == *section) {
                Some(target) => o.push_str(&format!(
                    "<p>{} <a href=\"#{}\">{}</a></p>\n",
                    escape(text),
                    escape(&target.anchor()),
                    escape(&target.title)
                )),
                None => o.push_str(&format!("<p>{}</p>\n", escape(text))),
            },
        }
    }
}

/// The table of contents, one line: the body's sections, then the appendix.
fn toc(o: &mut Text, doc: &[Section]) {
    o.push_str("<nav class=\"toc\">Contents: ");
    let links: Vec<String> = doc
        .iter()
        .filter(|s| !s.appendix)
        .map(|s| format!("<a href=\"#{}\">{}</a>", escape(&s.anchor()), escape(&s.title)))
        .collect();
    o.push_str(&links.join(" · "));
    if doc.iter().any(|s| s.appendix) {
        o.push_str(" · <a href=\"#appendix\">Appendix</a>");
    }
    o.push_str("</nav>\n");
}

/// A chart inline. plotters escapes every text it draws; the XML prolog is stripped.
fn figure(o: &mut Text, name: &str, svg: &str) {
    let body = svg.trim_start_matches(|c| c != '<');
    let body = if body.starts_with("<?xml") {
        body.split_once("?>").map_or(body, |(_, rest)| rest.trim_start())
    } else {
        body
    };
    o.push_str(&format!("<figure class=\"chart\" id=\"{}\">\n", escape(name)));
    o.push_str(body);
    o.push_str(&format!(
        "\n<figcaption><b>{}</b>{}</figcaption></figure>\n",
        escape(name),
        caption_of(svg).map_or(String::new(), |c| format!(": {}", escape(&c)))
    ));
}

fn table(o: &mut Text, t: &Table, row_ids: &[String]) {
    o.push_str("<table>\n<thead><tr>");
    for h in &t.header {
        o.push_str(&format!("<th>{}</th>", escape(h)));
    }
    o.push_str("</tr></thead>\n<tbody>\n");
    for (i, r) in t.rows.iter().enumerate() {
        match row_ids.get(i) {
            Some(id) => o.push_str(&format!("<tr id=\"{}\">", escape(id))),
            None => o.push_str("<tr>"),
        }
        for c in r {
            o.push_str(&format!("<td>{}</td>", escape(c)));
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</tbody>\n</table>\n");
}
