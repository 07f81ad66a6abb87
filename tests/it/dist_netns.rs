//! A load split over two machines, end to end: two network namespaces each run one segment
//! (`perflab run --segment i/2 --start-at T0`) against `perflab serve` in a third, over veth
//! pairs; `perflab merge` adds them up. The merged request count equals the plan's `requests` and
//! the count the server served (what one machine sending the whole load would have sent). Before
//! any interface gets an address, an `unreachable` route for the whole test subnet is added in the
//! root namespace; the namespaces (with their interfaces), the route and the server are removed on
//! every exit path (the guard's Drop, and a clean-up of a killed earlier run's leftovers first).
//! Needs root; skipped (loudly) otherwise.

use perflab::store::Store;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::common;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");
const TARGET_NS: &str = "perflab-it31t";
const LOAD_NS: [&str; 2] = ["perflab-it31a", "perflab-it31b"];
const SUBNET: &str = "10.213.31.0/24";
/// The target's address, on its loopback; each load namespace reaches it over its own veth pair.
const TARGET: &str = "10.213.31.100";
const PORT: u16 = 2231;

fn sh(args: &[&str]) -> bool {
    Command::new(args[0])
        .args(&args[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Remove the namespaces (their veth ends go with them; the peer ends are inside them too) and
/// the route.
fn clean() {
    for ns in LOAD_NS.iter().chain([&TARGET_NS]) {
        sh(&["ip", "netns", "del", ns]);
    }
    sh(&["ip", "route", "del", "unreachable", SUBNET]);
}

/// The namespaces, the route and the server, removed on drop.
struct Lab {
    serve: Option<Child>,
    _lock: std::fs::File,
}

impl Drop for Lab {
    fn drop(&mut self) {
        if let Some(mut c) = self.serve.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        clean();
    }
}

/// One test run at a time on this machine holds the namespaces' names and the subnet.
fn machine_lock() -> Option<std::fs::File> {
    use std::os::fd::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open("/tmp/perflab-it31.lock")
        .ok()?;
    // SAFETY: flock takes the open file's descriptor and a flag; it touches no memory of ours.
    (unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } == 0).then_some(f)
}

/// The three namespaces: load namespace k's `10.213.31.(4k+1)/30` faces the target's
/// `10.213.31.(4k+2)/30`, and routes the target's address through it.
fn make_lab() -> Option<Lab> {
    let lock = machine_lock()?;
    clean();
    let lab = Lab { serve: None, _lock: lock };
    // The route first: from now on no packet for the subnet leaves through the real interface.
    if !sh(&["ip", "route", "add", "unreachable", SUBNET]) {
        return None;
    }
    let mut ok = LOAD_NS.iter().chain([&TARGET_NS]).all(|ns| sh(&["ip", "netns", "add", ns]))
        && sh(&["ip", "-n", TARGET_NS, "link", "set", "lo", "up"])
        && sh(&["ip", "-n", TARGET_NS, "addr", "add", &format!("{TARGET}/32"), "dev", "lo"]);
    for (k, ns) in LOAD_NS.iter().enumerate() {
        let (me, peer) = (format!("pl31l{k}"), format!("pl31t{k}"));
        let (mine, theirs) = (format!("10.213.31.{}", 4 * k + 1), format!("10.213.31.{}", 4 * k + 2));
        ok =
            ok && sh(&[
                "ip", "link", "add", &me, "netns", ns, "type", "veth", "peer", "name", &peer, "netns", TARGET_NS,
            ]) && sh(&["ip", "-n", ns, "addr", "add", &format!("{mine}/30"), "dev", &me])
                && sh(&["ip", "-n", TARGET_NS, "addr", "add", &format!("{theirs}/30"), "dev", &peer])
                && sh(&["ip", "-n", ns, "link", "set", &me, "up"])
                && sh(&["ip", "-n", ns, "link", "set", "lo", "up"])
                && sh(&["ip", "-n", TARGET_NS, "link", "set", &peer, "up"])
                && sh(&["ip", "-n", ns, "route", "add", &format!("{TARGET}/32"), "via", &theirs]);
    }
    ok.then_some(lab)
}

/// `perflab ARGS` in namespace `ns` (nsenter: the host's /sys and cgroups stay what the monitor reads).
fn in_ns(ns: &str) -> Command {
    let mut c = Command::new("nsenter");
    c.arg(format!("--net=/run/netns/{ns}")).arg(BIN);
    c
}

#[test]
fn two_namespaces_split_one_load_and_the_merge_counts_what_the_server_served() {
    if !nix_is_root() {
        common::skip_unless_required("network namespaces need root");
        return;
    }
    let Some(mut lab) = make_lab() else {
        common::skip_unless_required("cannot make network namespaces here (ip netns, veth)");
        return;
    };
    let serve = in_ns(TARGET_NS)
        .args(["serve", "--host", "0.0.0.0", "--port", &PORT.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start perflab serve");
    lab.serve = Some(serve);
    let tmp = tempfile::tempdir().expect("tmp");
    let requests = 2001;
    let plan = common::write_plan(
        tmp.path(),
        &format!(
            "name = \"netns\"\n\n[workload]\ntype = \"http\"\nurl = \"http://{TARGET}:{PORT}/\"\nconnections = 4\nrequests = {requests}\n\n\
             [phases]\nbaseline = \"200ms\"\nwarmup = \"0s\"\nload = \"5s\"\nrecovery = \"200ms\"\ninterval = \"100ms\"\n"
        ),
    );
    let t0 = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64() + 2.5;
    let segments: Vec<Child> = LOAD_NS
        .iter()
        .enumerate()
        .map(|(i, ns)| {
            in_ns(ns)
                .args(["run", "--quiet", "--segment", &format!("{i}/2"), "--start-tolerance", "30s"])
                .args(["--start-at", &format!("{t0:.3}"), "--runs-dir"])
                .arg(tmp.path().join(format!("seg{i}")))
                .arg(&plan)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start a segment")
        })
        .collect();
    for (i, s) in segments.into_iter().enumerate() {
        let out = s.wait_with_output().expect("segment");
        assert_eq!(out.status.code(), Some(0), "segment {i}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let (served, by_source) = stop_and_count(&mut lab);
    let merged = tmp.path().join("merged");
    let dirs: Vec<_> = (0..2).map(|i| common::only_run_dir(&tmp.path().join(format!("seg{i}")))).collect();
    let out = Command::new(BIN)
        .arg("merge")
        .args(&dirs)
        .arg("--out")
        .arg(&merged)
        .output()
        .expect("merge");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let t = Store::open(&merged).expect("merged run").trials().expect("trials");
    assert_eq!(
        t[0].metric("requests"),
        Some(requests as f64),
        "the whole load, as one machine sends it"
    );
    assert_eq!(served, requests, "the server served what the merge counts");
    assert_eq!(t[0].metric("errors"), Some(0.0));
    each_segment_sent_its_share(&dirs, requests);
    // The server counted each namespace's requests apart: segment i's slice came from namespace i.
    for i in 0..2u64 {
        let share = requests / 2 + u64::from(i < requests % 2);
        let source = format!("10.213.31.{}", 4 * i + 1);
        assert_eq!(by_source.get(&source), Some(&share), "served to {source}: {by_source:?}");
    }
    // The merged percentiles are those of every recorded latency, one histogram.
    let mut union = perflab::model::latency_histogram();
    for d in &dirs {
        let s = Store::open(d).expect("segment").trials().expect("trials");
        let h = s[0].histograms.iter().find(|h| h.name == "latency").expect("latency histogram");
        union.add(&h.hist).expect("add");
    }
    assert_eq!(union.len(), requests);
    assert_eq!(t[0].metric("latency_p99_ms"), Some(union.value_at_quantile(0.99) as f64 / 1000.0));
}

/// Stop the server (SIGTERM: it prints `served N requests: n1 to ADDR1, n2 to ADDR2`) and read N
/// and each source's count.
fn stop_and_count(lab: &mut Lab) -> (u64, std::collections::BTreeMap<String, u64>) {
    let mut serve = lab.serve.take().expect("server");
    // SAFETY: kill takes two integers; the pid is the nsenter this test started, which passes the
    // signal on by exec'ing perflab serve in its place.
    unsafe { libc::kill(serve.id() as i32, libc::SIGTERM) };
    let mut text = String::new();
    serve.stdout.take().expect("stdout").read_to_string(&mut text).expect("read");
    let _ = serve.wait();
    let line = text.lines().find(|l| l.starts_with("served ")).unwrap_or_default();
    let n = line.strip_prefix("served ").and_then(|l| l.split_whitespace().next()?.parse().ok());
    let n = n.unwrap_or_else(|| panic!("no `served N requests` line: {text}"));
    let sources = line
        .split_once(": ")
        .map(|(_, parts)| {
            parts
                .split(", ")
                .filter_map(|p| {
                    let (count, addr) = p.split_once(" to ")?;
                    Some((addr.to_string(), count.parse().ok()?))
                })
                .collect()
        })
        .unwrap_or_default();
    (n, sources)
}

/// Requests 0, 2, 4, ... are segment 0's.
fn each_segment_sent_its_share(dirs: &[std::path::PathBuf], requests: u64) {
    for (i, d) in dirs.iter().enumerate() {
        let t = Store::open(Path::new(d)).expect("segment").trials().expect("trials");
        let share = requests / 2 + u64::from((i as u64) < requests % 2);
        assert_eq!(t[0].metric("requests"), Some(share as f64), "segment {i}/2");
    }
}

fn nix_is_root() -> bool {
    // SAFETY: geteuid takes nothing and cannot fail.
    unsafe { libc::geteuid() == 0 }
}
