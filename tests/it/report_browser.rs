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
