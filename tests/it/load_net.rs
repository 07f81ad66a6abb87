//! The built-in `net` workload (`perflab load net`, `type = "net"`) against `perflab serve --net`,
//! on loopback: a stream of a fixed byte count moves exactly that many bytes by the server's count
//! (upload) and the client's (download); UDP against a server that drops every 10th datagram reads
//! 10 % ± 1 loss; rr and crr time every round trip; a server killed mid-run fails the run (and a
//! plan's trial) with a classified error; bad input is one line and exit code 2.

use crate::common::stdout_json;
use perflab::serve::net::{start, NetServeConfig, NetServer};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use crate::common::write_plan;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

fn server(drop_every: Option<u64>) -> NetServer {
    start(NetServeConfig {
        host: [127, 0, 0, 1].into(),
        port: 0,
        drop_every,
    })
    .expect("net server")
}

fn load(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(["load", "net"])
        .args(args)
        .output()
        .expect("perflab load net")
}

fn json(out: &Output) -> serde_json::Value {
    stdout_json(out)
}

fn ok(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_stream_of_a_fixed_byte_count_moves_exactly_that_many_bytes() {
    let s = server(None);
    let target = s.addr().to_string();
    // An odd count over 3 streams, with writes that do not divide it.
    let want: u64 = 50_000_123;
    let out = load(&[&target, "-n", &want.to_string(), "-P", "3", "-l", "64K", "-d", "60s", "--json"]);
    ok(&out);
    let j = json(&out);
    assert_eq!(j["schema"], "perflab.load.net/1");
    assert_eq!(j["result"]["stream"]["bytes"].as_u64(), Some(want));
    assert_eq!(j["result"]["stream"]["server_bytes"].as_u64(), Some(want), "the server's count");
    let per_stream: u64 = j["result"]["stream"]["streams"]
        .as_array()
        .expect("streams")
        .iter()
        .filter_map(|x| x["server_bytes"].as_u64())
        .sum();
    assert_eq!(per_stream, want);
    // Download: the client reads exactly that many and closes.
    let out = load(&[&target, "-n", "7777777", "--direction", "download", "-d", "60s", "--json"]);
    ok(&out);
    assert_eq!(json(&out)["result"]["stream"]["download"]["bytes"].as_u64(), Some(7_777_777));
    let c = s.shutdown();
    assert_eq!(c.bytes_received, want, "the server received exactly the upload");
    assert!(c.bytes_sent >= 7_777_777);
}

#[test]
fn udp_against_a_server_dropping_every_10th_datagram_reads_10_percent_loss() {
    let s = server(Some(10));
    let target = s.addr().to_string();
    // 40 Mbit/s of 1000-byte datagrams for 2 s: 10 000 datagrams, slow enough to lose none else.
    let out = load(&[&target, "-m", "udp", "-b", "40M", "-l", "1000", "-d", "2s", "--json"]);
    ok(&out);
    let u = &json(&out)["result"]["udp"];
    let loss = u["loss_pct"].as_f64().expect("loss_pct");
    let (sent, received) = (u["datagrams_sent"].as_u64().unwrap(), u["datagrams_received"].as_u64().unwrap());
    assert!(sent > 5_000, "{u}");
    // The pacer sends in batches of what is due, never ahead of the rate: 10 000 in 2 s at most.
    assert!(sent <= 10_000, "sent {sent} datagrams, more than 40 Mbit/s for 2 s allows: {u}");
    assert_eq!(u["lost"].as_u64(), Some(sent - received));
    // The aid drops every 10th datagram that reaches the server; a busy machine may drop more in the
    // server's socket buffer before the aid sees them, which is real loss the run rightly reports.
    let aid = u["dropped_by_aid"].as_u64().expect("dropped_by_aid");
    let machine = (sent - received).saturating_sub(aid);
    if machine * 200 > sent {
        eprintln!(
            "udp_against_a_server_dropping_every_10th_datagram: this machine itself dropped {machine} of {sent} datagrams \
             (too busy to receive 40 Mbit/s); checking the aid's share of what arrived, not the 10 % reading"
        );
        let share = aid as f64 / (received + aid) as f64 * 100.0;
        assert!((9.0..=11.0).contains(&share), "the aid dropped {share} % of arrivals: {u}");
        assert!(loss >= 9.0, "loss {loss} %: {u}");
    } else {
        assert!((9.0..=11.0).contains(&loss), "loss {loss} %: {u}");
    }
    assert!(u["jitter_ms"].as_f64().is_some_and(|j| j >= 0.0), "{u}");
    let c = s.shutdown();
    assert!(c.dropped * 10 >= c.dropped + c.datagrams - 9, "the aid dropped every 10th: {c:?}");
}

#[test]
fn rr_and_crr_time_every_round_trip() {
    let s = server(None);
    let target = s.addr().to_string();
    let out = load(&[&target, "-m", "rr", "-l", "100", "-P", "2", "-d", "1s", "--json"]);
    ok(&out);
    let j = json(&out);
    let rr = &j["result"]["rr"];
    assert!(rr["transactions"].as_u64().is_some_and(|n| n > 100), "{rr}");
    assert_eq!(rr["connections"].as_u64(), Some(2), "rr keeps one connection per stream");
    let p50 = rr["rtt_us"]["p50"].as_f64().expect("p50");
    assert!(p50 >= 1.0 && p50 <= rr["rtt_us"]["p99"].as_f64().unwrap(), "{rr}");
    let out = load(&[&target, "-m", "crr", "-d", "1s", "--json"]);
    ok(&out);
    let crr = json(&out)["result"]["crr"].clone();
    let n = crr["transactions"].as_u64().expect("transactions");
    // A connection per round trip (the warm-up's too, none here).
    assert_eq!(crr["connections"].as_u64(), Some(n), "{crr}");
    let c = s.shutdown();
    assert!(c.connections > n, "{c:?}");
}

/// `perflab serve --port 0 --net 0` as a child, and its net port.
fn serve_child() -> (Child, String) {
    let mut child = Command::new(BIN)
        .args(["serve", "--port", "0", "--net", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("serve");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let addr = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("serving net on ").map(str::to_string))
        .expect("serving net on ...");
    (child, addr)
}

#[test]
fn a_server_killed_mid_run_fails_with_a_classified_error() {
    let (mut srv, addr) = serve_child();
    let client = Command::new(BIN)
        .args(["load", "net", &addr, "-d", "20s", "-q"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("client");
    std::thread::sleep(Duration::from_millis(1500));
    srv.kill().expect("kill the server");
    let _ = srv.wait();
    let out = client.wait_with_output().expect("client");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("net stream: reset: stream 0 (upload) after"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("failed:"));
}

#[test]
fn a_plan_trial_fails_with_the_class_when_its_server_dies() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (mut srv, addr) = serve_child();
    let plan = write_plan(
        tmp.path(),
        &format!(
            "name = \"net\"\n[workload]\ntype = \"net\"\ntarget = \"{addr}\"\nmode = \"rr\"\n\
             [phases]\nbaseline = \"0s\"\nwarmup = \"0s\"\nload = \"4s\"\nrecovery = \"0s\"\n"
        ),
    );
    let run = Command::new(BIN)
        .args(["run", "--quiet"])
        .arg(&plan)
        .current_dir(tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run");
    std::thread::sleep(Duration::from_millis(1500));
    srv.kill().expect("kill the server");
    let _ = srv.wait();
    let out = run.wait_with_output().expect("run");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("1 failed"), "{text}");
    let run_dir = crate::common::only_run_dir(&tmp.path().join("runs"));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("report.json")).expect("report.json")).expect("json");
    let failed = report["failed"].to_string();
    assert!(
        failed.contains("net rr: closed: ") || failed.contains("net rr: reset: "),
        "{failed}"
    );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, want) in [
        (vec!["10.1.2.3"], "needs a port (HOST:PORT"),
        (vec!["127.0.0.1:5201", "-m", "tcp"], "mode \"tcp\""),
        (vec!["127.0.0.1:5201", "-m", "udp", "-b", "fast"], "rate \"fast\""),
        (vec!["127.0.0.1:5201", "-m", "udp", "-l", "8"], "size must be from 32"),
        (vec!["127.0.0.1:5201", "-P", "0"], "streams must be at least 1"),
    ] {
        let out = load(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(
        tmp.path(),
        "name = \"bad\"\n[workload]\ntype = \"net\"\ntarget = \"127.0.0.1:5201\"\nmode = \"udp\"\nrate = \"lots\"\n\
         [phases]\nload = \"1s\"\n",
    );
    let out = Command::new(BIN).args(["run", "--dry-run"]).arg(&plan).output().expect("dry run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(":6:1: rate \"lots\""), "{err}");
}

#[test]
fn a_dry_run_describes_the_net_load_and_its_primary_figures() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(
        tmp.path(),
        "name = \"d\"\n[workload]\ntype = \"net\"\ntarget = \"127.0.0.1:5201\"\nstreams = 4\nbuffer = \"4M\"\n\
         [phases]\nload = \"1s\"\n",
    );
    let out = Command::new(BIN).args(["run", "--dry-run"]).arg(&plan).output().expect("dry run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        text.contains(
            "net: 4 TCP stream(s) upload to 127.0.0.1:5201, writes of 131072 B, socket buffers 4194304 B · \
             target = \"127.0.0.1:5201\", streams = 4, buffer = \"4M\" · "
        ),
        "{text}"
    );
    assert!(text.contains("primary: throughput gbit_per_s, latency rtt_mean_us"), "{text}");
}
