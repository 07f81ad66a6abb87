//! `perflab run` with `[target] host = "server"`, over the real sshd of `remote_ssh` (called from
//! its one test, which owns the server): perflab serve started on the server by its agent, loaded
//! by the http workload from this machine; and the ssh client killed mid-trial.

use crate::remote_ssh::{group_alive, Server};
use perflab::store::Store;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");
/// serve's port on the server.
const SERVE_PORT: u16 = 18216;

pub(crate) fn plan(srv: &Server, key: &Path, load: &str, repetitions: u32, limits: &str) -> std::path::PathBuf {
    let addr = &srv.addr;
    let body = format!(
        r#"name = "remote-target"
repetitions = {repetitions}

[hosts]
{host}

[matrix]
machine = ["server"]

[target]
host = "${{machine}}"
command = ["{BIN}", "serve", "--host", "{addr}", "--port", "{SERVE_PORT}"]
ready = {{ tcp = "{addr}:{SERVE_PORT}", timeout = "10s" }}
stop = {{ signal = "SIGTERM", grace = "5s" }}
{limits}

[workload]
type = "http"
url = "http://{addr}:{SERVE_PORT}/"
connections = 2

[phases]
baseline = "300ms"
warmup = 0
load = "{load}"
recovery = "300ms"
interval = "100ms"
"#,
        host = srv.toml_host("server", key, BIN),
    );
    let dir = srv.dir.path().join(format!("plan-{load}"));
    std::fs::create_dir_all(&dir).expect("plan dir");
    crate::common::write_plan(&dir, &body)
}

