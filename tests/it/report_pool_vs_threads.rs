//! The pool-vs-threads experiment (a pool of 5 workers against a thread per connection, a 37 B and
//! a 10 MB document, swept concurrency) as a plan with `[report] compare = "model"`, run for real
//! against `perflab serve` with short phases: the summary holds each model's requests/s, p50, p99
//! and latency sd at every concurrency with the verdict, equal to report.json's numbers (a mean
//! rounded to what its CI supports), and the
//! 37 B and 10 MB figures are drawn in separate panels. Each trial stops after 60 responses (the
//! load phase is only an upper bound), so every point holds the 100 values a p99 needs however
//! slow the machine is.

use perflab::report::doc::{delta_pct, num_ci};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");
const METRICS: [&str; 4] = ["requests_per_s", "p50", "p99", "latency_sd_ms"];

#[test]
fn each_model_at_every_concurrency_with_its_verdict_and_a_panel_per_size() {
    let tmp = tempfile::tempdir().unwrap();
    let port = crate::common::free_port();
    let plan = tmp.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"pool-vs-threads\"\nrepetitions = 2\norder = \"interleaved\"\n\
             [target]\ncommand = [\"{BIN}\", \"serve\", \"--port\", \"{port}\", \"--model\", \"${{model}}\", \"--workers\", \"5\"]\n\
             ready = {{ tcp = \"127.0.0.1:{port}\", timeout = \"10s\" }}\nrestart = \"keep\"\n\
             [workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:{port}/bytes/${{size}}\"\nconnections = \"${{concurrency}}\"\nkeepalive = false\nrequests = 60\n\
             [matrix]\nmodel = [\"pool\", \"thread-per-connection\"]\nsize = [37, 10485760]\nconcurrency = [2, 4]\n\
             [phases]\nbaseline = \"200ms\"\nwarmup = \"0s\"\nload = \"60s\"\nrecovery = \"0s\"\ninterval = \"200ms\"\n\
             [report]\ncompare = \"model\"\nbaseline = \"pool\"\nx = \"concurrency\"\n\
             metrics = [\"requests_per_s\", \"p50\", \"p99\", \"latency_sd_ms\"]\n"
        ),
    )
    .unwrap();
    let o = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(tmp.path().join("runs"))
        .arg(&plan)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let run = std::fs::read_dir(tmp.path().join("runs")).unwrap().next().unwrap().unwrap().path();
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    let summary = &md[md.find("## Summary").unwrap()..md.find("## Run").unwrap()];
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(run.join("report.json")).unwrap()).unwrap();
    let answer = json["overview"]["answer"].as_array().unwrap();
    for model in ["pool", "thread-per-connection"] {
        for size in ["37", "10485760"] {
            for metric in METRICS {
                let row: Vec<&serde_json::Value> = answer
                    .iter()
                    .filter(|c| c["variant"] == model && c["at"] == format!("size={size}") && c["metric"] == metric)
                    .collect();
                let xs: Vec<&str> = row.iter().map(|c| c["x"].as_str().unwrap()).collect();
                assert_eq!(xs, ["2", "4"], "{model} size={size} {metric}: {row:?}");
                for c in row {
                    let value = c["value"].as_f64().unwrap();
                    let mut text = num_ci(value, c["ci95"].as_f64());
                    if model != "pool" {
                        let delta = c["delta_pct"].as_f64().expect("a Δ % against the pool");
                        assert!(!c["verdict"].is_null(), "a verdict: {c}");
                        let ci = c["ci95_pct"].as_array().map(|b| (b[0].as_f64().unwrap(), b[1].as_f64().unwrap()));
                        text.push_str(&format!(" ({}, ", delta_pct(delta, ci)));
                    } else {
                        text.push_str(" |");
                    }
                    let anchor = format!("<a id=\"{}\"></a>", c["row"].as_str().unwrap());
                    let line = summary
                        .lines()
                        .find(|l| l.contains(&anchor) && l.contains(&format!("| {model} | {size} |")))
                        .unwrap_or_else(|| panic!("no summary row for {model} size={size} {metric}: {summary}"));
                    assert!(line.contains(&format!("| {text}")), "{text} not in {line}");
                }
            }
        }
    }
    // The 37 B and 10 MB throughputs are orders of magnitude apart: a panel each.
    let svg = std::fs::read_to_string(run.join("charts/throughput.svg")).unwrap();
    // A panel's title is a text element of its own (the legend names only the models).
    let texts: Vec<&str> = svg.lines().map(str::trim).collect();
    assert!(texts.contains(&"size=37") && texts.contains(&"size=10485760"), "{svg}");
    assert!(svg.contains("one panel per size=37 / size=10485760"), "the caption says so");
}
