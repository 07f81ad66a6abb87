//! `perflab report` on a synthetic run: every section, determinism, escaping, redaction, and the
//! JSON holding the same numbers as the tables.

use crate::report_common;

use perflab::report::{
    doc::{num, num_ci, sig2, CiCells},
    write, Formats,
};
use report_common::{all_files, synthetic_run, SECRET, XSS};
use std::path::Path;

fn build(out_name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    synthetic_run(&run);
    let out = tmp.path().join(out_name);
    write(&[&run], &out, Formats::all(), false).unwrap();
    (tmp, out)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn the_report_has_every_section_and_chart() {
    let (_tmp, out) = build("out");
    let md = read(&out.join("report.md"));
    let html = read(&out.join("report.html"));
    for section in ["Summary", "Run", "Scaling", "Bottleneck findings", "System under load"] {
        assert!(md.contains(&format!("\n## {section}\n")), "md lacks {section}");
        assert!(html.contains(&format!(">{section}</h2>")), "html lacks {section}");
    }
    // The long tables are in the appendix: under its heading in Markdown, collapsed in HTML.
    let appendix = md.find("\n## Appendix\n").expect("an appendix");
    for section in [
        "Comparison of variants",
        "Metrics per point",
        "Latency percentiles",
        "System per point",
        "Failed trials",
    ] {
        let at = md
            .find(&format!("\n### {section}\n"))
            .unwrap_or_else(|| panic!("md lacks {section}"));
        assert!(at > appendix, "{section} is not in the appendix");
        assert!(html.contains(&format!("<summary>{section}</summary>")), "html lacks {section}");
    }
    assert!(md.find("\n## Summary\n") < md.find("\n## Run\n"), "the summary comes first");
    for chart in [
        "throughput.svg",
        "latency_vs_parameter.svg",
        "latency_spectrum_00.svg",
        "latency_spectrum_01.svg",
        "trial_00.svg",
    ] {
        assert!(out.join("charts").join(chart).is_file(), "missing chart {chart}");
        assert!(md.contains(&format!("charts/{chart}")));
    }
    // Self-contained: inline SVG, no external scripts or fonts.
    assert!(html.contains("<svg"));
    assert!(!html.contains("<script"));
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http") && !html.contains("@import"));
    // Variant b is 20 % faster with 3 repetitions at 2 % noise: a significant improvement.
    assert!(md.contains("improved"), "{md}");
    // The phases table and the knee (throughput flattens after concurrency 4).
    assert!(md.contains("| cpu_busy_pct |"));
    assert!(
        md.contains("Knee for variant=a: after concurrency = 4 throughput grows < 5 % while latency rises. Saturated there: cpu_busy_pct 100 ≥ 90 (R1 CPU saturated)"),
        "{md}"
    );
    // Unsupported percentiles are left out with a note (2000 values: p99.9 needs 1000 → kept).
    assert!(!md.contains("p99.9 needs"));
    // The failed trial and the errors above some concurrency.
    assert!(md.contains("target exited"));
    assert!(md.contains("errors appear from concurrency = 16"));
    assert!(out.join("report.csv").is_file());
    // No copy of the store beside the report (`perflab export` writes one).
    assert!(!out.join("csv").exists());
}

#[test]
fn two_builds_are_byte_identical() {
    let (_t1, a) = build("one");
    let (_t2, b) = build("two");
    let fa = all_files(&a);
    let fb = all_files(&b);
    assert_eq!(fa.len(), fb.len());
    for ((na, ca), (nb, cb)) in fa.iter().zip(&fb) {
        assert_eq!(na, nb);
        // The store export carries the run's own timestamps only; everything else must match.
        assert!(ca == cb, "{na} differs between two builds");
    }
}

#[test]
fn markup_is_escaped_and_credentials_never_appear() {
    let (_tmp, out) = build("out");
    for (name, bytes) in all_files(&out) {
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(SECRET), "{name} leaks the credential");
        assert!(!text.contains("[redacted]]"), "{name}: redaction applied twice");
        if name.ends_with(".html") || name.ends_with(".md") || name.ends_with(".svg") {
            assert!(!text.contains(XSS), "{name} has the raw plan name");
            assert!(!text.contains("<b>boom</b>"), "{name} has raw markup from an error");
        }
    }
    let html = read(&out.join("report.html"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("&lt;b&gt;boom&lt;/b&gt;"));
}

#[test]
fn json_numbers_equal_table_numbers() {
    let (_tmp, out) = build("out");
    let json: serde_json::Value = serde_json::from_str(&read(&out.join("report.json"))).unwrap();
    let md = read(&out.join("report.md"));
    let points = json["points"].as_array().unwrap();
    assert_eq!(points.len(), 6);
    let mut checked = 0;
    for p in points {
        let label = p["label"].as_str().unwrap();
        for m in p["metrics"].as_array().unwrap() {
            let s = &m["summary"];
            // The mean and median rounded to their CI, the sd to 2 significant digits, the CI
            // only where it means something (n ≥ 3, no wider than the mean).
            let (mean, ci, n) = (s["mean"].as_f64().unwrap(), s["ci95"].as_f64(), s["n"].as_u64().unwrap());
            let cells = [
                n.to_string(),
                num_ci(mean, ci),
                num_ci(s["median"].as_f64().unwrap(), ci),
                sig2(s["sd"].as_f64().unwrap()),
                num(s["min"].as_f64().unwrap()),
                num(s["max"].as_f64().unwrap()),
                CiCells::new().mean(mean, ci, n as usize),
            ];
            let row = format!(
                "| {} | {} ({}) | {} |",
                label,
                m["name"].as_str().unwrap(),
                m["unit"].as_str().unwrap(),
                cells.join(" | ")
            );
            assert!(md.contains(&row), "table row missing: {row}");
            checked += 1;
        }
        for l in p["latency"].as_array().unwrap() {
            let p99 = l["percentiles"].as_array().unwrap().iter().find(|x| x[0] == "p99").unwrap()[1]
                .as_f64()
                .unwrap();
            assert!(md.contains(&format!("| {} | latency | {} |", label, l["count"])));
            assert!(md.contains(&num(p99)));
        }
    }
    // 4 points × 3 metrics of the workload, and the target's 3 costs per request each (its
    // process tree was sampled).
    assert_eq!(checked, 24);
    // n is the ok repetitions: the failed trial is not counted.
    assert_eq!(points[5]["trials"], 4);
    assert_eq!(points[5]["failed"], 1);
}

#[test]
fn compare_treats_each_run_as_a_variant() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    synthetic_run(&a);
    synthetic_run(&b);
    let out = tmp.path().join("cmp");
    write(&[&a, &b], &out, Formats::all(), true).unwrap();
    let json: serde_json::Value = serde_json::from_str(&read(&out.join("report.json"))).unwrap();
    let cmps = json["comparisons"].as_array().unwrap();
    let same_run: Vec<_> = cmps.iter().filter(|c| c["parameter"] == "run").collect();
    assert!(!same_run.is_empty());
    // Identical runs: never "improved" or "regressed".
    for c in same_run {
        let kind = c["verdict"]["kind"].as_str().unwrap();
        assert!(kind == "no_significant_difference", "{c}");
    }
}

