//! The report a person reads in two minutes, on the demo's real run: the summary comes first (and
//! fills the first screen of report.html in headless Chromium at 1400×900), report.md's body stays
//! short, no table cell outside the appendix is long, and only the compared parameter (`model`, the
//! demo's `[report] compare`) makes comparisons.

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
    let bin = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success()));
    let Some(bin) = bin else {
        crate::common::skip_unless_required("the first-screen check: chromium is not installed (Debian package `chromium`)");
        return None;
    };
    // A copy of the page with a probe script (the report itself allows no script): it writes where
    // the summary's first table starts into the DOM that --dump-dom prints.
    let page = std::fs::read_to_string(html).unwrap();
    let page: String = page
        .lines()
        .filter(|l| !l.contains("Content-Security-Policy"))
        .collect::<Vec<_>>()
        .join("\n");
    let probe = "<script>const t=document.querySelector('#summary ~ .answer table, #summary ~ table');const r=t.getBoundingClientRect();\
                 const p=document.createElement('pre');p.id='probe';const v=[...t.rows].find(x=>x.innerText.includes('thread-per-connection'));\
                 p.textContent='TO'+'P='+r.top+'|'+(v?v.getBoundingClientRect().bottom:-1)+'|'+t.innerText;\
                 document.body.appendChild(p);</script></body>";
    let copy = tmp.join("probe.html");
    std::fs::write(&copy, page.replace("</body>", probe)).unwrap();
    let o = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-dev-shm-usage",
            "--window-size=1400,900",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", tmp.join("profile").display()))
        .arg(format!("file://{}", copy.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "chromium failed: {}", String::from_utf8_lossy(&o.stderr));
    let dom = String::from_utf8_lossy(&o.stdout).into_owned();
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

#[test]
fn a_run_compared_with_itself_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    crate::report_common::synthetic_run(&run);
    let out = tmp.path().join("cmp");
    let paths = perflab::report::write(&[&run, &run], &out, perflab::report::Formats::all(), true).unwrap();
    assert!(paths.summary.contains("one and the same run"), "{}", paths.summary);
}

/// A real run (exec `sh`, short phases) with a busy loop started before it and a point whose
/// command fails: the summary warns of the busy host and gives the failure's reason, on the
/// terminal too, and the failure is printed as it happens.
#[test]
fn a_busy_host_and_a_failed_trial_are_said_in_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("plan.toml");
    std::fs::write(
        &plan,
        "name = \"busy\"\nrepetitions = 1\n[workload]\ntype = \"exec\"\ncommand = [\"sh\", \"-c\", \"sleep 0.3; exit ${code}\"]\n\
         [matrix]\ncode = [0, 7]\n[phases]\nbaseline = \"1s\"\nwarmup = \"0s\"\nload = \"1s\"\nrecovery = \"0s\"\ninterval = \"200ms\"\n",
    )
    .unwrap();
    // The busy loop: the shell itself spins (no child of its own), so killing its PID stops it;
    // the guard kills it on every path out of this test, a panic included, and the loop ends by
    // itself after 20 s (SECONDS is the shell's own clock) if the guard never runs.
    struct Busy(std::process::Child);
    impl Drop for Busy {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let busy = Busy(
        Command::new("bash")
            .args(["-c", "while [ $SECONDS -lt 20 ]; do :; done"])
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    let o = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(tmp.path().join("runs"))
        .arg(&plan)
        .output()
        .unwrap();
    drop(busy);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "a failed trial: {stdout}{stderr}");
    assert!(stderr.contains("✗ trial") && stderr.contains("code=7"), "as it happens: {stderr}");
    assert!(
        stdout.contains("Failed: trial") && stdout.contains("code=7"),
        "at the end: {stdout}"
    );
    assert!(stdout.contains("The host was busy before the load"), "{stdout}");
    let run = std::fs::read_dir(tmp.path().join("runs")).unwrap().next().unwrap().unwrap().path();
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    let summary = &md[md.find("## Summary").unwrap()..md.find("## Run").unwrap()];
    assert!(
        summary.contains("Failed: trial") && summary.contains("The host was busy before the load"),
        "{summary}"
    );
}

/// Runs of two different plans in one report: a section per plan, one summary with an
/// experiments table and one optimization table across them; runs of one plan still pool.
#[test]
fn runs_of_different_plans_make_one_report_with_a_section_each() {
    use perflab::workload::{Better, Metric, WorkloadResult};
    let tmp = tempfile::tempdir().unwrap();
    let result = |rps: f64| WorkloadResult {
        metrics: vec![Metric::new("requests_per_s", "req/s", rps, Better::Higher)],
        ..Default::default()
    };
    let a1 = tmp.path().join("a1");
    let a2 = tmp.path().join("a2");
    let b = tmp.path().join("b");
    for (dir, base) in [(&a1, 100.0), (&a2, 104.0)] {
        crate::report_common::run_of_results_with_plan(
            dir,
            "tuning-a",
            "name = \"tuning-a\"\n[report]\ncompare = \"v\"\nbaseline = \"before\"\nmetrics = [\"requests_per_s\"]\n",
            "http",
            vec![
                (
                    "v=before",
                    r#"{"v":"before"}"#,
                    vec![result(base), result(base + 2.0), result(base + 1.0)],
                ),
                (
                    "v=after",
                    r#"{"v":"after"}"#,
                    vec![result(base * 2.0), result(base * 2.0 + 3.0), result(base * 2.0 + 1.0)],
                ),
            ],
        );
    }
    crate::report_common::run_of_results(
        &b,
        "tuning-b",
        "http",
        vec![
            ("c=1", r#"{"c":1}"#, vec![result(10.0), result(11.0)]),
            ("c=2", r#"{"c":2}"#, vec![result(20.0), result(21.0)]),
        ],
    );
    let out = tmp.path().join("out");
    let paths = perflab::report::write(&[&a1, &b, &a2], &out, perflab::report::Formats::all(), false).unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let summary = &md[md.find("## Summary").unwrap()..md.find("## tuning-a: Summary").expect("a section per plan")];
    assert!(summary.contains("2 experiments in one report"), "{summary}");
    assert!(
        summary.contains("| tuning-a | 2 | 12 ok / 0 failed |"),
        "the two runs of tuning-a pool: {summary}"
    );
    assert!(summary.contains("| tuning-b | 1 | 4 ok / 0 failed |"), "{summary}");
    assert!(summary.contains("| experiment | figure | variant | before | after |"), "{summary}");
    assert!(summary.contains("| tuning-a | requests/s (req/s) | v = after"), "{summary}");
    assert!(md.contains("## tuning-b: Summary"), "{md}");
    assert!(
        paths.summary.contains("2 experiments in one report"),
        "the terminal: {}",
        paths.summary
    );
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let exps = json["experiments"].as_array().unwrap();
    assert_eq!(exps.len(), 2);
    assert_eq!(exps[0]["runs"].as_array().unwrap().len(), 2);
    assert_eq!(json["runs"].as_array().unwrap().len(), 3);
    let csv = std::fs::read_to_string(out.join("report.csv")).unwrap();
    assert!(csv.contains("tuning-b: c=2,requests_per_s"), "{csv}");
}
