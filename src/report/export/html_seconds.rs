//! The HTML report's per-second panels: each point's repetitions overlaid (throughput per second,
//! p50 and p99), drawn by the live page's own chart functions (`assets/charts/charts.js`, with
//! uPlot) from the model's [`PointSeconds`], embedded as a JSON data block. The page's
//! Content-Security-Policy allows exactly these inline scripts, by their SHA-256; nothing else is
//! loosened, and nothing is fetched. A reader without scripts has the SVG charts.

use super::Text;
use crate::report::model::PointSeconds;
use crate::util::charts::{csp_hash, CHARTS_JS, UPLOT_CSS, UPLOT_JS};

/// What draws the panels once uPlot and the chart functions are in.
pub const INIT: &str = "perflabCharts.report();";

/// The page's policy without scripts.
const BASE_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/// The panels' own style: uPlot's, its legend without the report's table borders.
const STYLE: &str = ".seconds{margin:0.6em 0}.seconds h4{margin:0.4em 0 0.2em;font-size:1em}\
.seconds .u-legend th,.seconds .u-legend td{border:none;background:none;padding:0 4px}";

/// The inline scripts of a page with panels, in the order they are written.
pub fn scripts() -> [&'static str; 3] {
    [UPLOT_JS, CHARTS_JS, INIT]
}

/// The page's Content-Security-Policy: with panels, `script-src` lists the hashes of exactly the
/// scripts [`write_scripts`] writes.
pub fn csp(with_panels: bool) -> String {
    if !with_panels {
        return BASE_CSP.to_string();
    }
    let hashes: Vec<String> = scripts().iter().map(|s| csp_hash(s)).collect();
    format!("{BASE_CSP}; script-src {}", hashes.join(" "))
}

/// The style the panels add to the page's head.
pub fn style() -> String {
    format!("{UPLOT_CSS}{STYLE}")
}

/// The panels of one report's points (the `k`-th set on the page): a place for each, and their
/// data as JSON that no stored text can end early (`<`, `>` and `&` written as `\u003c`...).
pub fn write_panels(o: &mut Text, points: &[PointSeconds], k: usize) {
    if points.is_empty() {
        return;
    }
    o.push_str(&format!("<h3 id=\"per-second-{k}\">Per second, every repetition</h3>\n"));
    o.push_str(
        "<p>Each point's throughput per second (left axis) and p50 and p99 latency (ms, right axis) in each \
         repetition, as the workload measured them second by second (stored with the trial), over seconds since \
         the load phase began; the shading marks the first repetition's phases. Below it, this machine over \
         the first repetition (its monitor samples): CPU busy (% of all CPUs), perflab's and the target's CPU \
         (% of one core), memory used. The live page (<code>perflab run --live</code>, <code>perflab \
         watch</code>) draws the same charts. A legend gives the last figures, or those under the pointer.</p>\n",
    );
    for i in 0..points.len() {
        o.push_str(&format!("<div class=\"seconds\" id=\"seconds-{k}-{i}\"></div>\n"));
    }
    o.push_str(&format!(
        "<script type=\"application/json\" class=\"perflab-seconds\" data-at=\"seconds-{k}-\">{}</script>\n",
        json(points)
    ));
}

/// The points as the chart functions take them (`{"points": [...]}`), safe inside `<script>`.
pub fn json(points: &[PointSeconds]) -> String {
    let text = serde_json::json!({ "points": points }).to_string();
    text.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026")
}

/// uPlot, the chart functions and [`INIT`], each in its own inline script (at the end of the page).
pub fn write_scripts(o: &mut Text) {
    for s in scripts() {
        o.push_str("<script>");
        o.push_str(s);
        o.push_str("</script>\n");
    }
}