/// The served count serve prints on its way out (`served N requests`).
pub fn served(stdout: &str) -> Option<u64> {
    let line = stdout.lines().find(|l| l.starts_with("served "))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The trials complete; the server's process tree is stored (`proc_target_*`, sampled there); the
/// requests the workload counted are the ones serve counted (give or take those in flight when the
/// load phase ended, at most one per connection). Run with `--live`: the server's `host` events,
/// one with each second of the load, carry the key figures of its stored sample of their time.
pub fn target_on_the_server(srv: &Server, key: &Path) {
    let runs = srv.dir.path().join("runs-target");
    let out = Command::new(BIN)
        .args(["run", "-q", "--live=127.0.0.1:0", "--runs-dir"])
        .arg(&runs)
        .arg(plan(srv, key, "1s", 1, ""))
        .output()
        .expect("perflab run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = Store::open(crate::common::only_run_dir(&runs)).expect("store");
    let trials = store.trials().expect("trials");
    assert_eq!(trials.len(), 1);
    let t = &trials[0];
    assert!(t.ok(), "{:?}", t.failure);
    let requests = t.metric("requests").expect("requests") as u64;
    assert!(requests > 0);
    let stdout = t.stdout_tail.clone().unwrap_or_default();
    let served = served(&stdout).unwrap_or_else(|| panic!("serve's count in its stdout: {stdout:?}"));
    assert!(
        served >= requests && served <= requests + 2,
        "serve counted {served}, the workload {requests}"
    );
    // The target's tree is stored with the host it ran on; both hosts' system metrics, each its own.
    let samples = store.samples_on(t.id, "server").expect("the server's samples");
    let local = store.samples(t.id).expect("local samples");
    for (host, s) in [("server", &samples), ("local", &local)] {
        assert!(
            s.iter().filter(|s| s.values.iter().any(|(k, _)| k == "cpu_busy_pct")).count() >= 5,
            "{host}'s system metrics are stored"
        );
    }
    assert!(
        !local.iter().any(|s| s.values.iter().any(|(k, _)| k.starts_with("proc_target_"))),
        "the remote target's tree is not stored as this machine's"
    );
    let summaries = store.phase_summaries_on(t.id, "server", &t.phases).expect("summaries");
    let busy = summaries
        .iter()
        .find(|s| s.metric == "cpu_busy_pct")
        .expect("the server's cpu_busy_pct summary");
    assert!(busy.n_load > 0 && busy.n_baseline > 0, "{busy:?}");
    let tree: Vec<_> = samples
        .iter()
        .filter(|s| s.values.iter().any(|(k, _)| k == "proc_target_cpu_pct"))
        .collect();
    assert!(tree.len() >= 5, "the server's process tree was sampled: {} samples", tree.len());
    assert!(tree.iter().any(|s| s.phase == "load"), "samples placed in the load phase");
    for s in &tree {
        let (a, b) = t
            .phases
            .iter()
            .find(|p| p.name() == s.phase)
            .map(|p| (p.start_s, p.end_s))
            .expect("its phase");
        assert!(
            a <= s.t_s && s.t_s < b,
            "a sample at {} s is in its phase {} ({a}..{b})",
            s.t_s,
            s.phase
        );
    }
    let live = live_hosts_are_the_stored_samples(&store, t.id, &samples);
    eprintln!(
        "remote target: {requests} requests by the workload, {served} served, {} tree samples, {live} host events",
        tree.len()
    );
}

/// The run's `host` events of `server`: one with each `second` of trial `trial`, each with the key
/// figures (to their rounding of 0.1) of the server's stored sample of the same time.
fn live_hosts_are_the_stored_samples(store: &Store, trial: usize, stored: &[perflab::store::TaggedSample]) -> usize {
    use perflab::live::{Event, HostNow};
    let events: Vec<Event> = store
        .events(0)
        .expect("the event log")
        .iter()
        .filter(|r| r.trial == Some(trial as i64) && (r.kind == "host" || r.kind == "second"))
        .map(|r| Event::from_stored(&r.kind, r.trial, &r.body).expect("an event"))
        .collect();
    let seconds = events.iter().filter(|e| matches!(e, Event::Second { .. })).count();
    let hosts: Vec<(f64, HostNow)> = events
        .iter()
        .filter_map(|e| match e {
            Event::Host { host, t_s, figures, .. } if host == "server" => Some((*t_s, *figures)),
            _ => None,
        })
        .collect();
    assert!(seconds >= 1, "the load's seconds were published: {events:?}");
    assert_eq!(hosts.len(), seconds, "a host event with each second: {events:?}");
    for (t_s, figures) in &hosts {
        let s = stored
            .iter()
            .min_by(|a, b| (a.t_s - t_s).abs().total_cmp(&(b.t_s - t_s).abs()))
            .expect("stored samples");
        assert!(
            (s.t_s - t_s).abs() < 0.01,
            "a stored sample at {t_s} s: the nearest is at {} s",
            s.t_s
        );
        let want = HostNow::of(&s.values);
        assert!(want.cpu_pct.is_some() && want.target_cpu_pct.is_some(), "{want:?}");
        for (n, (a, b)) in ["cpu", "mem", "perflab", "target", "busiest cpu", "disk", "net", "rss"]
            .iter()
            .zip(figures.cells().into_iter().zip(want.cells()))
        {
            match (a, b) {
                (Some(a), Some(b)) => assert!((a - b).abs() <= 0.1 + 1e-9, "{n} at {t_s} s: live {a}, stored {b}"),
                (a, b) => assert_eq!(a, b, "{n} at {t_s} s"),
            }
        }
    }
    hosts.len()
}

/// Processes whose parent is `ppid` and whose name is `comm`.
fn children_named(ppid: u32, comm: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let Some((head, rest)) = stat.rsplit_once(')') else { continue };
        let name = head.split_once('(').map(|(_, n)| n).unwrap_or_default();
        let parent = rest.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok());
        if name == comm && parent == Some(ppid) {
            out.push(pid);
        }
    }
    out
}

/// The pid of the serve process listening on the test port (the target on the server).
fn serve_pid() -> Option<i32> {
    let port = SERVE_PORT.to_string();
    std::fs::read_dir("/proc").into_iter().flatten().flatten().find_map(|e| {
        let pid = e.file_name().to_string_lossy().parse::<i32>().ok()?;
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let args: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
        (args.iter().any(|a| *a == b"serve") && args.contains(&port.as_bytes())).then_some(pid)
    })
}

