//! Cost per operation, run for real: `perflab serve` as a pool of 5 workers and with a thread per
//! connection at 50 connections (a new connection per request). The target's CPU µs per request
//! is its CPU time over the load phase's samples divided by the requests of the same seconds,
//! computed here again from the stored samples; a thread per connection costs more CPU per request
//! than the pool (a thread made and ended for each); the context switches per request count every
//! thread of the target, not only its main thread (which only sleeps); the answer table and
//! `perflab compare` carry the figures.

use crate::common::{free_port, only_run_dir, write_plan};
use perflab::store::Store;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

/// The point's mean of a metric in report.json.
fn point_metric(json: &serde_json::Value, point: &str, name: &str) -> Option<f64> {
    let p = json["points"].as_array()?.iter().find(|p| p["label"] == point)?;
    let m = p["metrics"].as_array()?.iter().find(|m| m["name"] == name)?;
    m["summary"]["mean"].as_f64()
}

/// CPU µs per request of one trial, from its samples: Σ cpu % / 100 × Δt over the load phase,
/// over requests/s × Σ Δt.
fn cpu_us_per_request(store: &Store, trial: usize, requests_per_s: f64) -> f64 {
    let samples = store.samples(trial).expect("samples");
    let (mut cpu_s, mut secs) = (0.0, 0.0);
    for w in samples.windows(2) {
        if w[1].phase != "load" {
            continue;
        }
        let dt = w[1].t_s - w[0].t_s;
        if let Some((_, v)) = w[1].values.iter().find(|(k, _)| k == "proc_target_cpu_pct") {
            cpu_s += v / 100.0 * dt;
            secs += dt;
        }
    }
    assert!(secs > 0.0, "load samples of the target");
    cpu_s / (requests_per_s * secs) * 1e6
}

#[test]
fn cost_per_request_of_a_pool_and_of_a_thread_per_connection() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let plan = write_plan(
        tmp.path(),
        &format!(
            "name = \"cost\"\nrepetitions = 2\norder = \"interleaved\"\n\
             [target]\ncommand = [\"{BIN}\", \"serve\", \"--port\", \"{port}\", \"--model\", \"${{model}}\", \"--workers\", \"5\"]\n\
             ready = {{ tcp = \"127.0.0.1:{port}\", timeout = \"10s\" }}\n\
             [workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:{port}/\"\nconnections = 50\nkeepalive = false\n\
             [matrix]\nmodel = [\"pool\", \"thread-per-connection\"]\n\
             [phases]\nbaseline = \"500ms\"\nwarmup = \"500ms\"\nload = \"3s\"\nrecovery = \"0s\"\ninterval = \"250ms\"\n\
             [report]\ncompare = \"model\"\nbaseline = \"pool\"\n"
        ),
    );
    let runs = tmp.path().join("runs");
    let o = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let run = only_run_dir(&runs);
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(run.join("report.json")).unwrap()).unwrap();

    // CPU µs per request: the report's figure is the mean of the trials' own, each the target's
    // CPU time over the requests of the same seconds.
    let store = Store::open(&run).unwrap();
    for model in ["pool", "thread-per-connection"] {
        let label = format!("model={model}");
        let points = store.points().unwrap();
        let id = points.iter().find(|p| p.label == label).expect("point").id;
        let mine: Vec<f64> = store
            .trials()
            .unwrap()
            .iter()
            .filter(|t| t.point == id && t.ok())
            .map(|t| cpu_us_per_request(&store, t.id, t.metric("requests_per_s").unwrap()))
            .collect();
        assert_eq!(mine.len(), 2, "{model}");
        let want = mine.iter().sum::<f64>() / 2.0;
        let got = point_metric(&json, &label, "target_cpu_us_per_op").expect("CPU µs per request");
        assert!((got - want).abs() <= 1e-6 * want.abs().max(1.0), "{model}: {got} vs {want}");
        assert!(got > 0.0, "{model}: {got}");
    }

    // A thread per connection costs more CPU per request: a thread is made and ended for each.
    let per_op = |m: &str, name: &str| point_metric(&json, &format!("model={m}"), name).expect(name);
    let (pool, threads) = (
        per_op("pool", "target_cpu_us_per_op"),
        per_op("thread-per-connection", "target_cpu_us_per_op"),
    );
    assert!(threads > pool, "CPU µs per request: pool {pool}, thread per connection {threads}");
    // The switches are every thread's: the pool's workers block in accept and read, its main
    // thread only sleeps (a few switches a second, nothing per request). Counting every thread
    // (taskstats) needs CAP_NET_ADMIN; without it the main thread's are all there is.
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|u| u.split_whitespace().nth(1).map(|e| e == "0"))
        .unwrap_or(false);
    if root {
        let cs = per_op("pool", "target_cswitches_per_op");
        assert!(
            cs > 0.05,
            "the pool's workers switch on a good share of the requests: {cs} per request"
        );
    }

    // The answer table has the cost figure, each part against the pool's.
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    let summary = &md[md.find("## Summary").unwrap()..md.find("## Run").unwrap()];
    let row = summary
        .lines()
        .find(|l| l.contains("thread-per-connection |") && l.contains("µs CPU"))
        .unwrap_or_else(|| panic!("a cost cell for thread-per-connection: {summary}"));
    assert!(row.contains(" switches (+") || row.contains(" switches (-"), "{row}");

    // `perflab compare` of the run with a copy of itself carries the figures as any metric.
    let copy = tmp.path().join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    for e in std::fs::read_dir(&run).unwrap().flatten().filter(|e| e.path().is_file()) {
        std::fs::copy(e.path(), copy.join(e.file_name())).unwrap();
    }
    let out = tmp.path().join("cmp");
    let c = Command::new(BIN)
        .args(["compare", "--format", "json", "--out"])
        .arg(&out)
        .arg(&run)
        .arg(&copy)
        .output()
        .unwrap();
    assert_eq!(c.status.code(), Some(0), "{}", String::from_utf8_lossy(&c.stderr));
    let cmp: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let metrics: Vec<&str> = cmp["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["metric"].as_str().unwrap())
        .collect();
    for m in ["target_cpu_us_per_op", "target_cswitches_per_op"] {
        assert!(metrics.contains(&m), "{m} compared: {metrics:?}");
    }
}
