//! The report answers each plan's question as it was asked: the headline throughput per point
//! (fio's write IOPS at its write points, each stress-ng stressor's own bogo-ops/s), comparisons
//! only along what the plan declares, a variant that sets a matrix parameter keeps its before/after,
//! each tool's key figures in the answer table with percentiles that say what they are of, no empty
//! label for a plan of one point, the answer's chart beside its table, and observations that say
//! only what the figures support, each linked to its row. Stores written through the store API
//! (as an older perflab wrote them: the figures are read from the stored metric names and the
//! trial's workload name).

use crate::report_common::run_of_results_with_plan;
use perflab::report::{write, Formats};
use perflab::store::Store;
use perflab::workload::{Better, Metric, PrimaryMetrics, WorkloadResult};
use serde_json::Value;
use std::path::Path;

fn result(metrics: &[(&str, &str, f64, Better)]) -> WorkloadResult {
    WorkloadResult {
        metrics: metrics.iter().map(|(n, u, v, b)| Metric::new(*n, *u, *v, *b)).collect(),
        ..Default::default()
    }
}

/// Three repetitions of `metrics`, each value times 1, 1.01 and 0.99.
fn three(metrics: &[(&str, &str, f64, Better)]) -> Vec<WorkloadResult> {
    [1.0, 1.01, 0.99]
        .iter()
        .map(|k| result(&metrics.iter().map(|(n, u, v, b)| (*n, *u, v * k, *b)).collect::<Vec<_>>()))
        .collect()
}

/// The report of `run` written into `out`: report.md, its Summary section, report.json, report.html.
fn report(run: &Path, out: &Path) -> (String, String, Value, String) {
    write(&[run], out, Formats::all(), false).unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let summary = md[md.find("## Summary").unwrap()..md.find("\n## Run").unwrap()].to_string();
    let json: Value = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    (md, summary, json, html)
}

/// The Markdown row of the answer table whose anchor is `row`.
fn md_row<'a>(summary: &'a str, row: &str) -> &'a str {
    summary
        .lines()
        .find(|l| l.contains(&format!("<a id=\"{row}\"></a>")))
        .unwrap_or_else(|| panic!("no row {row}: {summary}"))
}

fn cells<'a>(json: &'a Value, point: &str) -> Vec<&'a Value> {
    json["overview"]["answer"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["point"] == point)
        .collect()
}

const FIO_PLAN: &str =
    "name = \"fio\"\n[workload]\ntype = \"exec\"\ncommand = [\"fio\", \"--rw=${rw}\"]\n[matrix]\nrw = [\"read\", \"write\"]\n";