/// Cgroups the agent made (named `agent-<pid>-…`) that are still there.
pub(crate) fn agent_cgroups() -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![std::path::PathBuf::from("/sys/fs/cgroup")];
    let mut visited = 0;
    while let Some(d) = stack.pop() {
        visited += 1;
        if visited > 100_000 {
            break;
        }
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                let name = e.file_name().to_string_lossy().to_string();
                if name.starts_with("agent-") && name.contains("perflab-") {
                    out.push(e.path().display().to_string());
                }
                stack.push(e.path());
            }
        }
    }
    out
}

/// The target's pid on the server once the run has started it (20 s at most; otherwise the run is
/// stopped and the test fails).
pub(crate) fn wait_for_target(child: &mut std::process::Child) -> i32 {
    let end = Instant::now() + Duration::from_secs(20);
    let mut target = None;
    while target.is_none() && Instant::now() < end {
        target = serve_pid();
        std::thread::sleep(Duration::from_millis(50));
    }
    let Some(target) = target else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the target never started on the server");
    };
    target
}

/// `perflab run` of two 2 s trials on the server (`cpu_quota = 1.5`) into `runs`, once its target
/// runs there and the load is under way (1.2 s later, the load spanning 0.3 to 2.3 s): the run and
/// the target's pid.
pub(crate) fn run_under_way(srv: &Server, key: &Path, runs: &Path) -> (std::process::Child, i32) {
    let mut child = Command::new(BIN)
        .args(["run", "-q", "--runs-dir"])
        .arg(runs)
        .arg(plan(srv, key, "2s", 2, "cpu_quota = 1.5"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("perflab run");
    let target = wait_for_target(&mut child);
    std::thread::sleep(Duration::from_millis(1200));
    (child, target)
}

/// `pid` (the ssh client or the agent of a run started by [`run_under_way`]) killed outright: the
/// target's process group on the server is gone within 10 s (else `survived` fails the test), and
/// the run goes on to store both its trials: they and the run's stderr.
pub(crate) fn killed_mid_trial(
    pid: u32,
    target: i32,
    child: std::process::Child,
    runs: &Path,
    survived: &str,
) -> (Vec<perflab::store::StoredTrial>, String) {
    // SAFETY: kill takes two integers; the pid is a process our perflab run started.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let gone = Instant::now() + Duration::from_secs(10);
    while group_alive(target) && Instant::now() < gone {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!group_alive(target), "{survived}");
    let out = child.wait_with_output().expect("perflab run ends");
    let err = String::from_utf8_lossy(&out.stderr);
    let store = Store::open(crate::common::only_run_dir(runs)).expect("store");
    let trials = store.trials().expect("trials");
    assert_eq!(trials.len(), 2, "the run went on: {err}");
    (trials, err.into_owned())
}

/// The ssh client killed during the first trial's load: that trial fails with the reason, the
/// target's process group is gone on the server, no cgroup is left, and the second trial (a new
/// channel) completes.
pub fn channel_lost_mid_trial(srv: &Server, key: &Path) {
    let runs = srv.dir.path().join("runs-lost");
    let (child, target) = run_under_way(srv, key, &runs);
    let during = agent_cgroups();
    let ssh = children_named(child.id(), "ssh");
    assert_eq!(ssh.len(), 1, "one ssh client carries the trial's channel: {ssh:?}");
    let (trials, _) = killed_mid_trial(ssh[0], target, child, &runs, "the target's process group survived on the server");
    let why = trials[0].failure.as_ref().map(|f| f.to_string()).unwrap_or_default();
    assert!(why.contains("lost with its host's channel"), "trial 0: {why:?}");
    assert!(trials[1].ok(), "trial 1 (a new channel): {:?}", trials[1].failure);
    let mechanism = trials[1].limit_mechanism.clone().unwrap_or_default();
    if mechanism.contains("cgroup") {
        assert!(!during.is_empty(), "the target's cgroups are found while it runs");
    } else {
        eprintln!("NOTE: the server applied the limit by {mechanism:?}, not a cgroup: no cgroup to check");
    }
    assert!(agent_cgroups().is_empty(), "cgroups left: {:?}", agent_cgroups());
    eprintln!("lost channel: trial 0 failed with: {why}; limits by {mechanism}");
}

/// An exec workload on the server (`[workload] host = "${machine}"`, swept over `local` and
/// `server`): stress-ng run by the agent is read by the same adapter, into the same metrics, as the
/// one run here.
pub fn exec_on_the_server(srv: &Server, key: &Path) {
    if Command::new("stress-ng").arg("--version").output().is_err() {
        crate::common::skip_unless_required("exec on the server: stress-ng is not installed (Debian package `stress-ng`)");
        return;
    }
    let body = format!(
        r#"name = "remote-exec"

[hosts]
{host}

[matrix]
machine = ["local", "server"]

[workload]
type = "exec"
host = "${{machine}}"
command = ["stress-ng", "--cpu", "1", "--cpu-method", "matrixprod", "--timeout", "1s", "--metrics-brief"]

[phases]
baseline = 0
warmup = 0
recovery = 0
interval = "200ms"
"#,
        host = srv.toml_host("server", key, BIN),
    );
    let dir = srv.dir.path().join("plan-exec");
    std::fs::create_dir_all(&dir).expect("plan dir");
    let runs = srv.dir.path().join("runs-exec");
    let out = Command::new(BIN)
        .args(["run", "-q", "--runs-dir"])
        .arg(&runs)
        .arg(crate::common::write_plan(&dir, &body))
        .output()
        .expect("perflab run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = Store::open(crate::common::only_run_dir(&runs)).expect("store");
    let trials = store.trials().expect("trials");
    assert_eq!(trials.len(), 2);
    let names = |i: usize| {
        let t = &trials[i];
        assert!(t.ok(), "trial {i}: {:?}", t.failure);
        assert_eq!(t.workload, "exec:stress-ng");
        let mut n: Vec<String> = t.metrics.iter().map(|m| m.name.clone()).collect();
        n.sort();
        n
    };
    let (local, remote) = (names(0), names(1));
    assert!(trials[1].params_json.contains("server"), "{}", trials[1].params_json);
    assert!(local.iter().any(|n| n == "cpu_bogo_ops_per_s"), "{local:?}");
    assert_eq!(local, remote, "the same metrics on both hosts");
    assert!(trials[1].metric("cpu_bogo_ops").unwrap_or(0.0) > 0.0);
    // The command's CPU time and peak memory, accounted on the server by its agent.
    assert!(trials[1].metric("cpu_user_s").unwrap_or(0.0) > 0.0, "{:?}", trials[1].metrics);
    assert!(trials[1].metric("max_rss_mb").unwrap_or(0.0) > 0.0, "{:?}", trials[1].metrics);
}

/// Ctrl-C on this machine (SIGINT to perflab alone, as a terminal's Ctrl-C reaches perflab's group
/// and not ssh's) mid-trial: the run ends interrupted, and nothing of the target is left on the
/// server (its process group, its cgroups).
pub fn ctrl_c_leaves_nothing_on_the_server(srv: &Server, key: &Path) {
    let runs = srv.dir.path().join("runs-ctrl-c");
    let mut child = Command::new(BIN)
        .args(["run", "-q", "--runs-dir"])
        .arg(&runs)
        .arg(plan(srv, key, "5s", 1, "cpu_quota = 1.5"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("perflab run");
    let target = wait_for_target(&mut child);
    std::thread::sleep(Duration::from_millis(1000));
    // SAFETY: kill takes two integers; the pid is the perflab run this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().expect("perflab run ends");
    assert!(!status.success(), "an interrupted run says so");
    let gone = Instant::now() + Duration::from_secs(10);
    while group_alive(target) && Instant::now() < gone {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!group_alive(target), "the target's process group survived Ctrl-C on the server");
    assert!(agent_cgroups().is_empty(), "cgroups left: {:?}", agent_cgroups());
}

/// A plan whose target on host `name` keeps twice this machine's CPUs busy (busy loops under a
/// cgroup CPU limit of all of them), with an exec workload here, both hosts monitored.
fn burn_plan(srv: &Server, key: &Path, name: &str) -> std::path::PathBuf {
    let n = std::thread::available_parallelism().map_or(2, |n| n.get());
    let body = format!(
        r#"name = "remote-burn"

[hosts]
{host}

[monitor]
hosts = ["local", "{name}"]

[target]
host = "{name}"
command = "for i in $(seq {loops}); do (while :; do :; done) & done; wait"
ready = {{ delay = "200ms" }}
stop = {{ signal = "SIGTERM", grace = "2s" }}
cpu_quota = {n}.0

[workload]
type = "exec"
command = ["sleep", "1.5"]

[phases]
baseline = "500ms"
warmup = 0
recovery = "300ms"
interval = "100ms"
"#,
        host = srv.toml_host(name, key, BIN),
        loops = 2 * n,
    );
    let dir = srv.dir.path().join(format!("plan-burn-{name}"));
    std::fs::create_dir_all(&dir).expect("plan dir");
    crate::common::write_plan(&dir, &body)
}

fn burn_run(srv: &Server, key: &Path, name: &str) -> std::path::PathBuf {
    let runs = srv.dir.path().join(format!("runs-burn-{name}"));
    let out = Command::new(BIN)
        .args(["run", "-q", "--runs-dir"])
        .arg(&runs)
        .arg(burn_plan(srv, key, name))
        .output()
        .expect("perflab run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    crate::common::only_run_dir(&runs)
}

/// `[monitor] hosts = ["local", "server"]` with the target burning CPU on the server: both hosts'
/// system metrics are stored (each under its host), the report has a table for the server and a
/// finding that names it (its run queue is twice its cores), the run facts list both hosts; and
/// `perflab compare` of that run and one against another host puts the two machines side by side.
pub fn hosts_monitored_and_reported(srv: &Server, key: &Path) {
    let dir = burn_run(srv, key, "server");
    let store = Store::open(&dir).expect("store");
    let trials = store.trials().expect("trials");
    assert_eq!(trials.len(), 1);
    let t = &trials[0];
    assert!(t.ok(), "{:?}", t.failure);
    for host in ["local", "server"] {
        let s = store.samples_on(t.id, host).expect("samples");
        let busy = s.iter().filter(|s| s.values.iter().any(|(k, _)| k == "cpu_busy_pct")).count();
        assert!(busy >= 5, "{host}: {busy} samples of its system");
    }
    let tree = store.samples_on(t.id, "server").expect("samples");
    assert!(
        tree.iter()
            .any(|s| s.phase == "load" && s.values.iter().any(|(k, v)| k == "proc_target_cpu_pct" && *v > 0.0)),
        "the burning target's CPU on the server"
    );
    let md = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    assert!(md.contains("## Host server"), "a section for the server:\n{md}");
    assert!(md.contains("## Hosts"), "the hosts' facts:\n{md}");
    let facts = md.split("## Hosts").nth(1).unwrap_or_default();
    assert!(
        facts.contains("| local") && facts.contains("| server"),
        "both hosts listed:\n{facts}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).expect("report.json")).expect("json");
    let titles: Vec<String> = json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| format!("{}: {}", f["host"].as_str().unwrap_or("?"), f["title"].as_str().unwrap_or("?")))
        .collect();
    assert!(
        titles.iter().any(|t| t.starts_with("server: ")),
        "a finding names the server: {titles:?}"
    );
    assert!(
        titles.iter().all(|t| t.starts_with("server: ") || t.starts_with("local: ")),
        "every finding has its host as a field: {titles:?}"
    );
    assert!(md.contains("server: "), "the report names the host in a finding");

    // Another machine (the same sshd under another name), compared.
    let other = burn_run(srv, key, "big");
    let cmp = srv.dir.path().join("compare-hosts");
    let out = Command::new(BIN)
        .arg("compare")
        .arg(&dir)
        .arg(&other)
        .args(["--format", "md", "--out"])
        .arg(&cmp)
        .output()
        .expect("perflab compare");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let md = std::fs::read_to_string(cmp.join("report.md")).expect("compare report.md");
    let side = md
        .split("## Machines compared")
        .nth(1)
        .unwrap_or_else(|| panic!("the machines side by side:\n{md}"));
    let host_row = side.lines().find(|l| l.starts_with("| host")).unwrap_or_default();
    assert!(host_row.contains("server") && host_row.contains("big"), "{host_row}");
    let at = |s: &str| md.find(s).unwrap_or(usize::MAX);
    assert!(at("## Machines compared") < at("## Run"), "the machines come before the run facts");
    eprintln!("hosts reported: findings {titles:?}");
}
