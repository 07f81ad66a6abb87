//! The report's figures against known answers on synthetic runs: pooling two runs (n = n1 + n2 and
//! the between-run CV), `perflab compare` of two runs, recovery time, every ± naming σ or the 95 %
//! CI, and charts with units, legends and named phases.

use crate::report_common;

use perflab::report::{write, Formats};
use report_common::{scale_metric, synthetic_run};
use std::path::Path;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&read(&p.join("report.json"))).unwrap()
}

/// Run a (as synthesised) and run b with requests_per_s 20 % higher everywhere.
fn two_runs(tmp: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let a = tmp.join("a");
    let b = tmp.join("b");
    synthetic_run(&a);
    synthetic_run(&b);
    scale_metric(&b, "requests_per_s", 1.2);
    (a, b)
}

#[test]
fn pooled_runs_count_n1_plus_n2_and_give_the_between_run_cv() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = two_runs(tmp.path());
    let single = tmp.path().join("single");
    write(&[&a], &single, Formats::all(), false).unwrap();
    let out = tmp.path().join("pooled");
    write(&[&a, &b], &out, Formats::all(), false).unwrap();
    let one = &json(&single)["points"][0]["metrics"][1];
    let m = &json(&out)["points"][0]["metrics"][1];
    assert_eq!(m["name"], "requests_per_s");
    assert_eq!(one["summary"]["n"], 3);
    assert_eq!(m["summary"]["n"], 6, "n = n1 + n2");
    let mean_a = one["summary"]["mean"].as_f64().unwrap();
    let pooled_mean = m["summary"]["mean"].as_f64().unwrap();
    assert!((pooled_mean - 1.1 * mean_a).abs() < 1e-9 * mean_a);
    // Per-run means m and 1.2 m: sd = 0.2 m / √2, mean 1.1 m, CV = 12.856 %.
    let want = 100.0 * (0.2 / 2f64.sqrt()) / 1.1;
    let cv = m["between_run_cv_pct"].as_f64().unwrap();
    assert!((cv - want).abs() < 1e-9, "between-run CV {cv} vs {want}");
    assert!(one["between_run_cv_pct"].is_null(), "one run has no between-run CV");
    let md = read(&out.join("report.md"));
    assert!(md.contains("| between-run CV |"));
    // 12.856 % to 2 significant digits.
    assert!(md.contains("| 13 % |"), "{md}");
    assert!(md.contains("2 runs are pooled"));
}

#[test]
fn compare_of_two_runs_finds_the_20_pct_improvement() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = two_runs(tmp.path());
    let o = assert_cmd::Command::cargo_bin("perflab")
        .unwrap()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let j = json(&b.join("compare"));
    let runs: Vec<_> = j["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["parameter"] == "run")
        .collect();
    // 6 matrix points × 1 metric, each run against the other at fixed variant and concurrency (the
    // other metric is the same constant in both runs: nothing to compare, so no row), and the
    // target's costs per request (its process tree was sampled), compared as any metric.
    let runs: Vec<_> = runs
        .into_iter()
        .filter(|c| !c["metric"].as_str().unwrap().starts_with("target_"))
        .collect();
    assert_eq!(runs.len(), 6);
    for c in runs {
        assert_eq!((c["a"].as_str(), c["b"].as_str()), (Some("a"), Some("b")));
        let kind = c["verdict"]["kind"].as_str().unwrap();
        if c["metric"] == "requests_per_s" {
            let d = c["delta_pct"].as_f64().unwrap();
            assert!((d - 20.0).abs() < 1e-6, "Δ {d}");
            assert_eq!(kind, "improved", "{c}");
            assert!(c["ci95_low_pct"].as_f64().unwrap() > 0.0);
        } else {
            assert_eq!(kind, "no_significant_difference", "{c}");
        }
    }
    assert!(read(&b.join("compare").join("report.md")).contains("run: a → b"));
}

#[test]
fn recovery_time_is_when_the_metric_is_back_within_10_pct_of_baseline() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    synthetic_run(&run);
    write(&[&run], &run, Formats::all(), false).unwrap();
    // Load ends at 16 s. CPU: baseline 10 %, 40 % at 16.5 s, 10.5 % (within 10 %) from 17.5 s on.
    // Memory: baseline 1010 MB, at most 1100 MB under load: the load never moved it out of its
    // baseline's band (10 %), so it has no recovery time.
    let sys = &json(&run)["points"][0]["system"];
    let row = |m: &str| sys.as_array().unwrap().iter().find(|r| r["metric"] == m).unwrap().clone();
    assert_eq!(row("cpu_busy_pct")["recovery_s"].as_f64(), Some(1.5));
    assert_eq!(row("cpu_busy_pct")["baseline"].as_f64(), Some(10.0));
    assert_eq!(row("cpu_busy_pct")["recovery"].as_f64(), Some((40.0 + 3.0 * 10.5) / 4.0));
    assert_eq!(row("mem_used_mb")["recovery_s"].as_f64(), None);
    assert_eq!(row("mem_used_mb")["never_recovered"].as_bool(), Some(false));
    let md = read(&run.join("report.md"));
    assert!(md.contains("| cpu_busy_pct | 10.00 |"));
    assert!(md.contains("| 17.88 | 1.500 s |"), "{md}");
    let mem = md.lines().find(|l| l.starts_with("| mem_used_mb |")).unwrap();
    assert!(mem.ends_with("| – |"), "no recovery time for memory the load did not move: {mem}");
}

