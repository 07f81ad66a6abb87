//! One p99 per point: the report never averages a percentile over repetitions. A percentile a tool
//! printed (no histogram) shows as the median of the per-trial values with n; where the trials
//! stored a histogram, only the merged histogram's percentiles are shown.

use crate::report_common::run_of_results;

use perflab::report::doc::num;
use perflab::report::{write, Formats};
use perflab::workload::{Better, Metric, MetricKind, WorkloadResult};
use serde_json::Value;
use std::path::Path;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

fn exec_result(rps: f64, p50: f64, p99: f64) -> WorkloadResult {
    WorkloadResult {
        metrics: vec![
            Metric::new("requests_per_s", "req/s", rps, Better::Higher),
            Metric::new("latency_p50_ms", "ms", p50, Better::Lower),
            Metric::new("latency_p99_ms", "ms", p99, Better::Lower),
        ],
        ..Default::default()
    }
}

#[test]
fn a_tool_printed_p99_shows_the_median_of_the_trials_with_n_never_the_mean() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("ab");
    // ab printed p99 = 1, 2 and 9 ms in three repetitions: median 2, mean 4.
    let results = vec![
        exec_result(100.0, 0.5, 1.0),
        exec_result(110.0, 0.5, 9.0),
        exec_result(120.0, 0.6, 2.0),
    ];
    run_of_results(&run, "ab-p99", "exec:ab", vec![("concurrency=4", r#"{"concurrency":4}"#, results)]);
    let paths = write(&[&run], &run, Formats::all(), false).unwrap();

    let json: Value = serde_json::from_str(&read(&run.join("report.json"))).unwrap();
    let point = &json["points"][0];
    let names: Vec<&str> = point["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["requests_per_s"], "percentiles are not averaged with the other metrics");
    let p99 = point["printed_percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "latency_p99_ms")
        .expect("the printed p99");
    assert_eq!(p99["quantile"].as_f64(), Some(0.99));
    assert_eq!(p99["n"].as_u64(), Some(3));
    assert_eq!(p99["median"].as_f64(), Some(2.0), "{p99}");
    assert_eq!((p99["min"].as_f64(), p99["max"].as_f64()), (Some(1.0), Some(9.0)));
    assert!(p99.get("mean").is_none(), "no mean of a percentile: {p99}");

    let row = "| concurrency=4 | latency_p99_ms (ms) | 3 | 2.000 | 1.000 | 9.000 | median of 3 trials' p99 |";
    let md = read(&run.join("report.md"));
    assert!(md.contains(row), "{md}");
    assert!(md.contains("never their mean"));
    // The mean (4) is nowhere beside it: the only table row of latency_p99_ms is the median's.
    let rows: Vec<&str> = md.lines().filter(|l| l.contains("latency_p99_ms")).collect();
    assert_eq!(rows, [row]);
    // The terminal's summary shows the point's p99: the median, 2, never the mean, 4.
    // A row per point, a column per figure: the last column is ab's p99 request time.
    let header = paths
        .summary
        .lines()
        .find(|l| l.contains("p99 request time (ms)"))
        .expect("a p99 column in the summary");
    assert!(
        header
            .trim_end()
            .trim_end_matches('│')
            .trim_end()
            .ends_with("p99 request time (ms)"),
        "{header}"
    );
    let p99_line = paths
        .summary
        .lines()
        .find(|l| l.contains("concurrency=4"))
        .expect("the point's row");
    let last = p99_line.trim_end().trim_end_matches('│').rsplit(['│', '┆']).next().unwrap().trim();
    assert_eq!(last, "2.000", "{}", paths.summary);
    assert!(!p99_line.contains("4.000"), "{}", paths.summary);
    let html = read(&run.join("report.html"));
    assert!(html.contains("<td>median of 3 trials&#39; p99</td>"));
    // report.csv: n and the median, no mean, sd, CI or CV.
    let csv = read(&run.join("report.csv"));
    assert!(csv.lines().any(|l| l == "concurrency=4,latency_p99_ms,ms,3,,2,,1,9,,"), "{csv}");
}

/// Three repetitions of the HTTP workload, for real against `perflab serve` on loopback.
fn http_results(n: usize) -> Vec<WorkloadResult> {
    use perflab::serve::{self, ServeConfig};
    use perflab::workload::http::{self, HttpConfig};
    let s = serve::start(ServeConfig::default()).expect("perflab serve on loopback");
    let out = (0..n)
        .map(|_| {
            let mut cfg = HttpConfig::new(&format!("http://{}/", s.addr()));
            cfg.connections = 2;
            cfg.threads = Some(1);
            cfg.requests = Some(300);
            cfg.timeout = Some("10s".into());
            let prepared = http::prepare(&cfg).expect("valid configuration");
            let cancel = perflab::util::Cancel::new();
            let r = http::run(&prepared, std::time::Duration::ZERO, &cancel, &mut || {}, &mut |_, _| {}).expect("the run completes");
            r.to_result()
        })
        .collect();
    s.shutdown().expect("shutdown");
    out
}

/// Every figure a table shows under a p99 heading (not p99.9) for the request latency, by point
/// label: rows of the histogram `latency` (the others, e.g. `connect`, are other distributions) and
/// scaling rows, matched to their point by the swept value.
fn p99_cells(md: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut header: Vec<String> = Vec::new();
    for line in md.lines() {
        if !line.starts_with('|') {
            header.clear();
            continue;
        }
        let cells: Vec<String> = line.trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect();
        if header.is_empty() {
            header = cells;
            continue;
        }
        if cells[0].starts_with("---") || (header.get(1).is_some_and(|h| h == "histogram") && cells[1] != "latency") {
            continue;
        }
        for (h, c) in header.iter().zip(&cells) {
            if h == "p99" || h == "p99 ms" {
                let point = if cells[0] == "all" {
                    format!("concurrency={}", cells[1])
                } else {
                    cells[0].clone()
                };
                out.push((point, c.clone()));
            }
        }
    }
    out
}

#[test]
fn the_http_report_shows_exactly_one_p99_per_point() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("http");
    run_of_results(
        &run,
        "http-p99",
        "http",
        vec![
            ("concurrency=1", r#"{"concurrency":1}"#, http_results(3)),
            ("concurrency=2", r#"{"concurrency":2}"#, http_results(3)),
        ],
    );
    write(&[&run], &run, Formats::all(), false).unwrap();
    let json: Value = serde_json::from_str(&read(&run.join("report.json"))).unwrap();
    let md = read(&run.join("report.md"));
    let cells = p99_cells(&md);
    for p in json["points"].as_array().unwrap() {
        let label = p["label"].as_str().unwrap();
        let is_p99 = |name: &str, unit: &str| MetricKind::infer(name, unit).quantile() == Some(0.99);
        // In the model: the merged histogram's p99, and no per-trial p99 anywhere else.
        let merged: Vec<f64> = p["latency"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["histogram"] == "latency")
            .flat_map(|l| l["percentiles"].as_array().unwrap().clone())
            .filter(|q| q[0] == "p99")
            .map(|q| q[1].as_f64().unwrap())
            .collect();
        assert_eq!(merged.len(), 1, "{label}: 900 values support one merged p99");
        let metric_p99 = p["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| is_p99(m["name"].as_str().unwrap(), m["unit"].as_str().unwrap()))
            .count();
        assert_eq!(metric_p99, 0, "{label}: a per-trial p99 among the metrics");
        assert_eq!(p["printed_percentiles"].as_array().unwrap().len(), 0, "{label}");
        assert!(p["merged_instead"].as_array().unwrap().iter().any(|m| m == "latency_p99_ms"));
        // In the tables: every p99 cell of this point is that one figure.
        let shown: Vec<&String> = cells.iter().filter(|(pt, _)| pt == label).map(|(_, c)| c).collect();
        assert!(!shown.is_empty(), "{label}: no p99 in the tables");
        assert!(
            shown.iter().all(|c| **c == num(merged[0])),
            "{label}: p99 cells {shown:?}, merged {}",
            merged[0]
        );
    }
    assert!(!md.contains("latency_p99_ms (ms) |"), "a per-trial p99 row in a table:\n{md}");
    let note = md
        .lines()
        .find(|l| l.starts_with("One figure per percentile and point"))
        .expect("the note on per-trial percentiles");
    assert!(note.contains("latency_p99_ms") && note.contains("not shown"), "{note}");
}
