//! The network-namespace lab of the split-load tests (`dist_netns`, `dist_slurm`, `dist_from_ns`):
//! a target namespace running `perflab serve`, which counts the requests it served per source
//! address, and two load namespaces, all three on one bridge (in the target namespace) of the test
//! subnet. Before any interface gets an address, an `unreachable` route for the whole test subnet
//! is added in the root namespace; the namespaces (with their interfaces), the route and the server
//! are removed on every exit path (the lab's Drop, and a clean-up of a killed earlier run's
//! leftovers first). One lab at a time on the machine (a lock file). The assertions the tests make
//! on a merged load are here too, so that all make the same ones.

use hdrhistogram::Histogram;
use perflab::store::{Store, StoredTrial};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_perflab");
pub const TARGET_NS: &str = "perflab-it31t";
pub const LOAD_NS: [&str; 2] = ["perflab-it31a", "perflab-it31b"];
const SUBNET: &str = "10.213.31.0/24";
/// The target's address, on the bridge.
pub const TARGET: &str = "10.213.31.100";
pub const PORT: u16 = 2231;
const BRIDGE: &str = "pl31br";

/// Load namespace `k`'s address: what the server counts its requests under.
pub fn source(k: usize) -> String {
    format!("10.213.31.{}", k + 1)
}

