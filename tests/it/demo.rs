//! The report a person reads in two minutes, on the demo's real run (`perflab demo`, about a
//! minute: first in the suite's order, so that it runs beside the short tests rather than last):
//! the summary comes first (and fills the first screen of report.html in headless Chromium at
//! 1400×900), report.md's body stays short, no table cell outside the appendix is long, and only
//! the compared parameter (`model`, the demo's `[report] compare`) makes comparisons.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

/// Run `perflab demo` into `dir`; the run directory it made.
fn demo(dir: &Path) -> PathBuf {
    let o = Command::new(BIN)
        .args(["demo", "--quiet", "--runs-dir"])
        .arg(dir)
        .output()
        .expect("perflab demo");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("Summary"), "the terminal shows the summary: {stdout}");
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("report.md").is_file())
        .expect("the demo's run directory")
}

/// The top (px) of the summary's answer table in headless Chromium at 1400×900, the bottom of its
/// first thread-per-connection row (-1 without one), and its text;
/// None (said loudly) without Chromium.
fn first_screen(html: &Path, tmp: &Path) -> Option<(f64, f64, String)> {
    // A probe script (the report itself allows none): it writes where the summary's first table
    // starts into the DOM that --dump-dom prints.
    let probe = "<script>const t=document.querySelector('#summary ~ .answer table, #summary ~ table');const r=t.getBoundingClientRect();\
                 const p=document.createElement('pre');p.id='probe';const v=[...t.rows].find(x=>x.innerText.includes('thread-per-connection'));\
                 p.textContent='TO'+'P='+r.top+'|'+(v?v.getBoundingClientRect().bottom:-1)+'|'+t.innerText;\
                 document.body.appendChild(p);</script>";
    let dom = crate::report_browser::dom_with_script(html, tmp, probe, "the first-screen check")?;
    let probe = dom.split("TOP=").nth(1).expect("the probe ran").to_string();
    let mut parts = probe.splitn(3, '|');
    let (top, other, text) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
    eprintln!("the answer table starts at {top} px; the compared variant's first row ends at {other} px");
    Some((top.parse().unwrap(), other.parse().unwrap(), text.to_string()))
}

#[test]
fn the_demo_report_opens_with_its_summary_and_keeps_the_long_tables_in_the_appendix() {
    let tmp = tempfile::tempdir().unwrap();
    let run = demo(&tmp.path().join("runs"));
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    let (body, appendix) = md.split_once("\n## Appendix\n").expect("an appendix");
    assert!(!appendix.is_empty());
    let lines = body.lines().count();
    assert!(lines < 250, "report.md has {lines} lines before its appendix");
    assert!(body.find("## Summary") < body.find("## Run"), "the summary first");
    for line in body.lines().filter(|l| l.starts_with('|')) {
        for cell in line.split(" | ") {
            assert!(cell.chars().count() <= 300, "a cell of {} characters: {cell}", cell.chars().count());
        }
    }
    // The answer table: each model at each concurrency, the thread-per-connection row with Δ %.
    let summary = &body[body.find("## Summary").unwrap()..body.find("## Run").unwrap()];
    for head in [
        "concurrency = 2",
        "concurrency = 20",
        "requests/s (req/s)",
        "p50 response time (ms)",
        "p99 response time (ms)",
    ] {
        assert!(summary.contains(head), "the summary lacks {head}: {summary}");
    }
    assert!(
        summary.contains("| thread-per-connection |") && summary.contains(" %, "),
        "{summary}"
    );
    assert!(summary.contains("Optimization summary"), "{summary}");
    // Comparisons only along `compare`: never a size or a concurrency as variants.
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(run.join("report.json")).unwrap()).unwrap();
    let comparisons = json["comparisons"].as_array().unwrap();
    assert!(!comparisons.is_empty());
    for c in comparisons {
        assert_eq!(c["parameter"], "model", "{c}");
        assert_eq!(c["a"], "pool", "{c}");
    }
    assert_eq!(json["overview"]["compare"], "model");
    // The first screen of report.html holds the answer table.
    if let Some((top, other, text)) = first_screen(&run.join("report.html"), tmp.path()) {
        assert!(top + 100.0 < 900.0, "the answer table starts at {top} px");
        // Both variants' figures are on the first screen, not only the baseline's.
        assert!(other > 0.0 && other <= 900.0, "the compared variant's first row ends at {other} px");
        assert!(text.contains("concurrency = 2") && text.contains("thread-per-connection"), "{text}");
    }
    // The seed's shape on both first screens (report.md's first lines, report.html at 1400×900).
    let screens = tmp.path().join("first-screen");
    std::fs::create_dir_all(&screens).unwrap();
    crate::examples_first_screen::the_demo_shows_each_model_against_the_pool(&run, &screens);
}
