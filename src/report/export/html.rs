//! `report.html`: one self-contained page (inline CSS and SVG, no external resources). Every text
//! goes through [`escape`]. Its only scripts draw the per-second panels (`html_seconds`), which
//! its Content-Security-Policy allows by their hashes; a page without panels has none. A chart
//! that carries a script of its own (a flame graph's zoom and search) is drawn inline without it,
//! its caption linking to its file under `charts/`, where the script runs.

use super::html_seconds;
use super::{chart_files, Exporter, Input, Sink, Text};
use crate::report::chart_kit::caption_of;
use crate::report::doc::{Block, Section, Table};
use crate::report::model::{PointSeconds, ReportModel};
use std::borrow::Cow;

pub struct Html;

impl Exporter for Html {
    fn name(&self) -> &'static str {
        "html"
    }

    fn write(&self, input: &Input, sink: &mut dyn Sink) -> anyhow::Result<()> {
        let panels = panels_of(input.model);
        sink.file("report.html", &mut |w| {
            write_page(w, &input.model.title, input.doc, input.charts, &panels)
        })?;
        chart_files(input, sink)
    }
}

/// The per-second panels of the report's points: one set per plan (a report of several plans has
/// one per experiment, in the order of their sections).
fn panels_of(m: &ReportModel) -> Vec<&[PointSeconds]> {
    if m.experiments.is_empty() {
        vec![m.seconds.as_slice()]
    } else {
        m.experiments.iter().map(|e| e.seconds.as_slice()).collect()
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
/// others share a row, so that the summary and the tables after it fit the first screen. The
/// answer's chart sits right of its table, however narrow the table; the table's first column
/// (the figure, or what else names the row) keeps 7.5em, so that a name like "p99 response time
/// (ms)" takes two lines as the compared values beside it do, not three.
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
.answer{display:flex;gap:1em;align-items:flex-start}.answer>div{flex:0 1 auto;min-width:0;overflow-x:auto}\
.answer>figure{flex:0 0 460px;margin:0}.answer figcaption{font-size:12px}.answer table{margin-top:0}\
.answer td:first-child{min-width:7.5em}\
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
///
/// `panels`: the per-second panels of each plan's points, drawn in the appendix's section of every
/// point's system figures (one click away, never on the first screen).
pub fn write_page(
    w: &mut dyn std::io::Write,
    title: &str,
    doc: &[Section],
    charts: &[(String, String)],
    panels: &[&[PointSeconds]],
) -> std::io::Result<()> {
    let scripts = panels.iter().any(|p| !p.is_empty());
    let mut o = Text::new(w);
    o.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    o.push_str(&format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n",
        html_seconds::csp(scripts)
    ));
    o.push_str(&format!("<title>{}</title>\n<style>{CSS}</style>\n", escape(title)));
    if scripts {
        o.push_str(&format!("<style>{}</style>\n", html_seconds::style()));
    }
    o.push_str("</head>\n<body>\n");
    o.push_str(&format!("<h1>{}</h1>\n", escape(title)));
    toc(&mut o, doc);
    o.push_str("<main>\n");
    let mut appendix = false;
    let mut panel_set = 0;
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
        if s.appendix && s.title.ends_with(crate::report::doc::ALL_POINTS) {
            if let Some(p) = panels.get(panel_set) {
                html_seconds::write_panels(&mut o, p, panel_set);
            }
            panel_set += 1;
        }
        o.push_str(if s.appendix { "</details>\n" } else { "</section>\n" });
    }
    if !appendix {
        o.push_str("</main>\n");
    }
    if scripts {
        html_seconds::write_scripts(&mut o);
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
            Block::Table(t) => table(o, t, &[], false),
            Block::Answer { table: t, row_ids, chart } => {
                o.push_str("<div class=\"answer\">\n<div>\n");
                table(o, t, row_ids, true);
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

/// A chart inline. plotters escapes every text it draws; the XML prolog is stripped. A chart with
/// a script of its own (inferno's flame graphs: zoom and search) is drawn without it: this page's
/// policy would not run it, and it takes its SVG for the whole document; the caption links to the
/// chart's own file, where it runs (its frames' tooltips are SVG titles and work here too).
fn figure(o: &mut Text, name: &str, svg: &str) {
    let body = svg.trim_start_matches(|c| c != '<');
    let body = if body.starts_with("<?xml") {
        body.split_once("?>").map_or(body, |(_, rest)| rest.trim_start())
    } else {
        body
    };
    let static_copy = without_scripts(body);
    o.push_str(&format!("<figure class=\"chart\" id=\"{}\">\n", escape(name)));
    o.push_str(static_copy.as_deref().unwrap_or(body));
    let open = if static_copy.is_some() {
        format!("; <a href=\"charts/{}\">open it on its own</a> to zoom and search.", escape(name))
    } else {
        String::new()
    };
    o.push_str(&format!(
        "\n<figcaption><b>{}</b>{}{open}</figcaption></figure>\n",
        escape(name),
        caption_of(svg).map_or(String::new(), |c| format!(": {}", escape(&c)))
    ));
}

/// `cell` with its spaces inside parentheses made no-break: "15600 (+32 %, improved)" may break
/// before its parenthesis, where a narrow column puts the verdict under its figure, but not inside
/// it ("(+32 %," over "improved)").
fn unbroken_in_parentheses(cell: &str) -> String {
    let mut depth = 0usize;
    cell.chars()
        .map(|c| {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => {}
            }
            if c == ' ' && depth > 0 {
                '\u{a0}'
            } else {
                c
            }
        })
        .collect()
}

/// `svg` without its `<script>` elements and its root's `onload` handler, or None when it has no
/// script.
fn without_scripts(svg: &str) -> Option<String> {
    if !svg.contains("<script") {
        return None;
    }
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    while let Some(i) = rest.find("<script") {
        out.push_str(&rest[..i]);
        rest = rest[i..].find("</script>").map_or("", |j| &rest[i + j + "</script>".len()..]);
    }
    out.push_str(rest);
    if let Some(i) = out.find(" onload=\"") {
        let end = out[i + " onload=\"".len()..]
            .find('"')
            .map_or(out.len(), |j| i + " onload=\"".len() + j + 1);
        out.replace_range(i..end, "");
    }
    Some(out)
}

/// A table; `answer`: the answer's, whose cells break only outside their parentheses.
fn table(o: &mut Text, t: &Table, row_ids: &[String], answer: bool) {
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
            let c = if answer {
                Cow::Owned(unbroken_in_parentheses(c))
            } else {
                Cow::Borrowed(c.as_str())
            };
            o.push_str(&format!("<td>{}</td>", escape(&c)));
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</tbody>\n</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::TrialSeconds;

    fn page(panels: &[&[PointSeconds]]) -> String {
        let doc = [
            Section::new("Summary", vec![Block::Para("the answer".into())]),
            Section::new(crate::report::doc::ALL_POINTS, vec![]).in_appendix(),
        ];
        let mut out = Vec::new();
        write_page(&mut out, "t", &doc, &[], panels).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// What `write` puts on the page, as text.
    fn rendered(write: impl FnOnce(&mut Text)) -> String {
        let mut out = Vec::new();
        let mut o = Text::new(&mut out);
        write(&mut o);
        o.finish().unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The policy's `script-src` hashes and the inline scripts the page runs (not its JSON data).
    fn hashes_and_scripts(html: &str) -> (Vec<String>, Vec<String>) {
        let csp = html.split("content=\"").nth(1).unwrap().split('"').next().unwrap();
        let hashes = csp
            .split("; ")
            .find_map(|d| d.strip_prefix("script-src "))
            .map_or_else(Vec::new, |s| s.split(' ').map(str::to_string).collect());
        let scripts = html
            .split("<script>")
            .skip(1)
            .map(|s| s.split("</script>").next().unwrap().to_string())
            .collect();
        (hashes, scripts)
    }

    #[test]
    fn the_policy_allows_exactly_the_inline_scripts_written_and_no_stored_text_ends_the_data() {
        let point = PointSeconds {
            label: "path=</script><script>alert(1)</script>".into(),
            unit: "requests_per_s".into(),
            phases: vec![("load".into(), 0.0, 2.0)],
            host: None,
            trials: vec![TrialSeconds {
                name: "#1".into(),
                t: vec![0.0, 1.0],
                per_s: vec![Some(10.0), None],
                p50: None,
                p99: Some(vec![Some(1.5), Some(2.0)]),
            }],
        };
        let html = page(&[std::slice::from_ref(&point)]);
        let (hashes, scripts) = hashes_and_scripts(&html);
        assert_eq!(scripts.len(), 3, "uPlot, the chart functions and their call");
        let mut written: Vec<String> = scripts.iter().map(|s| crate::util::charts::csp_hash(s)).collect();
        let mut listed = hashes.clone();
        written.sort();
        listed.sort();
        assert_eq!(written, listed, "the policy lists the scripts written, and only them");
        let csp = html.split("content=\"").nth(1).unwrap().split('"').next().unwrap();
        assert!(
            csp.starts_with("default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-"),
            "{csp}"
        );
        assert!(!csp.contains("unsafe-eval") && !csp.contains("http"), "{csp}");
        // The data block: one, its text closed only by its own end tag.
        let data = html.split("<script type=\"application/json\"").nth(1).unwrap();
        let body = &data[data.find('>').unwrap() + 1..data.find("</script>").unwrap()];
        assert!(!body.contains('<') && body.contains("\\u003c/script\\u003e"), "{body}");
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["points"][0]["label"], point.label.as_str());
        assert_eq!(v["points"][0]["trials"][0]["per_s"], serde_json::json!([10.0, null]));
        // In the appendix's every-point section (a click away), after the first screen's summary.
        assert!(html.find("seconds-0-0").unwrap() > html.find("<details").unwrap());

        // Without panels: no script, the policy as strict as before.
        let none: &[PointSeconds] = &[];
        let html = page(&[none]);
        assert_eq!(hashes_and_scripts(&html), (vec![], vec![]));
        assert!(html.contains("content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\""));
        assert!(!html.contains("uplot") && !html.contains("perflab-seconds"));
    }

    #[test]
    fn an_answer_cell_breaks_before_its_parenthesis_never_inside_it_and_other_tables_as_written() {
        assert_eq!(
            unbroken_in_parentheses("15600 (+32 %, improved)"),
            "15600 (+32\u{a0}%,\u{a0}improved)"
        );
        assert_eq!(unbroken_in_parentheses("p99 request time (ms)"), "p99 request time (ms)");
        assert_eq!(unbroken_in_parentheses("a (b (c d) e) f"), "a (b\u{a0}(c\u{a0}d)\u{a0}e) f");
        assert_eq!(
            unbroken_in_parentheses("x) y z"),
            "x) y z",
            "a stray closing parenthesis opens nothing"
        );
        let t = Table {
            header: vec!["figure".into(), "c = 10".into()],
            rows: vec![vec!["requests/s (req/s)".into(), "13000 (-9.5 %, n.s.)".into()]],
        };
        for (answer, cell) in [(true, "13000 (-9.5\u{a0}%,\u{a0}n.s.)"), (false, "13000 (-9.5 %, n.s.)")] {
            let html = rendered(|o| table(o, &t, &[], answer));
            assert!(html.contains(&format!("<td>{cell}</td>")), "{html}");
        }
    }

    #[test]
    fn a_chart_with_its_own_script_is_drawn_without_it_and_links_to_its_file() {
        let flame = "<?xml version=\"1.0\"?><svg version=\"1.1\" onload=\"init(evt)\" width=\"10\"><title>on-CPU flame graph</title>\
                     <script type=\"text/ecmascript\"><![CDATA[function init(evt) {}]]></script><g id=\"frames\"><rect/></g></svg>";
        let html = rendered(|o| figure(o, "flame_00_on-cpu.svg", flame));
        assert!(
            !html.contains("<script") && !html.contains("onload") && !html.contains("init(evt)"),
            "{html}"
        );
        assert!(
            html.contains("<svg version=\"1.1\" width=\"10\">") && html.contains("<g id=\"frames\"><rect/></g></svg>"),
            "{html}"
        );
        assert!(
            html.contains("<b>flame_00_on-cpu.svg</b>: on-CPU flame graph; <a href=\"charts/flame_00_on-cpu.svg\">open it on its own</a>"),
            "{html}"
        );

        let plain = "<svg width=\"10\"><title>requests/s</title><rect/></svg>";
        let html = rendered(|o| figure(o, "answer.svg", plain));
        assert!(html.contains(plain) && !html.contains("<a href"), "{html}");
    }
}