#[test]
fn bad_format_is_a_usage_error() {
    let err = Formats::parse("md,pdf").unwrap_err();
    assert_eq!(perflab::error::exit_code(&err), 2);
    assert!(err.to_string().contains("pdf"));
}

/// Writes a sample report to $PERFLAB_REPORT_SAMPLE (when set) for a human to look at.
#[test]
fn sample_for_humans() {
    if let Some(dir) = std::env::var_os("PERFLAB_REPORT_SAMPLE") {
        let dir = std::path::PathBuf::from(dir);
        let _ = std::fs::remove_dir_all(&dir);
        synthetic_run(&dir);
        write(&[&dir], &dir, Formats::all(), false).unwrap();
    }
}

#[test]
fn runs_of_one_plan_are_pooled() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    synthetic_run(&a);
    synthetic_run(&b);
    let out = tmp.path().join("pooled");
    write(&[&a, &b], &out, Formats::all(), false).unwrap();
    let json: serde_json::Value = serde_json::from_str(&read(&out.join("report.json"))).unwrap();
    let m = &json["points"][0]["metrics"][1];
    assert_eq!(m["name"], "requests_per_s");
    // n = n1 + n2, and identical runs have a between-run CV of 0.
    assert_eq!(m["summary"]["n"], 6);
    assert_eq!(m["between_run_cv_pct"].as_f64(), Some(0.0));
    assert!(read(&out.join("report.md")).contains("between-run CV"));
}

#[test]
fn an_empty_run_still_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("empty");
    let mut s = perflab::store::Store::create(&run).unwrap();
    s.write_run(&perflab::store::RunInfo {
        plan_name: "empty".into(),
        plan_file: "e.toml".into(),
        plan_source: String::new(),
        seed: 1,
        started_unix: 1.0,
        planned_trials: 3,
    })
    .unwrap();
    drop(s);
    let paths = perflab::report::write_report(&run).unwrap();
    let md = read(paths.file("md").unwrap());
    assert!(md.contains("0 ok / 0 failed (planned 3)"));
    assert!(md.contains("nothing is compared"), "the appendix says why nothing is compared");
}

