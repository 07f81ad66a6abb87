//! `[workload] from`: one plan's http load split over this machine and two hosts of `[hosts]`
//! (two agents reached over the real sshd of `remote_ssh`, in its network namespace; called from
//! its one test, which owns the server, its route and its namespace), against `perflab serve`
//! started here by the plan's `[target]` on the address the namespace reaches. Every trial is the
//! merged one: its requests are the plan's and the server's count, each segment sent its slice,
//! its p99 is read from the histogram of every request, and the launch skew is printed.

use crate::remote_ssh::Server;
use perflab::store::Store;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");
/// serve's port here.
const SERVE_PORT: u16 = 18231;

/// The plan: `load` is `requests = N` or a time, over `repetitions` trials.
fn plan(srv: &Server, key: &Path, load: &str, repetitions: u32) -> std::path::PathBuf {
    let here = srv.local_addr();
    let body = format!(
        r#"name = "split"
repetitions = {repetitions}

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
{load}
from = ["local", "client1", "client2"]

[phases]
baseline = "100ms"
warmup = 0
load = "{secs}s"
recovery = "100ms"
interval = "100ms"
"#,
        secs = if load.starts_with("requests") { 5 } else { 1 },
        one = srv.toml_host("client1", key, BIN),
        two = srv.toml_host("client2", key, BIN),
    );
    let dir = srv.dir.path().join(format!("plan-from-{repetitions}"));
    std::fs::create_dir_all(&dir).expect("plan dir");
    crate::common::write_plan(&dir, &body)
}

