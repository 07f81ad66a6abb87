//! A load split by a real Slurm, end to end: `perflab dist slurm --submit` runs one segment on
//! each of two Slurm nodes and merges them, with the assertions of `dist_netns` (each node's
//! requests counted by the server equal its segment's slice, the merged total equals what the
//! server served, the merged p99 is that of every recorded latency).
//!
//! The cluster is the test's own, in the namespaces of `dist_lab`: `munged` with a key of its own
//! in a temporary directory, `slurmctld` in the target namespace (the submit host, where `perflab
//! serve` runs too), one `slurmd` per load namespace (`nsenter --net` and a UTS namespace of its
//! own named `n1`, `n2`: `ip netns exec` would remount /sys), all pointed at a `slurm.conf` in the
//! temporary directory by `SLURM_CONF`; nothing under /etc is written. The cluster's jobs are
//! cancelled and its daemons stopped by PID on every exit path (the guard's Drop), before the lab
//! removes the namespaces. Needs root, Slurm (`slurmctld`, `slurmd`, `slurm-client`) and `munge`:
//! skipped loudly without them, failed under `PERFLAB_REQUIRE_ALL=1`.

use std::fmt::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use crate::dist_lab::{self, in_ns, Lab, BIN, LOAD_NS, TARGET, TARGET_NS};

const TOOLS: [&str; 8] = ["munged", "slurmctld", "slurmd", "sbatch", "srun", "sinfo", "squeue", "scancel"];

