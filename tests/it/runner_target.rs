//! The system under test's lifecycle: started inside its limits, stopped with its whole tree, and its
//! cgroups removed.

use perflab::plan::{LogPattern, Ready, ResolvedTarget};
use perflab::runner::limits::{Applied, CpuSpec, Limits};
use perflab::runner::target::RunningTarget;
use perflab::util::command::CommandLine;
use perflab::util::Cancel;
use std::time::Duration;

use crate::common;

fn cfg(cmd: &str, limits: Limits) -> ResolvedTarget {
    ResolvedTarget {
        command: CommandLine::Shell(cmd.into()),
        cwd: None,
        env: vec![],
        ready: Ready::None,
        stop_signal: libc::SIGTERM,
        grace: Duration::from_secs(2),
        limits,
        host: None,
    }
}

fn alive(pid: i32) -> bool {
    // A zombie still answers kill(0); look at the state too.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'),
        Err(_) => false,
    }
}

#[test]
fn stop_kills_the_whole_tree_even_when_it_ignores_sigterm() {
    // The shell ignores TERM and starts two sleeping children that ignore it too.
    let c = cfg("trap '' TERM; sleep 60 & sleep 60 & echo started; wait", Limits::default());
    let applied = Applied::prepare(&c.limits, &format!("perflab-test-tree-{}", std::process::id())).unwrap();
    let mut t = RunningTarget::start(&c, applied).unwrap();
    let re = LogPattern::new("started").unwrap();
    t.wait_ready(
        &Ready::Log {
            pattern: re,
            timeout: Duration::from_secs(10),
        },
        &Cancel::new(),
    )
    .unwrap();
    let pgid = t.pid() as i32;
    let members: Vec<i32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| s.rsplit(')').next()?.split_whitespace().nth(2)?.parse::<i32>().ok())
                == Some(pgid)
        })
        .collect();
    assert!(members.len() >= 3, "shell + 2 sleeps in the group, found {members:?}");
    let stopped = t.stop().unwrap();
    assert!(stopped.stdout_tail.contains("started"));
    for p in members {
        assert!(!alive(p), "process {p} of the target survived stop()");
    }
}

#[test]
fn a_target_that_exits_at_once_is_reported_with_its_stderr() {
    let c = cfg("echo 'bind: address already in use' >&2; exit 3", Limits::default());
    let mut t = RunningTarget::start(&c, Applied::none()).unwrap();
    let err = t
        .wait_ready(
            &Ready::Tcp {
                addr: "127.0.0.1:1".into(),
                timeout: Duration::from_secs(5),
            },
            &Cancel::new(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("exited with status 3"), "{err}");
    let stopped = t.stop().unwrap();
    assert!(stopped.stderr_tail.contains("address already in use"));
    assert!(stopped.died.is_some());
}

#[test]
fn cpus_1_pins_the_target_and_the_cgroups_are_removed() {
    let limits = Limits {
        cpus: Some(CpuSpec::Count(1)),
        ..Default::default()
    };
    let c = cfg("sleep 30", limits);
    let applied = match Applied::prepare(&c.limits, &format!("perflab-test-pin-{}", std::process::id())) {
        Ok(a) => a,
        Err(e) => {
            crate::common::skip_unless_required(&format!("neither cgroups nor affinity could be set up here: {e}"));
            return;
        }
    };
    let mech = applied.mechanism;
    let mut t = RunningTarget::start(&c, applied).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let proof = t.limits.proof(t.pid());
    assert!(proof.contains("Cpus_allowed_list: 0"), "mechanism {mech}, proof: {proof}");
    let leaf = t.limits.v2_leaf.clone();
    assert!(t.exited().is_none());
    t.stop().unwrap();
    if let Some(leaf) = leaf {
        assert!(!leaf.exists(), "cgroup {} left behind", leaf.display());
    }
    let left: Vec<_> = ["/sys/fs/cgroup/cpuset", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("perflab-test-pin-{}", std::process::id()))
        })
        .collect();
    assert!(left.is_empty(), "cgroups left behind: {left:?}");
}

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

