//! The HTML report loads in headless Chromium: the SVG charts are in the rendered DOM, the page
//! makes no network request and logs no console error. Needs `chromium` (.ci/packages.txt).

use crate::report_common;

use perflab::report::{write, Formats};
use std::process::Command;

/// The headless browser on PATH, if any (shared with the first-screen harness).
pub fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success()))
}

/// A headless Chromium command that makes no network request of its own, with its own profile.
pub fn headless(bin: &str, profile: &std::path::Path) -> Command {
    let mut c = Command::new(bin);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// The DOM of a copy of `html` (without its Content-Security-Policy, which allows no script) with
/// `script` (a `<script>…</script>`) added at the end of its body, as headless Chromium at
/// 1400×900 leaves it (`--dump-dom`); None (said, or failed under `PERFLAB_REQUIRE_ALL=1`) without
/// Chromium, `why` naming the check that needs it.
pub fn dom_with_script(html: &std::path::Path, tmp: &std::path::Path, script: &str, why: &str) -> Option<String> {
    let Some(bin) = chromium() else {
        crate::common::skip_unless_required(&format!("{why}: chromium is not installed (Debian package `chromium`)"));
        return None;
    };
    let page = std::fs::read_to_string(html).unwrap();
    let page: String = page
        .lines()
        .filter(|l| !l.contains("Content-Security-Policy"))
        .collect::<Vec<_>>()
        .join("\n");
    let copy = tmp.join("probe.html");
    std::fs::write(&copy, page.replace("</body>", &format!("{script}</body>"))).unwrap();
    let o = headless(bin, &tmp.join("profile"))
        .args(["--window-size=1400,900", "--dump-dom"])
        .arg(format!("file://{}", copy.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "chromium failed: {}", String::from_utf8_lossy(&o.stderr));
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn the_html_report_renders_in_headless_chromium() {
    let Some(bin) = chromium() else {
        // CI installs chromium from .ci/packages.txt.
        crate::common::skip_unless_required("chromium is not installed (Debian package `chromium`)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    report_common::synthetic_run(&run);
    let paths = write(&[&run], &run, Formats::all(), false).unwrap();
    let html = paths.file("html").unwrap();
    let url = format!("file://{}", html.display());

    let dom = headless(bin, &tmp.path().join("profile-dom"))
        .args(["--enable-logging=stderr", "--v=0", "--dump-dom", &url])
        .output()
        .unwrap();
    assert!(dom.status.success(), "chromium failed: {}", String::from_utf8_lossy(&dom.stderr));
    let text = String::from_utf8_lossy(&dom.stdout);
    assert!(text.contains("<summary>Comparison of variants</summary>"));
    let svgs = text.matches("<svg").count();
    assert!(svgs >= 4, "only {svgs} SVG charts in the rendered DOM");
    // The plan name is text in the DOM, never a script element.
    assert!(!text.contains("<script>alert(1)"));
    let log = String::from_utf8_lossy(&dom.stderr);
    for line in log.lines() {
        assert!(
            !(line.contains("CONSOLE") && (line.contains("rror") || line.contains("Uncaught"))),
            "console error: {line}"
        );
    }

    let shot = tmp.path().join("shot.png");
    let out = headless(bin, &tmp.path().join("profile-shot"))
        .arg(format!("--screenshot={}", shot.display()))
        .args(["--window-size=1280,2000", &url])
        .output()
        .unwrap();
    assert!(out.status.success(), "screenshot failed: {}", String::from_utf8_lossy(&out.stderr));
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    if let Some(keep) = std::env::var_os("PERFLAB_REPORT_SHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

/// The rows of a uPlot legend in a DOM dump: (label, value) of each series, x first.
pub fn legend_rows(dom: &str) -> Vec<(String, String)> {
    let legend = dom.split("u-legend").nth(1).unwrap_or("");
    let legend = legend.split("</table>").next().unwrap_or("");
    legend
        .split("<tr class=\"u-series")
        .skip(1)
        .map(|row| {
            let cell = |class: &str| {
                row.split(&format!("class=\"{class}\""))
                    .nth(1)
                    .and_then(|r| r.split_once('>'))
                    .map(|(_, r)| r.split('<').next().unwrap_or("").to_string())
                    .unwrap_or_default()
            };
            (cell("u-label"), cell("u-value"))
        })
        .collect()
}

/// Equal to the 4 significant digits the charts show.
pub fn same_to_4_digits(shown: &str, stored: f64) -> bool {
    shown
        .parse::<f64>()
        .is_ok_and(|v| (v - stored).abs() <= 5.0001e-4 * stored.abs().max(1e-12))
}

/// The report of a run of one point, repeated, in headless Chromium under the page's own policy:
/// the point's per-second panel is drawn by uPlot, a line per repetition and figure (throughput,
/// p50, p99: repetitions × 3, and the seconds), its legend at rest the last second's stored
/// series of each repetition; the policy refused nothing (no script, no request: it allows none
/// but the page's own scripts) and nothing logged an error.
pub fn per_second_panels_drawn(dir: &std::path::Path, tmp: &std::path::Path) {
    let Some(bin) = chromium() else {
        crate::common::skip_unless_required("the report's per-second panels: chromium is not installed (Debian package `chromium`)");
        return;
    };
    let html = dir.join("report.html");
    let o = headless(bin, &tmp.join("profile-seconds"))
        .args(["--enable-logging=stderr", "--v=0", "--window-size=1400,900", "--dump-dom"])
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "chromium failed: {}", String::from_utf8_lossy(&o.stderr));
    let dom = String::from_utf8_lossy(&o.stdout);
    for line in String::from_utf8_lossy(&o.stderr).lines() {
        assert!(
            !line.contains("Content Security Policy") && !line.contains("Refused to"),
            "the policy refused something: {line}"
        );
        assert!(
            !(line.contains("CONSOLE") && (line.contains("rror") || line.contains("Uncaught"))),
            "console error: {line}"
        );
    }
    for external in [r#"src="http"#, r#"href="http"#, r#"src="//"#] {
        assert!(!dom.contains(external), "nothing from elsewhere: {external}");
    }
    let trials = perflab::store::Store::open(dir).unwrap().trials().unwrap();
    let ok: Vec<_> = trials.iter().filter(|t| t.failure.is_none()).collect();
    let panel = dom.split("id=\"seconds-0-0\"").nth(1).expect("the point's per-second panel");
    let panel = panel.split("class=\"seconds\"").next().unwrap();
    assert!(panel.contains("<canvas"), "uPlot drew it: {panel}");
    let rows = legend_rows(panel);
    assert_eq!(rows.len(), ok.len() * 3 + 1, "a line per repetition and figure: {rows:?}");
    let x: f64 = rows[0].1.parse().unwrap_or_else(|_| panic!("the legend's second: {rows:?}"));
    for (k, t) in ok.iter().enumerate() {
        for (j, (name, what)) in [
            ("requests_per_s", "per s"),
            ("latency_p50_ms", "p50 ms"),
            ("latency_p99_ms", "p99 ms"),
        ]
        .into_iter()
        .enumerate()
        {
            let (label, shown) = &rows[1 + 3 * k + j];
            assert_eq!(label, &format!("#{} {what}", t.repetition), "{rows:?}");
            match t.series.iter().find(|p| p.name == name && p.t_s == x) {
                Some(p) => assert!(same_to_4_digits(shown, p.value), "{label} at {x} s: {shown} vs stored {}", p.value),
                None => assert_eq!(shown, "–", "{label}: no stored value at {x} s"),
            }
        }
    }
    assert!(
        ok.iter().any(|t| t.series.iter().any(|p| p.t_s == x && p.name == "latency_p50_ms")),
        "the legend's second has stored figures: {rows:?}"
    );
}
