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

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1400px}\
table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:13px}\
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right;vertical-align:top}\
th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}\
h2{border-bottom:2px solid #ddd;padding-bottom:3px;margin-top:1.6em}\
figure{margin:1em 0}svg{max-width:100%;height:auto}\
h1{margin:0 0 0.3em}nav.toc{font-size:13px;margin-bottom:0.5em}\
details{margin:0.6em 0}summary{font-weight:bold;cursor:pointer;font-size:1.1em}\
.answer{display:flex;gap:1em;align-items:flex-start}.answer>div{flex:1 1 auto;min-width:0;overflow-x:auto}\
.answer>figure{flex:0 0 460px;margin:0}.answer figcaption{font-size:12px}.answer table{margin-top:0}\
p.obs{margin:0.2em 0;font-size:14px}p.obs a{text-decoration:none}tr:target{background:#fff3b0}";

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
    let mut appendix = false;
    for s in doc {
        if s.appendix && !appendix {
            appendix = true;
            o.push_str("<h2 id=\"appendix\">Appendix</h2>\n");
        }
        if s.appendix {
            o.push_str(&format!(
                "<details id=\"{}\"><summary>{}</summary>\n",
                escape(&s.anchor()),
                escape(&s.title)
            ));
        } else {
            o.push_str(&format!("<h2 id=\"{}\">{}</h2>\n", escape(&s.anchor()), escape(&s.title)));
        }
        for b in &s.blocks {
            match b {
                Block::Para(p) => o.push_str(&format!("<p>{}</p>\n", escape(p))),
                Block::Chart(name) => {
                    if let Some((_, svg)) = charts.iter().find(|(n, _)| n == name) {
                        figure(&mut o, name, svg);
                    }
                }
                Block::Table(t) => table(&mut o, t, &[]),
                Block::Answer { table: t, row_ids, chart } => {
                    o.push_str("<div class=\"answer\">\n<div>\n");
                    table(&mut o, t, row_ids);
                    o.push_str("</div>\n");
                    if let Some((name, svg)) = chart.as_ref().and_then(|c| charts.iter().find(|(n, _)| n == c)) {
                        figure(&mut o, name, svg);
                    }
                    o.push_str("</div>\n");
                }
                Block::Linked { text, anchor } => o.push_str(&format!(
                    "<p class=\"obs\">{} <a href=\"#{}\" title=\"the row it reads\">↗</a></p>\n",
                    escape(text),
                    escape(anchor)
                )),
            }
        }
        if s.appendix {
            o.push_str("</details>\n");
        }
    }
    o.push_str("</body>\n</html>\n");
    o.finish()
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