#[test]
fn every_plus_minus_says_whether_it_is_sigma_or_a_95_pct_ci() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = two_runs(tmp.path());
    let out = tmp.path().join("pooled");
    write(&[&a, &b], &out, Formats::all(), false).unwrap();
    let md = read(&out.join("report.md"));
    let mut header: Vec<String> = Vec::new();
    let mut checked = 0;
    for line in md.lines() {
        if !line.starts_with('|') {
            header.clear();
            if line.contains('±') {
                assert!(line.contains("CI") || line.contains('σ'), "a ± without σ or CI: {line}");
            }
            continue;
        }
        let cells: Vec<String> = line.trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect();
        if header.is_empty() {
            header = cells;
            continue;
        }
        for (i, c) in cells.iter().enumerate() {
            if c.contains('±') {
                let h = header.get(i).map(String::as_str).unwrap_or("");
                assert!(h.contains("CI") || h.contains('σ'), "± in column {h:?}: {line}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 12, "the ± cells were found ({checked})");
    let svg = read(&out.join("charts").join("throughput.svg"));
    assert!(svg.contains("the band its 95 % CI"), "the caption says what the band is");
}

/// The text drawn in an SVG, one string per `<text>` element.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = t.split_once('>')?.1;
            Some(body.split("</text>").next()?.trim().to_string())
        })
        .collect()
}

#[test]
fn charts_have_units_legends_and_named_phases() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    synthetic_run(&run);
    write(&[&run], &run, Formats::all(), false).unwrap();
    let chart = |name: &str| read(&run.join("charts").join(name));
    let has = |name: &str, want: &[&str]| {
        let svg = chart(name);
        let t = texts(&svg);
        for w in want {
            assert!(t.iter().any(|x| x == w), "{name} lacks the text {w:?}: {t:?}");
        }
        svg
    };
    // The time series of a trial: one panel per resource with its unit, a legend, shaded and
    // named phases.
    let trial = has(
        "trial_00.svg",
        &[
            "seconds since trial start",
            "machine CPU busy (% of all CPUs)",
            "process CPU (% of one core)",
            "memory (MB)",
            "network (Mbit/s)",
            "cpu_busy_pct",
            "mem_used_mb",
            "net_lo_rx_mbitps",
            "baseline",
            "load",
            "recovery",
        ],
    );
    assert!(trial.contains("fill=\"#E67800\""), "the load phase is shaded");
    // Throughput against the parameter: the CI as a band, one line per variant, the legend titled with
    // the compared parameter.
    has(
        "throughput.svg",
        &[
            "requests/s (req/s)",
            "concurrency (one slot per value)",
            "1",
            "4",
            "16",
            "variant",
            "a",
            "b",
        ],
    );
    has(
        "latency_vs_parameter.svg",
        &[
            "latency (ms)",
            "concurrency (one slot per value)",
            "a p50 response time",
            "a p99 response time",
            "b p99 response time",
        ],
    );
    // The percentile spectrum: a log axis (decades 1, 10, 100, 1000), a line per point.
    let spectrum = has("latency_spectrum_00.svg", &["latency (ms)", "concurrency=1", "concurrency=16"]);
    let t = texts(&spectrum);
    assert!(t.iter().any(|x| x.contains("log scale")));
    for decade in ["1", "10", "100", "1000"] {
        assert!(
            t.iter().any(|x| x.trim_end_matches(".0") == decade),
            "log axis tick {decade}: {t:?}"
        );
    }
}

#[test]
fn too_few_samples_are_said_plainly() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = two_runs(tmp.path());
    // Keep 2 repetitions per point in each run: no verdict from 2 against 2.
    for dir in [&a, &b] {
        let db = rusqlite::Connection::open(dir.join(perflab::store::DB_FILE)).unwrap();
        for table in [
            "metric",
            "histogram",
            "sample_clock",
            "sample_series",
            "phase_summary",
            "phase",
            "series",
            "error",
            "raw_output",
        ] {
            db.execute(
                &format!("DELETE FROM {table} WHERE trial_id IN (SELECT id FROM trial WHERE repetition >= 3)"),
                [],
            )
            .unwrap();
        }
        db.execute("DELETE FROM trial WHERE repetition >= 3", []).unwrap();
    }
    let out = tmp.path().join("cmp");
    write(&[&a, &b], &out, Formats::all(), true).unwrap();
    let j = json(&out);
    let runs: Vec<_> = j["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["parameter"] == "run")
        .collect();
    // One metric per point, and the target's costs per request (also too few samples).
    let costs = runs.iter().filter(|c| c["metric"].as_str().unwrap().starts_with("target_")).count();
    assert_eq!(runs.len() - costs, 6);
    for c in runs {
        assert_eq!((c["n_a"].as_u64(), c["n_b"].as_u64()), (Some(2), Some(2)));
        assert_eq!(c["verdict"]["kind"], "too_few_samples", "{c}");
        assert_eq!(c["verdict"]["need"], 3);
    }
    let md = read(&out.join("report.md"));
    assert!(md.contains("too few samples (need ≥ 3)"), "{md}");
    assert!(md.contains("⚠ n < 3"));
}
