//! The system under test's lifecycle: started inside its limits, stopped with its whole tree, and its
//! cgroups removed.

use perflab::runner::limits::{Applied, CpuSpec, Limits};
use perflab::runner::target::{CommandLine, Ready, RunningTarget, TargetConfig};
use perflab::util::Cancel;
use std::time::Duration;

fn cfg(cmd: &str, limits: Limits) -> TargetConfig {
    TargetConfig {
        command: CommandLine::Shell(cmd.into()),
        cwd: None,
        env: vec![],
        ready: Ready::None,
        stop_signal: libc::SIGTERM,
        grace: Duration::from_secs(2),
        limits,
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
    let re = regex::Regex::new("started").unwrap();
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
            eprintln!("SKIPPED LOUDLY: neither cgroups nor affinity could be set up here: {e}");
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
