//! The scripts that draw perflab's interactive charts, shared by the live page (`live/server.rs`)
//! and the HTML report (`report/export/html.rs`): uPlot (vendored in `assets/uplot/`) and
//! `assets/charts/charts.js`, whose functions draw a trial's per-second panel, this machine's
//! panel and the adaptive repetitions' confidence intervals from the same data in both.

/// uPlot 1.6.32 (MIT), minified.
pub const UPLOT_JS: &str = include_str!("../../assets/uplot/uPlot.iife.min.js");
/// uPlot's style sheet (every rule under `.uplot`).
pub const UPLOT_CSS: &str = include_str!("../../assets/uplot/uPlot.min.css");
/// perflab's chart functions (`perflabCharts.seconds`, `.host`, `.ci`, `.report`).
pub const CHARTS_JS: &str = include_str!("../../assets/charts/charts.js");

/// A Content-Security-Policy source allowing one inline script: `'sha256-BASE64'` of its text
/// exactly as written between `<script>` and `</script>`.
pub fn csp_hash(script: &str) -> String {
    use base64::Engine;
    let d = ring::digest::digest(&ring::digest::SHA256, script.as_bytes());
    format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(d.as_ref()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_script_hash_is_its_sha256_in_base64() {
        // `printf 'alert(1)' | openssl dgst -sha256 -binary | base64`
        assert_eq!(super::csp_hash("alert(1)"), "'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='");
    }
}