/// Run a command quietly; whether it succeeded.
pub fn sh(args: &[&str]) -> bool {
    Command::new(args[0])
        .args(&args[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Remove the namespaces (their veth ends and the bridge go with them) and the route.
fn clean() {
    for ns in LOAD_NS.iter().chain([&TARGET_NS]) {
        sh(&["ip", "netns", "del", ns]);
    }
    sh(&["ip", "route", "del", "unreachable", SUBNET]);
}

/// The namespaces, the route and the server, removed on drop.
pub struct Lab {
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

impl Lab {
    /// The three namespaces: the target's `TARGET/24` on the bridge, load namespace k's
    /// `source(k)/24` on a veth pair whose other end is a port of the bridge. None where they
    /// cannot be made (then nothing is left behind).
    pub fn make() -> Option<Lab> {
        let lock = machine_lock()?;
        clean();
        let lab = Lab { serve: None, _lock: lock };
        // The route first: from now on no packet for the subnet leaves through the real interface.
        if !sh(&["ip", "route", "add", "unreachable", SUBNET]) {
            return None;
        }
        let t = TARGET_NS;
        let mut ok = LOAD_NS.iter().chain([&t]).all(|ns| sh(&["ip", "netns", "add", ns]))
            && sh(&["ip", "-n", t, "link", "set", "lo", "up"])
            && sh(&["ip", "-n", t, "link", "add", BRIDGE, "type", "bridge"])
            && sh(&["ip", "-n", t, "addr", "add", &format!("{TARGET}/24"), "dev", BRIDGE])
            && sh(&["ip", "-n", t, "link", "set", BRIDGE, "up"]);
        for (k, ns) in LOAD_NS.iter().enumerate() {
            let (me, port) = (format!("pl31l{k}"), format!("pl31t{k}"));
            ok =
                ok && sh(&[
                    "ip", "link", "add", &me, "netns", ns, "type", "veth", "peer", "name", &port, "netns", t,
                ]) && sh(&["ip", "-n", ns, "addr", "add", &format!("{}/24", source(k)), "dev", &me])
                    && sh(&["ip", "-n", ns, "link", "set", &me, "up"])
                    && sh(&["ip", "-n", ns, "link", "set", "lo", "up"])
                    && sh(&["ip", "-n", t, "link", "set", &port, "master", BRIDGE])
                    && sh(&["ip", "-n", t, "link", "set", &port, "up"]);
        }
        ok.then_some(lab)
    }

    /// Start `perflab serve` in the target namespace, on `TARGET:PORT`.
    pub fn serve(&mut self) {
        let serve = in_ns(TARGET_NS)
            .arg(BIN)
            .args(["serve", "--host", "0.0.0.0", "--port", &PORT.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start perflab serve");
        self.serve = Some(serve);
    }

    /// Stop the server (SIGTERM: it prints `served N requests: n1 to ADDR1, n2 to ADDR2`) and read
    /// N and each source's count.
    pub fn stop_and_count(&mut self) -> Served {
        let mut serve = self.serve.take().expect("server");
        // SAFETY: kill takes two integers; the pid is the nsenter this lab started, which passes
        // the signal on by exec'ing perflab serve in its place.
        unsafe { libc::kill(serve.id() as i32, libc::SIGTERM) };
        let mut text = String::new();
        serve.stdout.take().expect("stdout").read_to_string(&mut text).expect("read");
        let _ = serve.wait();
        let line = text.lines().find(|l| l.starts_with("served ")).unwrap_or_default();
        let n = line.strip_prefix("served ").and_then(|l| l.split_whitespace().next()?.parse().ok());
        let total = n.unwrap_or_else(|| panic!("no `served N requests` line: {text}"));
        let by_source = line
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
        Served { total, by_source }
    }
}

/// What the server served: in all, and to each source address.
pub struct Served {
    pub total: u64,
    pub by_source: BTreeMap<String, u64>,
}

/// A command run in namespace `ns` (nsenter: the host's /sys and cgroups stay what the monitor
/// and the daemons read; `ip netns exec` would remount /sys).
pub fn in_ns(ns: &str) -> Command {
    let mut c = Command::new("nsenter");
    c.arg(format!("--net=/run/netns/{ns}"));
    c
}

/// The plan both tests split: `requests` HTTP requests to the target over 4 connections.
pub fn plan_text(name: &str, requests: u64) -> String {
    format!(
        "name = \"{name}\"\n\n[workload]\ntype = \"http\"\nurl = \"http://{TARGET}:{PORT}/\"\nconnections = 4\nrequests = {requests}\n\n\
         [phases]\nbaseline = \"200ms\"\nwarmup = \"0s\"\nload = \"5s\"\nrecovery = \"200ms\"\ninterval = \"100ms\"\n"
    )
}

/// What a split load must give: each segment (run directory `dirs[i]`, sent from `sources[i]`)
/// sent its slice of `requests` and the server counted that many from its address; the merged
/// run counts the whole load, as one machine sends it, and the server served exactly that; the
/// merged p99 is the p99 of every recorded latency, one histogram.
pub fn assert_split_load(dirs: &[PathBuf], sources: &[String], merged: &Path, requests: u64, served: &Served) {
    let t = Store::open(merged).expect("merged run").trials().expect("trials");
    let segments: Vec<StoredTrial> = dirs
        .iter()
        .map(|d| Store::open(d).expect("segment").trials().expect("trials").remove(0))
        .collect();
    let sent: Vec<Option<f64>> = segments.iter().map(|s| s.metric("requests")).collect();
    assert_split_counts(&t[0], &sent, sources, requests, served);
    let mut union = perflab::model::latency_histogram();
    for s in &segments {
        let h = s.histograms.iter().find(|h| h.name == "latency").expect("latency histogram");
        union.add(&h.hist).expect("add");
    }
    assert_p99_of_every_value(&t[0], &union, requests);
}

/// The counts of a split load: the merged trial's requests are the plan's `requests` and the
/// server's count, with no error; segment `i` sent `sent[i]` requests, its slice (requests 0, N,
/// 2N, ... are segment 0's), and the server counted that many from `sources[i]`.
pub fn assert_split_counts(merged: &StoredTrial, sent: &[Option<f64>], sources: &[String], requests: u64, served: &Served) {
    let n = sent.len() as u64;
    assert_eq!(
        merged.metric("requests"),
        Some(requests as f64),
        "the whole load, as one machine sends it"
    );
    assert_eq!(served.total, requests, "the server served what the merge counts");
    assert_eq!(merged.metric("errors"), Some(0.0));
    for (i, (sent, source)) in sent.iter().zip(sources).enumerate() {
        let share = requests / n + u64::from((i as u64) < requests % n);
        assert_eq!(*sent, Some(share as f64), "segment {i}/{n}");
        let by_source = &served.by_source;
        assert_eq!(by_source.get(source), Some(&share), "served to {source}: {by_source:?}");
    }
}

/// The merged p99 is that of `every`, the histogram of every recorded latency of every segment,
/// which holds one value per request.
pub fn assert_p99_of_every_value(merged: &StoredTrial, every: &Histogram<u64>, requests: u64) {
    assert_eq!(every.len(), requests, "one latency per request");
    assert_eq!(merged.metric("latency_p99_ms"), Some(every.value_at_quantile(0.99) as f64 / 1000.0));
}

pub fn is_root() -> bool {
    // SAFETY: geteuid takes nothing and cannot fail.
    unsafe { libc::geteuid() == 0 }
}
