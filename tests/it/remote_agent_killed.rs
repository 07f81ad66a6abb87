//! The agent on the server killed outright (SIGKILL) mid-trial, over the real sshd of
//! `remote_ssh` (called from its one test, which owns the server): the trial fails saying the
//! agent ended, its target dies with it, and the cgroups it had made there (which a killed agent
//! cannot remove) are removed by the next agent started on that host, which says so.

use crate::remote_run::{agent_cgroups, killed_mid_trial, run_under_way};
use crate::remote_ssh::Server;
use std::path::Path;

/// The parent of `pid`, from /proc.
fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

/// The `perflab agent --stdio` processes that descend from `ancestor` (the test's sshd).
fn agents_under(ancestor: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
        if args.len() < 3 || args[1] != b"agent" || args[2] != b"--stdio" {
            continue;
        }
        let mut p = parent(pid);
        for _ in 0..16 {
            match p {
                Some(a) if a == ancestor => {
                    out.push(pid);
                    break;
                }
                Some(a) if a > 1 => p = parent(a),
                _ => break,
            }
        }
    }
    out
}

pub fn the_next_agent_cleans_up_after_a_killed_one(srv: &Server, key: &Path) {
    let runs = srv.dir.path().join("runs-agent-killed");
    let (mut child, target) = run_under_way(srv, key, &runs);
    let agents = agents_under(srv.sshd_pid());
    if agents.len() != 1 {
        let _ = child.kill();
        let _ = child.wait();
        panic!("one agent carries the trial: {agents:?}");
    }
    let during = agent_cgroups();
    let (trials, err) = killed_mid_trial(agents[0], target, child, &runs, "the target outlived its agent");
    let why = trials[0].failure.as_ref().map(|f| f.to_string()).unwrap_or_default();
    assert!(
        why.contains("the perflab agent there ended"),
        "trial 0 says the agent ended: {why:?}"
    );
    assert!(!why.contains("ssh failed"), "{why}");
    assert!(trials[1].ok(), "trial 1 (a new agent): {:?}", trials[1].failure);
    let mechanism = trials[1].limit_mechanism.clone().unwrap_or_default();
    if mechanism.contains("cgroup") {
        assert!(!during.is_empty(), "the killed agent's target had cgroups");
        let said = format!("cleaned up after a perflab agent that is gone (pid {})", agents[0]);
        let line = err.lines().find(|l| l.contains(&said));
        let removed = line
            .and_then(|l| l.split("removed ").nth(1))
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse::<usize>().ok());
        assert!(
            removed.is_some_and(|n| n >= during.len().min(1)),
            "the next agent says it removed the killed agent's cgroups ({during:?}): {err}"
        );
    } else {
        eprintln!("NOTE: the server applied the limit by {mechanism:?}, not a cgroup: no cgroup to check");
    }
    assert!(agent_cgroups().is_empty(), "cgroups left: {:?}", agent_cgroups());
    eprintln!("killed agent: trial 0 failed with: {why}; {}", err.trim());
}