#[test]
fn small_samples_are_flagged_and_unsupported_percentiles_left_out() {
    use perflab::model::TrialInfo;
    use perflab::store::{RunInfo, Store, TrialRecord};
    use perflab::workload::result::latency_histogram;
    use perflab::workload::{Better, Metric, NamedHistogram, WorkloadResult};
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("small");
    let mut s = Store::create(&run).unwrap();
    s.write_run(&RunInfo {
        plan_name: "small".into(),
        plan_file: "s.toml".into(),
        plan_source: String::new(),
        seed: 1,
        started_unix: 1.0,
        planned_trials: 2,
    })
    .unwrap();
    s.write_point(0, "concurrency=1", r#"{"concurrency":1}"#, 1, None).unwrap();
    let mut h = latency_histogram();
    for v in 1..=50u64 {
        h.record(v * 1000).unwrap();
    }
    s.write_trial(&TrialRecord {
        info: TrialInfo {
            id: 0,
            point: 0,
            repetition: 1,
            params_json: r#"{"concurrency":1}"#.into(),
            workload: "http".into(),
            failure: None,
            started_unix: 1.0,
            ended_unix: 2.0,
            limit_mechanism: None,
            limit_proof: None,
            stdout_tail: None,
            stderr_tail: None,
            phases: vec![],
        },
        result: Some(WorkloadResult {
            metrics: vec![Metric::new("requests_per_s", "req/s", 50.0, Better::Higher)],
            histograms: vec![NamedHistogram {
                name: "latency".into(),
                hist: h,
            }],
            ..Default::default()
        }),
        samples: vec![],
        probes: vec![],
        profiles: vec![],
    })
    .unwrap();
    drop(s);
    let paths = perflab::report::write_report(&run).unwrap();
    let md = read(paths.file("md").unwrap());
    assert!(md.contains("⚠ n < 3"), "{md}");
    assert!(md.contains("p99 needs >= 100 values; p99.9 needs >= 1000 values"));
    // 50 values: p50 = 25 ms and p90 = 45 ms are supported; max 50 ms. HdrHistogram at 3
    // significant digits reports the top of each value's bucket (25 000 µs -> 25 015 µs).
    assert!(
        md.contains("| concurrency=1 | latency | 50 | 25.01 | 45.02 | – | – | 50.02 |"),
        "{md}"
    );
}

#[test]
fn report_json_carries_the_analysis_types() {
    let (_tmp, out) = build("out");
    let json: serde_json::Value = serde_json::from_str(&read(&out.join("report.json"))).unwrap();
    assert_eq!(json["schema"], 4);
    // A comparison is the analysis' comparison, with what was compared beside it.
    let c = json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "requests_per_s" && c["at"] == "concurrency=1")
        .expect("variant b against a at concurrency 1");
    let back: perflab::analysis::compare::Comparison = serde_json::from_value(c.clone()).expect("the analysis type, flattened");
    assert_eq!(back.test, perflab::analysis::compare::Test::WelchT);
    assert_eq!(back.verdict, perflab::analysis::compare::Verdict::Improved);
    assert!((back.delta_pct.unwrap() - 20.0).abs() < 5.0, "b is 20 % faster: {c}");
    assert!(back.df.is_some() && back.statistic.is_some());
    assert!(c["quantile"].is_null(), "req/s is not a percentile");
    // A finding is the analysis' finding: hits and structured evidence.
    let md = read(&out.join("report.md"));
    for f in json["findings"].as_array().unwrap() {
        let back: perflab::analysis::bottleneck::Finding = serde_json::from_value(f.clone()).expect("the analysis type");
        assert!(!back.evidence.is_empty(), "{f}");
        // E1 and the diagnoses (D1-D3) read no samples: no hits.
        if back.rule != "E1" && !back.rule.to_string().starts_with('D') {
            assert_eq!(back.hits.len(), back.points.len(), "{f}");
        }
        // The appendix prints the same evidence, one row per point and figure.
        for e in &back.evidence {
            let line = perflab::report::export::md::md_cell(&e.text());
            assert!(md.contains(&line), "{line}");
        }
    }
    // A scaling row is the analysis' row; its latency is the merged p50 of the point's histogram.
    let p50 = |label: &str| {
        let p = json["points"].as_array().unwrap().iter().find(|p| p["label"] == label).unwrap();
        p["latency"][0]["percentiles"][0][1].as_f64().unwrap()
    };
    let rows = json["scaling"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    for r in rows {
        let back: perflab::analysis::scaling::ScalingRow = serde_json::from_value(r.clone()).expect("the analysis row, flattened");
        let label = format!("{} concurrency={}", r["variant"].as_str().unwrap(), back.x);
        assert_eq!(back.latency, Some(p50(&label)), "{r}");
    }
}
