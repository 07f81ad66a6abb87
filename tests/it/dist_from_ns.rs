//! `[workload] from` over two machines, end to end: the lab of `dist_lab` with an sshd in each
//! load namespace (its own config, host key and authorized key in a temp dir; stopped by pid on
//! every exit path, before the lab goes). One `perflab run` in the target namespace, whose plan
//! names the two namespaces as hosts `n0` and `n1` and sends its load `from = ["n0", "n1"]`,
//! reaches each agent over ssh across the bridge. The server counted each namespace's requests
//! apart: each is its segment's slice, the merged trial's count is the plan's and the server's,
//! and its p99 is that of the histogram holding every request's latency. Needs root and sshd;
//! skipped (loudly) otherwise.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use crate::dist_lab::{self, in_ns, Lab, BIN, LOAD_NS, TARGET_NS};
use perflab::store::Store;

/// sshd's port in each load namespace.
const SSH_PORT: u16 = 2232;

/// The sshds, stopped (by the pids this test started) when dropped.
struct Sshds(Vec<Child>);

impl Drop for Sshds {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Whether the target namespace reaches `addr:port` (a TCP connection from there).
fn reachable_from_target(addr: &str, port: u16) -> bool {
    in_ns(TARGET_NS)
        .args(["bash", "-c", &format!("exec 3<>/dev/tcp/{addr}/{port}")])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Keys in `d` (a host key; a client key, authorized), then an sshd in each load namespace,
/// listening on that namespace's address; None (nothing left running) when one does not answer
/// from the target namespace within 10 s.
fn start_sshds(d: &Path) -> Option<Sshds> {
    for key in ["host_key", "client_key"] {
        let path = d.join(key);
        let path = path.to_str()?;
        if !dist_lab::sh(&["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path]) {
            return None;
        }
    }
    std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).ok()?;
    let _ = std::fs::create_dir_all("/run/sshd");
    let mut sshds = Sshds(Vec::new());
    for (k, ns) in LOAD_NS.iter().enumerate() {
        let config = format!(
            "Port {SSH_PORT}\nListenAddress {addr}\nHostKey {hk}\nAuthorizedKeysFile {ak}\n\
             PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             UsePAM no\nStrictModes no\nPidFile {pid}\nLogLevel ERROR\n",
            addr = dist_lab::source(k),
            hk = d.join("host_key").display(),
            ak = d.join("authorized_keys").display(),
            pid = d.join(format!("sshd{k}.pid")).display(),
        );
        let conf = d.join(format!("sshd{k}.conf"));
        std::fs::write(&conf, config).ok()?;
        let child = in_ns(ns)
            .args(["/usr/sbin/sshd", "-D", "-e", "-f"])
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        sshds.0.push(child);
    }
    let end = Instant::now() + Duration::from_secs(10);
    for k in 0..LOAD_NS.len() {
        while !reachable_from_target(&dist_lab::source(k), SSH_PORT) {
            if Instant::now() > end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    Some(sshds)
}

/// The lab's plan, its load sent `from` hosts `n0` and `n1` (load namespace k is `nk`).
fn plan_text(requests: u64, key: &Path) -> String {
    let lab = dist_lab::plan_text("from-ns", requests);
    let mut text = lab.replace(
        &format!("requests = {requests}\n"),
        &format!("requests = {requests}\nfrom = [\"n0\", \"n1\"]\n"),
    );
    text.push_str("\n[monitor]\nhosts = [\"local\"]\n\n[hosts]\n");
    for k in 0..LOAD_NS.len() {
        text.push_str(&format!(
            "n{k} = {{ ssh = \"root@{addr}\", port = {SSH_PORT}, identity = \"{key}\", perflab = \"{BIN}\", \
             ssh_options = [\"StrictHostKeyChecking=no\", \"UserKnownHostsFile=/dev/null\", \"LogLevel=ERROR\"] }}\n",
            addr = dist_lab::source(k),
            key = key.display(),
        ));
    }
    text
}

#[test]
fn from_two_sshd_namespaces_each_sends_its_slice_and_the_merge_counts_what_the_server_served() {
    if !dist_lab::is_root() {
        common::skip_unless_required("network namespaces and sshd need root");
        return;
    }
    if !Path::new("/usr/sbin/sshd").exists() || Command::new("ssh").arg("-V").output().is_err() {
        common::skip_unless_required("`from` over ssh needs openssh-server and openssh-client (Debian packages)");
        return;
    }
    let Some(mut lab) = Lab::make() else {
        common::skip_unless_required("cannot make network namespaces here (ip netns, veth, bridge)");
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    // Declared after the lab: dropped (stopped) before the lab removes the namespaces.
    let Some(_sshds) = start_sshds(tmp.path()) else {
        common::skip_unless_required("cannot start an sshd in each load namespace");
        return;
    };
    lab.serve();
    let requests = 2001;
    let plan = common::write_plan(tmp.path(), &plan_text(requests, &tmp.path().join("client_key")));
    let runs = tmp.path().join("runs");
    let out = in_ns(TARGET_NS)
        .arg(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("perflab run");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let served = lab.stop_and_count();
    let store = Store::open(common::only_run_dir(&runs)).expect("the run's store");
    let t = store.trials().expect("trials").remove(0);
    assert!(t.ok(), "{:?}", t.failure);
    // Each segment's own count, from its line: `segment 0/2 on n0: began ... s after the trial's
    // start; requests 1001, errors 0`.
    let raw = store.raw_output(t.id).expect("raw lines");
    let sent: Vec<Option<f64>> = (0..LOAD_NS.len())
        .map(|i| {
            let line = raw
                .iter()
                .find(|l| l.starts_with(&format!("segment {i}/2 on n{i}:")))
                .unwrap_or_else(|| panic!("segment {i}'s line in {raw:?}"));
            let counts = line.split_once("; ")?.1;
            counts.split(", ").find_map(|c| c.strip_prefix("requests ")?.parse().ok())
        })
        .collect();
    // Segment i ran in namespace i.
    let sources: Vec<String> = (0..LOAD_NS.len()).map(dist_lab::source).collect();
    dist_lab::assert_split_counts(&t, &sent, &sources, requests, &served);
    // The segments' histograms are added into the stored one, bucket by bucket: every request of
    // every machine is in it, and the p99 is read from it.
    let every = &t.histograms.iter().find(|h| h.name == "latency").expect("latency histogram").hist;
    dist_lab::assert_p99_of_every_value(&t, every, requests);
}