pub fn load_from_the_plans_hosts(srv: &Server, key: &Path) {
    let requests = 1501;
    let runs = srv.dir.path().join("runs-from");
    let out = Command::new(BIN)
        .args(["run", "-q", "--runs-dir"])
        .arg(&runs)
        .arg(plan(srv, key, &format!("requests = {requests}"), 1))
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
    assert_eq!(crate::remote_run::served(&stdout), Some(requests), "serve's count: {stdout:?}");
    // Each machine sent its slice: request k is segment k mod 3's.
    let raw = store.raw_output(t.id).expect("raw lines");
    for (i, host) in ["local", "client1", "client2"].iter().enumerate() {
        let share = requests / 3 + u64::from((i as u64) < requests % 3);
        let line = raw
            .iter()
            .find(|l| l.starts_with(&format!("segment {i}/3 on {host}:")))
            .unwrap_or_else(|| panic!("segment {i}'s line in {raw:?}"));
        assert!(line.contains(&format!("requests {share},")), "{line}");
        // Its own summary follows, under a line naming it: `perflab http`'s, with its count.
        let own = raw
            .iter()
            .position(|l| *l == format!("segment {i}/3 on {host}, its own output:"))
            .unwrap_or_else(|| panic!("segment {i}'s own output in {raw:?}"));
        let count = raw[own + 1..]
            .iter()
            .take_while(|l| !l.ends_with(", its own output:"))
            .find_map(|l| l.strip_prefix("Complete requests:"))
            .unwrap_or_else(|| panic!("segment {i}'s summary in {raw:?}"));
        assert_eq!(count.trim(), share.to_string(), "segment {i}");
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

/// The agents running under the test's sshd now (`perflab` processes descended from it).
fn agents(srv: &Server) -> Vec<i32> {
    let parent = |pid: i32| -> Option<(String, i32)> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let (head, rest) = stat.rsplit_once(')')?;
        let comm = head.split_once('(')?.1.to_string();
        let fields: Vec<&str> = rest.split_whitespace().collect();
        (!matches!(fields.first(), Some(&"Z") | Some(&"X"))).then_some((comm, fields.get(1)?.parse().ok()?))
    };
    let sshd = srv.sshd_pid() as i32;
    let pids = std::fs::read_dir("/proc").into_iter().flatten().flatten();
    pids.filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter(|&pid| {
            let Some((comm, mut up)) = parent(pid) else { return false };
            if comm != "perflab" {
                return false;
            }
            while up > 1 {
                if up == sshd {
                    return true;
                }
                up = parent(up).map_or(0, |(_, p)| p);
            }
            false
        })
        .collect()
}

/// Whether the run `pid` has started its target (`perflab serve`, its child): the hosts were
/// checked, the first trial is under way.
fn target_started(pid: u32) -> bool {
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    children.split_whitespace().any(|c| {
        let comm = std::fs::read_to_string(format!("/proc/{c}/comm")).unwrap_or_default();
        comm.trim() == "perflab"
    })
}

/// Wait up to 20 s until the run `pid` has its target and a trial's two agents, none of them in
/// `before`; false if it never does.
fn wait_for_agents(srv: &Server, pid: u32, before: &[i32]) -> bool {
    let end = Instant::now() + Duration::from_secs(20);
    while Instant::now() < end {
        if target_started(pid) && agents(srv).iter().filter(|a| !before.contains(a)).count() >= 2 {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// An agent killed mid-trial fails that trial with one line naming its segment and host, and the
/// run goes on to the next trial (new agents); Ctrl-C during that one stops the segments everywhere
/// (no agent left on the server) and exits 130.
pub fn a_lost_agent_and_ctrl_c(srv: &Server, key: &Path) {
    let runs = srv.dir.path().join("runs-from-lost");
    let mut child = Command::new(BIN)
        .args(["run", "-q", "--runs-dir"])
        .arg(&runs)
        .arg(plan(srv, key, "", 2))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("perflab run");
    assert!(wait_for_agents(srv, child.id(), &[]), "two agents start for the first trial");
    std::thread::sleep(Duration::from_millis(500));
    let first = agents(srv);
    // SAFETY: kill takes two integers; the pid is an agent this test's run started.
    unsafe { libc::kill(first[0], libc::SIGKILL) };
    assert!(wait_for_agents(srv, child.id(), &first), "two new agents for the second trial");
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill takes two integers; the pid is the perflab run this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().expect("perflab run ends");
    assert_eq!(status.code(), Some(130), "an interrupted run");
    let end = Instant::now() + Duration::from_secs(10);
    while !agents(srv).is_empty() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(agents(srv).is_empty(), "agents left on the server after Ctrl-C: {:?}", agents(srv));
    let trials = Store::open(crate::common::only_run_dir(&runs))
        .expect("store")
        .trials()
        .expect("trials");
    let why = trials[0].failure.as_ref().map(|f| f.to_string()).unwrap_or_default();
    assert!(
        why.contains("segment 1/3 on client1: host `client1`") || why.contains("segment 2/3 on client2: host `client2`"),
        "trial 0: {why}"
    );
    eprintln!("[workload] from, an agent killed: trial 0 failed with: {why}; Ctrl-C in trial 1: exit 130, no agent left");
}

/// An oltp plan against the MariaDB on `port` here, one point per user of `users` (a TOML list),
/// its load from client1 (segment 0) and this machine.
fn oltp_plan(srv: &Server, key: &Path, users: &str, port: u16, table_size: u32) -> std::path::PathBuf {
    let here = srv.local_addr();
    let body = format!(
        r#"name = "split-oltp"

[hosts]
{one}

[monitor]
hosts = ["local"]

[matrix]
user = {users}

[workload]
type = "oltp"
db = "mysql://${{user}}@{here}:{port}/sbtest"
scenario = "read_only"
tables = 2
table_size = {table_size}
threads = 2
transactions = 301
prepare = "always"
cleanup = true
from = ["client1", "local"]

[phases]
baseline = "100ms"
warmup = 0
load = "10s"
recovery = "100ms"
interval = "100ms"
"#,
        one = srv.toml_host("client1", key, BIN),
    );
    let dir = srv.dir.path().join(format!("plan-from-oltp-{table_size}"));
    std::fs::create_dir_all(&dir).expect("plan dir");
    crate::common::write_plan(&dir, &body)
}

/// One of MariaDB's global status counters.
fn status(db: &crate::db_servers::Server, name: &str) -> i64 {
    db.number(&format!("SHOW GLOBAL STATUS LIKE '{name}'"))
}

/// An oltp load from a remote host (segment 0) and this machine against one MariaDB both reach,
/// with `prepare = "always"` and `cleanup = true`: the tables are created once (by client1, before
/// the common start: the server's own count of CREATE TABLE is the plan's tables, not twice
/// them), the merged transactions are the segments' sum and the server's commits, and the tables
/// are gone after the run. A preparation the server refuses (a user who may only read, the next
/// point of the same run) fails its trial naming the host, and Ctrl-C during one stops it
/// everywhere.
pub fn oltp_tables_prepared_once_by_segment_zero(srv: &Server, key: &Path) {
    let here = srv.local_addr();
    // The server listens here and on the address the namespace reaches.
    let extra: Vec<String> = (here != "127.0.0.1")
        .then(|| format!("--bind-address=127.0.0.1,{here}"))
        .into_iter()
        .collect();
    let Some(db) = crate::db_servers::Server::mariadb_with(&extra) else {
        return;
    };
    db.sql("CREATE USER ro@'%'; GRANT SELECT ON sbtest.* TO ro@'%'");
    let (creates, commits) = (status(&db, "Com_create_table"), status(&db, "Com_commit"));
    let transactions: u32 = 301;
    let runs = srv.dir.path().join("runs-from-oltp");
    let out = Command::new(BIN)
        .args(["run", "-q", "--runs-dir"])
        .arg(&runs)
        .arg(oltp_plan(srv, key, r#"["sb", "ro"]"#, db.port, 3000))
        .output()
        .expect("perflab run");
    assert_eq!(
        out.status.code(),
        Some(1),
        "the ro point failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = Store::open(crate::common::only_run_dir(&runs)).expect("store");
    let trials = store.trials().expect("trials");
    let t = trials.iter().find(|t| t.point == 0).expect("the sb trial");
    assert!(t.ok(), "{:?}", t.failure);
    assert_eq!(
        status(&db, "Com_create_table") - creates,
        2,
        "the 2 tables were created once, not once per segment (and never by ro)"
    );
    // The whole load, merged: the plan's transactions, the sum of the segments', the server's commits.
    assert_eq!(t.metric("transactions"), Some(f64::from(transactions)), "the merged count");
    assert_eq!(status(&db, "Com_commit") - commits, i64::from(transactions), "the server's commits");
    let raw = store.raw_output(t.id).expect("raw lines");
    let count = |l: &str| -> u32 {
        let n = l.split("transactions ").nth(1).and_then(|r| r.split(',').next());
        n.and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no transaction count in {l}"))
    };
    let line = |start: &str| {
        raw.iter()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("`{start}` in {raw:?}"))
    };
    let each = [count(line("segment 0/2 on client1:")), count(line("segment 1/2 on local:"))];
    assert_eq!(each, [151, 150], "each segment's share: {raw:?}");
    let prepared = line("prepared by client1 in ");
    assert!(prepared.contains("2 table(s) × 3000 rows loaded into mysql://sb@"), "{prepared}");
    let cleaned = line("cleaned up by client1 in ");
    let tables = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'sbtest'";
    assert_eq!(db.number(tables), 0, "cleanup dropped the tables: {cleaned}");
    eprintln!("[workload] from, oltp: {transactions} transactions merged and committed; {prepared}; {cleaned}");
    // A user who may only read: the preparation fails the trial, naming the host.
    let ro = trials.iter().find(|t| t.point == 1).expect("the ro trial");
    let why = ro.failure.as_ref().map(|f| f.to_string()).unwrap_or_default();
    assert!(
        why.contains("prepare on client1: host `client1`: ") && why.contains("denied"),
        "{why}"
    );
    eprintln!("[workload] from, oltp, a read-only user: {why}");
    ctrl_c_while_segment_zero_prepares(srv, key, &db);
}

/// Ctrl-C while client1 loads 3 million rows: the run exits 130, and neither its agent nor its
/// connections to the server are left.
fn ctrl_c_while_segment_zero_prepares(srv: &Server, key: &Path, db: &crate::db_servers::Server) {
    let runs = srv.dir.path().join("runs-from-oltp-stopped");
    let mut child = Command::new(BIN)
        .args(["run", "-q", "--runs-dir"])
        .arg(&runs)
        .arg(oltp_plan(srv, key, r#"["sb"]"#, db.port, 3_000_000))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("perflab run");
    let loading = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'sbtest'";
    let end = Instant::now() + Duration::from_secs(30);
    while db.number(loading) == 0 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    if db.number(loading) == 0 {
        let _ = child.kill();
        let _ = child.wait();
        panic!("client1 did not begin to load the tables within 30 s");
    }
    let prepared_by = agents(srv);
    // SAFETY: kill takes two integers; the pid is the perflab run this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let end = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.and_then(|s| s.code()), Some(130), "an interrupted run, within 30 s");
    let sessions = "SELECT COUNT(*) FROM information_schema.processlist WHERE user = 'sb'";
    let end = Instant::now() + Duration::from_secs(10);
    while (!agents(srv).is_empty() || db.number(sessions) > 0) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        agents(srv).is_empty(),
        "agents left after Ctrl-C: {:?} (the preparing one: {prepared_by:?})",
        agents(srv)
    );
    assert_eq!(db.number(sessions), 0, "the preparation's connections are gone");
    eprintln!("[workload] from, oltp: Ctrl-C while client1 prepared: exit 130, no agent and no connection left");
}
