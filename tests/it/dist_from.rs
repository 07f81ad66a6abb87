//! `[workload] from`: one plan's http load split over this machine and two hosts of `[hosts]`
//! (two agents reached over the real sshd of `remote_ssh`, in its network namespace; called from
//! its one test, which owns the server, its route and its namespace), against `perflab serve`
//! started here by the plan's `[target]` on the address the namespace reaches. Every trial is the
//! merged one: its requests are the plan's and the server's count, each segment sent its slice,
//! its p99 is read from the histogram of every request, and the launch skew is printed.

use crate::remote_ssh::Server;
use perflab::store::Store;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");
/// serve's port here.
const SERVE_PORT: u16 = 18231;

fn plan(srv: &Server, key: &Path, requests: u64) -> std::path::PathBuf {
    let here = srv.local_addr();
    let body = format!(
        r#"name = "split"

[hosts]
{one}
{two}

[monitor]
hosts = ["local"]

[target]
command = ["{BIN}", "serve", "--host", "{here}", "--port", "{SERVE_PORT}"]
ready = {{ tcp = "{here}:{SERVE_PORT}", timeout = "10s" }}
stop = {{ signal = "SIGTERM", grace = "5s" }}

[workload]
type = "http"
url = "http://{here}:{SERVE_PORT}/"
connections = 3
requests = {requests}
from = ["local", "client1", "client2"]

[phases]
baseline = "100ms"
warmup = 0
load = "5s"
recovery = "100ms"
interval = "100ms"
"#,
        one = srv.toml_host("client1", key, BIN),
        two = srv.toml_host("client2", key, BIN),
    );
    let dir = srv.dir.path().join("plan-from");
    std::fs::create_dir_all(&dir).expect("plan dir");
    crate::common::write_plan(&dir, &body)
}

/// The served count serve prints on its way out (`served N requests`).
fn served(stdout: &str) -> Option<u64> {
    let line = stdout.lines().find(|l| l.starts_with("served "))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

pub fn load_from_the_plans_hosts(srv: &Server, key: &Path) {
    let requests = 1501;
    let runs = srv.dir.path().join("runs-from");
    let out = Command::new(BIN)
        .args(["run", "-q", "--runs-dir"])
        .arg(&runs)
        .arg(plan(srv, key, requests))
        .output()
        .expect("perflab run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = Store::open(crate::common::only_run_dir(&runs)).expect("store");
    let t = &store.trials().expect("trials")[0];
    assert!(t.ok(), "{:?}", t.failure);
    // The whole load, merged: the plan's requests, all served.
    assert_eq!(t.metric("requests"), Some(requests as f64), "the merged count");
    assert_eq!(t.metric("errors"), Some(0.0));
    let stdout = t.stdout_tail.clone().unwrap_or_default();
    assert_eq!(served(&stdout), Some(requests), "serve's count: {stdout:?}");
    // Each machine sent its slice: request k is segment k mod 3's.
    let raw = store.raw_output(t.id).expect("raw lines");
    for (i, host) in ["local", "client1", "client2"].iter().enumerate() {
        let share = requests / 3 + u64::from((i as u64) < requests % 3);
        let line = raw
            .iter()
            .find(|l| l.starts_with(&format!("segment {i}/3 on {host}:")))
            .unwrap_or_else(|| panic!("segment {i}'s line in {raw:?}"));
        assert!(line.contains(&format!("requests {share},")), "{line}");
    }
    // The p99 is the p99 of every request of every machine, read from the merged histogram.
    let h = &t.histograms.iter().find(|h| h.name == "latency").expect("latency histogram").hist;
    assert_eq!(h.len(), requests, "every request's latency is in the merged histogram");
    let p99 = t.metric("latency_p99_ms").expect("p99");
    assert_eq!(p99, h.value_at_quantile(0.99) as f64 / 1000.0);
    let skew = raw.iter().find(|l| l.starts_with("launch skew")).expect("the launch skew");
    eprintln!("[workload] from over local + 2 agents: {requests} requests merged and served, p99 {p99} ms, {skew}");
    // The report's first line says the trial was split.
    let report = std::fs::read_to_string(crate::common::only_run_dir(&runs).join("report.md")).expect("report.md");
    assert!(
        report.contains("merged from 3 segments (0/3 on local, 1/3 on client1, 2/3 on client2)"),
        "{report}"
    );
}