fn fio_run(dir: &Path) {
    let read = three(&[
        ("read_iops", "IO/s", 45200.0, Better::Higher),
        ("read_bw_mibps", "MiB/s", 176.5, Better::Higher),
        ("read_lat_mean_us", "us", 88.0, Better::Lower),
        ("read_lat_p99_us", "us", 156.0, Better::Lower),
    ]);
    let write = three(&[
        ("write_iops", "IO/s", 38500.0, Better::Higher),
        ("write_bw_mibps", "MiB/s", 150.4, Better::Higher),
        ("write_lat_mean_us", "us", 102.0, Better::Lower),
        ("write_lat_p99_us", "us", 198.0, Better::Lower),
    ]);
    run_of_results_with_plan(
        dir,
        "fio",
        FIO_PLAN,
        "exec:fio",
        vec![("rw=read", r#"{"rw":"read"}"#, read), ("rw=write", r#"{"rw":"write"}"#, write)],
    );
    // As the runner stored it for the whole run: the first declared name any trial had.
    let mut s = Store::open(dir).unwrap();
    s.write_primary(&PrimaryMetrics {
        throughput: Some("read_iops".into()),
        latency: Some("read_clat_p99_us".into()),
        latency_histogram: None,
    })
    .unwrap();
}

#[test]
fn the_headline_is_chosen_per_point_from_what_its_trials_produced() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    fio_run(&run);
    let (_, summary, json, _) = report(&run, &tmp.path().join("out"));
    assert_eq!(json["points"][0]["headline"], "read_iops");
    assert_eq!(json["points"][1]["headline"], "write_iops", "the write point's own headline");
    let head: Vec<&Value> = cells(&json, "rw=write").into_iter().filter(|c| c["headline"] == true).collect();
    assert_eq!(head.len(), 1);
    assert_eq!(
        (head[0]["metric"].as_str(), head[0]["label"].as_str()),
        (Some("write_iops"), Some("write IOPS"))
    );
    assert_eq!(head[0]["unit"], "IO/s");
    let row = md_row(&summary, head[0]["row"].as_str().unwrap());
    assert!(row.contains("| 38500 |") && row.contains("></a>write |"), "{row}");
    // The seed's columns: IOPS, bandwidth, mean and p99 latency of each direction.
    for col in [
        "read IOPS (IO/s)",
        "write IOPS (IO/s)",
        "write bandwidth (MiB/s)",
        "write p99 lat (us)",
        "read mean lat (us)",
    ] {
        assert!(summary.contains(col), "no column {col}: {summary}");
    }

    // stress-ng sweeping its stressors: each point's own bogo-ops/s.
    let run = tmp.path().join("stress");
    let points = ["cpu", "vm", "io"]
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let name = format!("{s}_bogo_ops_per_s");
            let ops = format!("{s}_bogo_ops");
            let r = three(&[
                (ops.as_str(), "ops", 1000.0 * (i + 1) as f64, Better::Higher),
                (name.as_str(), "ops/s", 100.0 * (i + 1) as f64, Better::Higher),
            ]);
            (format!("stressor={s}"), format!(r#"{{"stressor":"{s}"}}"#), r)
        })
        .collect::<Vec<_>>();
    let plan = "name = \"stress\"\n[workload]\ntype = \"exec\"\ncommand = \"stress-ng --${stressor} 1\"\n[matrix]\nstressor = [\"cpu\", \"vm\", \"io\"]\n";
    run_of_results_with_plan(
        &run,
        "stress",
        plan,
        "exec:stress-ng",
        points.iter().map(|(l, p, r)| (l.as_str(), p.as_str(), r.clone())).collect(),
    );
    let (_, summary, json, _) = report(&run, &tmp.path().join("stress-out"));
    for (i, s) in ["cpu", "vm", "io"].iter().enumerate() {
        assert_eq!(json["points"][i]["headline"], format!("{s}_bogo_ops_per_s"));
        let row = md_row(&summary, &format!("answer-stressor-{s}"));
        let want = 100.0 * (i + 1) as f64;
        assert!(row.split('|').any(|c| c.trim().parse::<f64>() == Ok(want)), "{s}: {row}");
    }
    assert!(summary.contains("bogo-ops/s (ops/s)"), "{summary}");
}

#[test]
fn only_a_declared_comparison_compares_and_iperf3_gets_its_per_test_table() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let tcp = |mbit: f64, retr: f64| {
        three(&[
            ("received_mbitps", "Mbit/s", mbit, Better::Higher),
            ("sent_mbitps", "Mbit/s", mbit, Better::Higher),
            ("retransmits", "segments", retr, Better::Lower),
        ])
    };
    let udp = |mbit: f64, jitter: f64, lost: f64| {
        three(&[
            ("received_mbitps", "Mbit/s", mbit, Better::Higher),
            ("sent_mbitps", "Mbit/s", mbit, Better::Higher),
            ("jitter_ms", "ms", jitter, Better::Lower),
            ("lost_pct", "%", lost, Better::Lower),
        ])
    };
    let plan = "name = \"iperf3\"\n[workload]\ntype = \"exec\"\ncommand = \"iperf3 -c 127.0.0.1 -J ${test}\"\n[matrix]\ntest = [\"-P 1\", \"-P 4\", \"-u -b 100M\"]\n";
    run_of_results_with_plan(
        &run,
        "iperf3",
        plan,
        "exec:iperf3",
        vec![
            ("test=-P 1", r#"{"test":"-P 1"}"#, tcp(945.0, 12.0)),
            ("test=-P 4", r#"{"test":"-P 4"}"#, tcp(948.0, 8.0)),
            ("test=-u -b 100M", r#"{"test":"-u -b 100M"}"#, udp(99.8, 0.045, 0.25)),
        ],
    );
    let (md, summary, json, _) = report(&run, &tmp.path().join("out"));
    assert!(json["overview"]["compare"].is_null(), "{}", json["overview"]["compare"]);
    assert_eq!(json["comparisons"].as_array().map(Vec::len), Some(0));
    assert!(
        !summary.contains("Compared:") && !summary.contains("Optimization summary"),
        "{summary}"
    );
    assert!(
        md.contains("The plan declares no comparison"),
        "the appendix says why nothing is compared"
    );
    let header = summary.lines().find(|l| l.starts_with("| test |")).expect("a row per test");
    for col in ["received (Mbit/s)", "jitter (ms)", "lost (%)", "retransmits"] {
        assert!(header.contains(col), "no column {col}: {header}");
    }
    let udp_row = md_row(&summary, "answer-test-u-b-100m");
    assert!(udp_row.contains("| 0.045 |") && udp_row.contains("| 99.8 |"), "{udp_row}");
    // No bare percentile: nothing here is a "p50 (ms)".
    assert!(!summary.contains("| p50 (ms)") && !summary.contains("p50 (ms) |"), "{summary}");
}

const MPM_PLAN: &str = "name = \"mpm\"\n[workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:1/\"\n\
    [matrix]\nvariant = [\"before\", \"after\"]\nmodel = [\"thread-per-connection\"]\nconcurrency = [10, 50]\n\
    [variant.after]\nmodel = \"event-loop\"\n";

fn mpm_run(dir: &Path, reps: usize) {
    let mut points = Vec::new();
    for (variant, model, speed) in [("before", "thread-per-connection", 1.0), ("after", "event-loop", 1.3)] {
        for c in [10, 50] {
            let r: Vec<WorkloadResult> = three(&[
                ("requests_per_s", "req/s", 5000.0 * speed, Better::Higher),
                ("error_rate_pct", "%", 0.0, Better::Lower),
            ])
            .into_iter()
            .take(reps)
            .collect();
            points.push((
                format!("variant={variant} model={model} concurrency={c}"),
                format!(r#"{{"variant":"{variant}","model":"{model}","concurrency":{c}}}"#),
                r,
            ));
        }
    }
    run_of_results_with_plan(
        dir,
        "mpm",
        MPM_PLAN,
        "http",
        points.iter().map(|(l, p, r)| (l.as_str(), p.as_str(), r.clone())).collect(),
    );
}

#[test]
fn a_variant_that_sets_a_matrix_parameter_keeps_its_before_and_after() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    mpm_run(&run, 3);
    let (md, summary, json, _) = report(&run, &tmp.path().join("out"));
    assert_eq!(json["overview"]["compare"], "variant");
    assert_eq!(json["overview"]["set_by_variant"], serde_json::json!(["model"]));
    assert!(summary.contains("Compared: each variant against variant = before"), "{summary}");
    for c in [10, 50] {
        let after = cells(&json, &format!("variant=after model=event-loop concurrency={c}"));
        let rps = after
            .iter()
            .find(|c| c["metric"] == "requests_per_s")
            .expect("the after requests/s");
        let delta = rps["delta_pct"].as_f64().expect("a Δ % against before");
        assert!((delta - 30.0).abs() < 0.5, "{delta}");
        assert_eq!(rps["verdict"]["kind"], "improved", "{rps}");
        assert!(md_row(&summary, rps["row"].as_str().unwrap()).contains("%, improved)"));
    }
    let comparisons = json["comparisons"].as_array().unwrap();
    assert!(
        comparisons
            .iter()
            .any(|c| c["parameter"] == "variant" && c["metric"] == "requests_per_s" && c["verdict"]["kind"] == "improved"),
        "{comparisons:?}"
    );
    assert!(!md.contains("nothing to compare"), "the appendix compares the variants");
    assert!(summary.contains("Optimization summary"), "{summary}");
}

#[test]
fn each_tool_shows_its_key_figures_with_labels_that_say_what_they_are() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("memtester");
    let passed = |n: f64, failed: f64| {
        vec![result(&[
            ("memtest_tests_passed", "tests", n, Better::Higher),
            ("memtest_tests_failed", "tests", failed, Better::Lower),
            ("memtest_loops", "loops", 1.0, Better::Neither),
            ("wall_time_s", "s", 95.0, Better::Lower),
        ])]
    };
    run_of_results_with_plan(
        &run,
        "memtester",
        "name = \"memtester\"\n",
        "exec:memtester",
        vec![("", "{}", passed(18.0, 0.0))],
    );
    let (_, summary, _, _) = report(&run, &tmp.path().join("m-out"));
    assert!(summary.contains("| 18/18 |") && summary.contains("tests passed"), "{summary}");

    let run = tmp.path().join("ab");
    let ab = |rps: f64, failed: f64| {
        three(&[
            ("requests_per_s", "req/s", rps, Better::Higher),
            ("time_per_request_ms", "ms", 2.21, Better::Lower),
            ("transfer_kib_per_s", "KiB/s", 3842.0, Better::Higher),
            ("failed_requests", "requests", failed, Better::Lower),
            ("latency_p50_ms", "ms", 2.0, Better::Lower),
            ("latency_p99_ms", "ms", 9.0, Better::Lower),
            ("connect_median_ms", "ms", 0.0, Better::Lower),
        ])
    };
    let plan = "name = \"ab\"\n[workload]\ntype = \"exec\"\ncommand = [\"ab\", \"-c\", \"${concurrency}\", \"http://127.0.0.1/\"]\n[matrix]\nconcurrency = [10, 200]\n";
    run_of_results_with_plan(
        &run,
        "ab",
        plan,
        "exec:ab",
        vec![
            ("concurrency=10", r#"{"concurrency":10}"#, ab(4521.0, 0.0)),
            ("concurrency=200", r#"{"concurrency":200}"#, ab(4892.0, 5.0)),
        ],
    );
    let (_, summary, _, _) = report(&run, &tmp.path().join("ab-out"));
    let failed = summary
        .lines()
        .find(|l| l.contains("failed requests |"))
        .expect("ab's failed requests");
    let last = failed.trim_end_matches(" |").rsplit("| ").next().unwrap();
    assert!((last.parse::<f64>().unwrap() - 5.0).abs() < 1e-9, "{failed}");
    for label in ["p50 request time (ms)", "p99 request time (ms)", "transfer rate (KiB/s)"] {
        assert!(summary.contains(label), "no {label}: {summary}");
    }
    // The p50 is ab's request time, not its connect time.
    let p50 = summary.lines().find(|l| l.contains("p50 request time")).unwrap();
    assert!(p50.contains("| 2.000 |"), "{p50}");
}

/// A plan without a matrix: its one point has an empty stored label.
#[test]
fn a_plan_of_one_point_has_no_empty_label() {
    use perflab::model::{Phase, PhaseSpan, TrialInfo};
    use perflab::store::{RunInfo, RunStatus, TaggedSample, TrialRecord};
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut s = Store::create(&run).unwrap();
    s.write_run(&RunInfo {
        plan_name: "one".into(),
        plan_file: "one.toml".into(),
        plan_source: "name = \"one\"\n".into(),
        seed: 1,
        started_unix: 1_700_000_000.0,
        planned_trials: 2,
    })
    .unwrap();
    s.write_point(0, "", "{}", 2, Some("fixed N = 2")).unwrap();
    for id in 0..2usize {
        // A busy baseline, a saturated CPU under load, a noisy throughput.
        let samples = (0..20)
            .map(|t| TaggedSample {
                phase: if t < 4 {
                    "baseline"
                } else if t < 16 {
                    "load"
                } else {
                    "recovery"
                }
                .into(),
                t_s: t as f64 + 0.5,
                unix_s: 1_700_000_000.0 + t as f64,
                values: vec![
                    ("cpu_busy_pct".into(), if t < 16 { 99.0 } else { 5.0 }),
                    ("procs_running".into(), 9.0),
                    ("psi_cpu_some_avg10_pct".into(), 80.0),
                ],
            })
            .collect();
        s.write_trial(&TrialRecord {
            info: TrialInfo {
                id,
                point: 0,
                repetition: id as u32 + 1,
                params_json: "{}".into(),
                workload: "exec:stress-ng".into(),
                failure: None,
                started_unix: 1_700_000_000.0 + 30.0 * id as f64,
                ended_unix: 1_700_000_020.0 + 30.0 * id as f64,
                limit_mechanism: None,
                limit_proof: None,
                stdout_tail: None,
                stderr_tail: None,
                phases: vec![
                    PhaseSpan::new(Phase::Baseline, 0.0, 4.0),
                    PhaseSpan::new(Phase::Load, 4.0, 16.0),
                    PhaseSpan::new(Phase::Recovery, 16.0, 20.0),
                ],
            },
            result: Some(result(&[(
                "cpu_bogo_ops_per_s",
                "ops/s",
                100.0 + 100.0 * id as f64,
                Better::Higher,
            )])),
            samples,
            probes: vec![],
            profiles: vec![],
        })
        .unwrap();
    }
    s.finish_run(RunStatus::Complete, 1_700_001_000.0).unwrap();
    drop(s);
    let out = tmp.path().join("out");
    let (md, summary, _, _) = report(&run, &out);
    for empty in ["at )", "worst :", "worst ;", ",  (n", "()", "at  ", "point  "] {
        assert!(!md.contains(empty), "an empty label `{empty}`:\n{md}");
    }
    assert!(summary.contains("the only point"), "{summary}");
}

#[test]
fn the_answer_s_chart_sits_beside_its_table_on_the_first_screen() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    mpm_run(&run, 3);
    let out = tmp.path().join("out");
    let (md, _, _, html) = report(&run, &out);
    let first: Vec<&str> = md.lines().take(60).collect();
    assert!(first.contains(&"![answer.svg](charts/answer.svg)"), "{}", first.join("\n"));
    let svg = std::fs::read_to_string(out.join("charts/answer.svg")).expect("charts/answer.svg");
    assert!(svg.contains("<polygon"), "the 95 % CI as a band: {svg}");
    assert!(svg.contains("before") && svg.contains("after"), "a line per variant");
    let block = &html[html.find("<div class=\"answer\">").expect("the answer block")..];
    let block = &block[..block.find("</figure>").expect("its chart")];
    assert!(
        block.contains("<table>") && block.contains("<figure class=\"chart\" id=\"answer.svg\">"),
        "{block}"
    );
    if let Some((table, chart)) = boxes(&out.join("report.html"), tmp.path()) {
        assert!(
            table.1 < 900.0 && chart.1 < 900.0,
            "both start on the first screen: {table:?} {chart:?}"
        );
        assert!(
            chart.0 >= table.2 - 1.0,
            "the chart is beside the table, not below it: {table:?} {chart:?}"
        );
    }
}

/// (left, top, right) of a box on the page, in px.
pub type Edges = (f64, f64, f64);

/// (left, top, right) of the answer's table and chart in headless Chromium at 1400×900.
pub fn boxes(html: &Path, tmp: &Path) -> Option<(Edges, Edges)> {
    let probe = "<script>const b=e=>{const r=e.getBoundingClientRect();return r.left+','+r.top+','+r.right};\
                 const a=document.querySelector('.answer');const p=document.createElement('pre');\
                 p.textContent='BOX='+b(a.querySelector('table'))+'|'+b(a.querySelector('figure'))+'|';\
                 document.body.appendChild(p);</script>";
    let dom = crate::report_browser::dom_with_script(html, tmp, probe, "the first-screen layout")?;
    // The last "BOX=": the first is the script's own text.
    let probe = dom
        .rsplit("BOX=")
        .next()
        .filter(|p| p.starts_with(|c: char| c.is_ascii_digit() || c == '-'))
        .expect("the probe ran");
    let nums: Vec<Vec<f64>> = probe
        .split('|')
        .take(2)
        .map(|b| b.split(',').map(|v| v.trim().parse().unwrap()).collect())
        .collect();
    Some(((nums[0][0], nums[0][1], nums[0][2]), (nums[1][0], nums[1][1], nums[1][2])))
}

#[test]
fn observations_say_only_what_the_figures_support_and_link_to_their_rows() {
    let tmp = tempfile::tempdir().unwrap();
    // wrk at one point, b 20 % faster (significant) with the same p99 (not significant).
    let wrk = |rps: f64, p99: [f64; 3]| -> Vec<WorkloadResult> {
        [1.0, 1.01, 0.99]
            .iter()
            .zip(p99)
            .map(|(k, p)| {
                result(&[
                    ("requests_per_s", "req/s", rps * k, Better::Higher),
                    ("latency_p99_ms", "ms", p, Better::Lower),
                ])
            })
            .collect()
    };
    let plan =
        "name = \"wrk\"\n[workload]\ntype = \"exec\"\ncommand = [\"wrk\", \"http://127.0.0.1/\"]\n[matrix]\nvariant = [\"a\", \"b\"]\n";
    for (name, reps) in [("three", 3), ("two", 2)] {
        let run = tmp.path().join(name);
        let a: Vec<WorkloadResult> = wrk(1000.0, [10.0, 12.0, 8.0]).into_iter().take(reps).collect();
        let b: Vec<WorkloadResult> = wrk(1200.0, [11.0, 9.0, 10.5]).into_iter().take(reps).collect();
        run_of_results_with_plan(
            &run,
            "wrk",
            plan,
            "exec:wrk",
            vec![("variant=a", r#"{"variant":"a"}"#, a), ("variant=b", r#"{"variant":"b"}"#, b)],
        );
        let mut s = Store::open(&run).unwrap();
        s.write_threshold("requests_per_s > 1100", 0, Some(1000.0), "mean of 3 trials", false)
            .unwrap();
        s.write_threshold("requests_per_s > 1100", 1, Some(1200.0), "mean of 3 trials", true)
            .unwrap();
        drop(s);
        let (md, summary, json, html) = report(&run, &tmp.path().join(format!("{name}-out")));
        let obs: Vec<&str> = summary.lines().filter(|l| l.starts_with("Observation: ")).collect();
        let variant = obs
            .iter()
            .find(|l| l.contains("variant = b against a"))
            .expect("a sentence per compared variant");
        if reps == 3 {
            assert!(
                variant.contains("requests/s: improved: 1200 req/s vs 1000 req/s, Δ +20 %, 95 % CI ["),
                "{variant}"
            );
            assert!(variant.contains("p99 latency: no significant difference:"), "{variant}");
        } else {
            // Two repetitions a side support no verdict: the figures, never "improved".
            assert!(!variant.contains("improved") && variant.contains("not tested"), "{variant}");
        }
        let threshold = obs
            .iter()
            .find(|l| l.contains("Threshold"))
            .expect("a sentence per threshold broken");
        assert!(
            threshold.contains("`requests_per_s > 1100` broken at 1 of 2 points: variant=a (1000, mean of 3 trials)"),
            "{threshold}"
        );
        // Every sentence links to an anchor the page has.
        for o in json["overview"]["observations"].as_array().unwrap() {
            let anchor = o["anchor"].as_str().expect("an anchor");
            assert!(html.contains(&format!("id=\"{anchor}\"")), "no #{anchor} in the page");
            assert!(html.contains(&format!("href=\"#{anchor}\"")), "the sentence links to #{anchor}");
            if anchor.starts_with("answer-") {
                assert!(md.contains(&format!("<a id=\"{anchor}\"></a>")), "no #{anchor} in report.md");
            }
        }
        // The summary opens with them: before the answer table.
        assert!(summary.find("Observation: ") < summary.find("| variant |"), "{summary}");
    }
}

/// docs/metrics.md shows the declared figures as they are: the test prints the table to paste.
#[test]
fn the_docs_list_each_workload_s_figures_as_declared() {
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/metrics.md")).unwrap();
    let table = perflab::workload::figures::markdown_table();
    assert!(
        docs.contains(&table),
        "docs/metrics.md's \"Workload figures\" table differs from src/workload/figures.rs; paste:\n\n{table}"
    );
}