fn started(cmd: &str, ready: &Ready) -> (RunningTarget, anyhow::Result<()>) {
    let mut t = RunningTarget::start(&cfg(cmd, Limits::default()), Applied::none()).expect("target starts");
    let r = t.wait_ready(ready, &Cancel::new());
    (t, r)
}

fn get(url_port: u16, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", url_port)).expect("connect");
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes())
        .expect("send");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

#[test]
fn ready_by_url_means_a_200_and_a_404_never_is_ready() {
    // The server comes up only after a while, so the first probes find nothing listening.
    let port = common::free_port();
    let cmd = format!("sleep 0.3; exec {BIN} serve --port {port} --size 10");
    let url = |path: &str| Ready::Http {
        url: format!("http://127.0.0.1:{port}{path}"),
        timeout: Duration::from_secs(10),
    };
    let (t, r) = started(&cmd, &url("/"));
    r.expect("ready once / answers 200");
    assert!(get(port, "/").starts_with("HTTP/1.1 200"), "ready means answering");
    t.stop().expect("stop");

    // perflab serve answers 404 off its routes: listening is not enough.
    let port = common::free_port();
    let cmd = format!("exec {BIN} serve --port {port}");
    let ready = Ready::Http {
        url: format!("http://127.0.0.1:{port}/nope"),
        timeout: Duration::from_millis(800),
    };
    let (t, r) = started(&cmd, &ready);
    let e = r.expect_err("a 404 is not ready").to_string();
    assert!(e.contains(&format!("waited for http://127.0.0.1:{port}/nope to answer 200")), "{e}");
    assert!(get(port, "/nope").starts_with("HTTP/1.1 404"), "the server was up all along");
    t.stop().expect("stop");
}

#[test]
fn ready_by_log_reads_stderr_too_and_a_timeout_names_the_pattern() {
    let log = |p: &str, ms| Ready::Log {
        pattern: LogPattern::new(p).expect("regex"),
        timeout: Duration::from_millis(ms),
    };
    let (t, r) = started(
        "echo starting; sleep 0.2; echo 'db: ready to accept connections' >&2; sleep 30",
        &log("ready to accept", 10_000),
    );
    r.expect("the line on stderr makes it ready");
    t.stop().expect("stop");
    let (t, r) = started("echo hello; sleep 30", &log("never said", 500));
    let e = r.expect_err("times out").to_string();
    assert!(e.contains("waited for a log line matching /never said/"), "{e}");
    t.stop().expect("stop");
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .expect("status")
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:")?.trim().strip_suffix("kB")?.trim().parse().ok())
        .expect("VmRSS")
}

#[test]
fn a_target_that_logs_a_lot_after_it_is_ready_does_not_grow_the_runner() {
    // 300 MB of log lines after the ready line: the tails keep their ends, nothing else is kept.
    let cmd = "echo up; yes 'GET /index.html 200 800 0.000123 some client said hello to the server' | head -c 300000000";
    let before = rss_kib();
    let (mut t, r) = started(
        cmd,
        &Ready::Log {
            pattern: LogPattern::new("^up$").expect("regex"),
            timeout: Duration::from_secs(10),
        },
    );
    r.expect("ready");
    // The pipe holds 64 KiB: once the target has exited, the readers have taken all but that.
    let until = std::time::Instant::now() + Duration::from_secs(120);
    while t.exited().is_none() && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(t.exited().is_some(), "the target printed its 300 MB and exited");
    std::thread::sleep(Duration::from_millis(300));
    let grown = rss_kib().saturating_sub(before);
    assert!(grown < 100_000, "the runner grew by {grown} KiB while the target printed 300 MB");
    let stopped = t.stop().expect("stop");
    assert!(stopped.stdout_tail.contains("some client said hello"));
}