/// `tool` on the PATH or in /usr/sbin (where Debian puts the daemons).
fn find(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// The test's Slurm cluster: its directory (key, sockets, configuration, state, logs) and its
/// daemons, stopped and removed on drop.
struct Cluster {
    dir: tempfile::TempDir,
    daemons: Vec<(String, Child)>,
}

impl Cluster {
    fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    /// A Slurm command run in the target namespace (the submit host), with this cluster's
    /// configuration.
    fn command(&self, program: &str) -> Command {
        let mut c = in_ns(TARGET_NS);
        c.arg(program);
        this_cluster(&mut c, &self.conf());
        c
    }

    /// Start a daemon whose output goes to `DIR/NAME.out`.
    fn spawn(&mut self, name: &str, mut c: Command) {
        let out = std::fs::File::create(self.dir.path().join(format!("{name}.out"))).expect("daemon output");
        let err = out.try_clone().expect("daemon output");
        this_cluster(&mut c, &self.conf());
        let child = c
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("start {name}: {e}"));
        self.daemons.push((name.to_string(), child));
    }

    /// The last lines of every daemon's log, for a failure's message.
    fn logs(&self) -> String {
        let mut out = String::new();
        let mut files: Vec<_> = std::fs::read_dir(self.dir.path())
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        for p in files.iter().filter(|p| p.extension().is_some_and(|e| e == "log" || e == "out")) {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let _ = writeln!(out, "--- {}", p.display());
            for l in &lines[lines.len().saturating_sub(15)..] {
                let _ = writeln!(out, "{l}");
            }
        }
        out
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // This cluster's jobs first (all of them are the test's): no step outlives its slurmd.
        let _ = self.command("scancel").args(["--user", "root"]).stderr(Stdio::null()).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            let out = self.command("squeue").arg("-h").stderr(Stdio::null()).output();
            if out.map_or(true, |o| !o.status.success() || o.stdout.is_empty()) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        // Then the daemons, the nodes before the controller before munged: SIGTERM, then SIGKILL
        // to one that has not ended within 5 s.
        for (_, c) in self.daemons.iter().rev() {
            // SAFETY: kill takes two integers; the pid is a daemon this test started (nsenter and
            // unshare exec it in their place).
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        for (_, c) in self.daemons.iter_mut().rev() {
            while c.try_wait().is_ok_and(|s| s.is_none()) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `c` pointed at this cluster's configuration, without the Slurm variables of the test's own
/// environment (when the tests run inside a Slurm job, or a user set `SBATCH_PARTITION`).
fn this_cluster(c: &mut Command, conf: &Path) {
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if ["SLURM_", "SBATCH_", "SRUN_", "SALLOC_"].iter().any(|p| k.starts_with(p)) {
            c.env_remove(k.as_ref());
        }
    }
    c.env("SLURM_CONF", conf);
}

/// `slurm.conf` for two nodes, `n1` and `n2` in the load namespaces, and the controller at
/// `TARGET` on this machine's host name; everything it writes in `dir`.
fn slurm_conf(dir: &Path, hostname: &str) -> String {
    let d = dir.display();
    let mut c = format!(
        "ClusterName=perflabit\nSlurmctldHost={hostname}({TARGET})\nAuthType=auth/munge\nCredType=cred/munge\n\
         AuthInfo=socket={d}/munge/socket\nSlurmUser=root\nSlurmdUser=root\nStateSaveLocation={d}/state\n\
         SlurmdSpoolDir={d}/spool/%n\nSlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd-%n.pid\n\
         SlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd-%n.log\nProctrackType=proctrack/linuxproc\n\
         TaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\nSelectType=select/cons_tres\n\
         SchedulerType=sched/builtin\nMpiDefault=none\nReturnToService=2\nKillWait=2\n"
    );
    // `sbatch --wait` looks at the job 2 s after submitting it, then 8 s and 32 s later, unless
    // MinJobAge is short: 0 (finished jobs are never forgotten, a cluster of one test) makes it
    // look every 2 s.
    c.push_str("MinJobAge=0\n");
    for k in 1..=LOAD_NS.len() {
        let _ = writeln!(c, "NodeName=n{k} NodeAddr={} CPUs=1 RealMemory=100", dist_lab::source(k - 1));
    }
    c.push_str("PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=5 State=UP\n");
    c
}

/// munged, slurmctld and the two slurmd's started, and the nodes idle.
fn start_cluster() -> Cluster {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path().to_path_buf();
    // munged wants every directory above its socket searchable by all.
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o711)).expect("chmod");
    for sub in ["munge", "state", "spool/n1", "spool/n2"] {
        std::fs::create_dir_all(d.join(sub)).expect("mkdir");
    }
    std::fs::set_permissions(d.join("munge"), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut key = vec![0u8; 128];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").expect("urandom"), &mut key).expect("key");
    let key_path = d.join("munge/munge.key");
    std::fs::write(&key_path, key).expect("munge key");
    std::fs::set_permissions(&key_path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("hostname");
    // slurmctld compares SlurmctldHost with its host name up to the first dot.
    let short = hostname.trim().split('.').next().unwrap_or_default();
    std::fs::write(d.join("slurm.conf"), slurm_conf(&d, short)).expect("slurm.conf");
    let mut cluster = Cluster { dir, daemons: Vec::new() };
    let m = d.join("munge");
    let path = |tool: &str| find(tool).expect("found before").display().to_string();
    let mut munged = Command::new(path("munged"));
    munged.arg("-F").args(
        ["socket", "key-file", "log-file", "pid-file", "seed-file"]
            .iter()
            .zip(["socket", "munge.key", "munged.log", "munged.pid", "munged.seed"])
            .map(|(opt, f)| format!("--{opt}={}", m.join(f).display())),
    );
    cluster.spawn("munged", munged);
    wait_for(&cluster, "munged's socket", || m.join("socket").exists());
    let mut ctld = in_ns(TARGET_NS);
    ctld.arg(path("slurmctld")).arg("-D");
    cluster.spawn("slurmctld", ctld);
    for (k, ns) in LOAD_NS.iter().enumerate() {
        let node = format!("n{}", k + 1);
        let mut slurmd = in_ns(ns);
        let script = "hostname \"$0\" && exec \"$1\" -D -N \"$0\"";
        slurmd.args(["unshare", "--uts", "sh", "-c", script, &node, &path("slurmd")]);
        cluster.spawn(&format!("slurmd-{node}"), slurmd);
    }
    wait_for(&cluster, "both nodes idle (sinfo)", || {
        let out = cluster.command("sinfo").args(["-h", "-N", "-o", "%N=%T"]).output();
        let text = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
        text.contains("n1=idle") && text.contains("n2=idle")
    });
    cluster
}

/// Wait up to 20 s for `ready`; a failure with the daemons' logs otherwise.
fn wait_for(cluster: &Cluster, what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ready() {
        assert!(Instant::now() < deadline, "no {what} within 20 s\n{}", cluster.logs());
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn slurm_runs_one_segment_per_node_and_the_merge_counts_what_the_server_served() {
    if !dist_lab::is_root() {
        common::skip_unless_required("a Slurm cluster in network namespaces needs root");
        return;
    }
    let missing: Vec<&str> = TOOLS.into_iter().filter(|t| find(t).is_none()).collect();
    if !missing.is_empty() {
        let why = format!("Slurm or MUNGE is not installed (no {})", missing.join(", "));
        common::skip_unless_required(&why);
        return;
    }
    let Some(mut lab) = Lab::make() else {
        common::skip_unless_required("cannot make network namespaces here (ip netns, veth, bridge)");
        return;
    };
    lab.serve();
    // Declared after the lab: dropped first, the daemons stopped before their namespaces go.
    let cluster = start_cluster();
    let tmp = tempfile::tempdir().expect("tmp");
    let requests = 2001;
    let plan = common::write_plan(tmp.path(), &dist_lab::plan_text("slurm", requests));
    let shared = tmp.path().join("shared");
    let out = submit(&cluster, &plan, &shared);
    let served = lab.stop_and_count();
    let merged = shared.join("merged");
    assert!(out.contains(&format!("the merged run: {}", merged.display())), "{out}");
    let dirs: Vec<_> = (0..2).map(|i| common::only_run_dir(&shared.join(format!("segment-{i}")))).collect();
    // Each segment ran on its own node; the server counts node nK's requests under load
    // namespace K-1's address.
    let mark = perflab::store::Store::open(&merged)
        .expect("merged")
        .merged()
        .expect("mark")
        .expect("merged mark");
    let hosts: Vec<&str> = mark.segments.iter().map(|s| s.hostname.as_str()).collect();
    let mut sorted = hosts.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["n1", "n2"], "one segment per node: {out}");
    let sources: Vec<String> = hosts
        .iter()
        .map(|h| dist_lab::source(h[1..].parse::<usize>().expect("node number") - 1))
        .collect();
    dist_lab::assert_split_load(&dirs, &sources, &merged, requests, &served);
    let late: Vec<f64> = mark.segments.iter().map(|s| s.late_s.expect("lateness") * 1000.0).collect();
    let skew = late.iter().copied().fold(f64::MIN, f64::max) - late.iter().copied().fold(f64::MAX, f64::min);
    eprintln!("slurm launch skew: {skew:.2} ms (each segment's start after T0: {late:.2?} ms)");
}

/// `perflab dist slurm PLAN --nodes 2 --submit` from the submit host, its stores in `shared`:
/// its output; a failure with the job's output and the daemons' logs when it does not exit 0
/// within 60 s.
fn submit(cluster: &Cluster, plan: &Path, shared: &Path) -> String {
    let log = cluster.dir.path().join("submit.out");
    let file = std::fs::File::create(&log).expect("submit output");
    let mut child = cluster
        .command(BIN)
        .args(["dist", "slurm", "--nodes", "2", "--start-in", "3s", "--start-tolerance", "5s"])
        .args(["--perflab", BIN, "--sbatch=--time=1", "--submit", "--dir"])
        .arg(shared)
        .arg(plan)
        .current_dir(cluster.dir.path())
        .stdin(Stdio::null())
        .stdout(file.try_clone().expect("dup"))
        .stderr(file)
        // Its own process group: on a timeout, perflab and its sbatch are stopped together.
        .process_group(0)
        .spawn()
        .expect("perflab dist slurm --submit");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if Instant::now() > deadline {
            // SAFETY: killpg takes two integers; the group is the one this test made for its child.
            unsafe { libc::killpg(child.id() as i32, libc::SIGKILL) };
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = std::fs::read_to_string(&log).unwrap_or_default();
    if status.and_then(|s| s.code()) != Some(0) {
        let mut job = String::new();
        for e in std::fs::read_dir(shared).into_iter().flatten().flatten() {
            if e.file_name().to_string_lossy().starts_with("slurm-") {
                job.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
            }
        }
        panic!(
            "perflab dist slurm --submit: {status:?}\n{out}\n--- the job's output\n{job}\n{}",
            cluster.logs()
        );
    }
    out
}
