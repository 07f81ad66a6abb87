//! Cleaning up after a run whose perflab is gone (killed with SIGKILL, crashed, the machine lost
//! power), from what its ledger recorded: its targets' leftover processes are killed (each only
//! after checking it is still the process recorded: same boot, in the recorded group, started no
//! earlier than the group's leader), its cgroups are emptied and removed, the variant's pending
//! teardown runs, and a run still marked `running` is marked `interrupted`. Each run cleaned up is
//! said in one line.
//!
//! `perflab run` does this for every dead run in the machine's run list before it starts
//! ([`sweep`]), and `perflab run --resume DIR` for DIR ([`reclaim_dir`]), so a dead run's target
//! can no longer hold the port the next run needs. A remote agent (`perflab agent --stdio`) keeps
//! the same record of its targets on its host (`Ledger::open_agent`), and sweeps when it starts:
//! what a killed agent left there goes with the next agent (or run) on that host.

use super::ledger::{self, Owner, Record, StartedTarget, LEDGER_FILE};
use crate::store::{RunStatus, Store};
use crate::util::{process, Cancel};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What was cleaned up after one dead run (or dead agent).
#[derive(Debug)]
pub struct Reclaimed {
    pub dir: PathBuf,
    pub owner: Owner,
    /// A remote agent's record, not a run's.
    pub agent: bool,
    /// Processes of its targets that were still running and were killed.
    pub processes: usize,
    pub cgroups: usize,
    /// What became of the pending teardown, if there was one.
    pub teardown: Option<String>,
    /// The status it had (`running` is changed to `interrupted`).
    pub status: Option<RunStatus>,
    pub problems: Vec<String>,
}

impl Reclaimed {
    /// The one line that says what was done.
    pub fn line(&self) -> String {
        let mut parts = vec![
            format!("stopped {} leftover process(es)", self.processes),
            format!("removed {} cgroup(s)", self.cgroups),
        ];
        parts.extend(self.teardown.clone());
        parts.extend(self.problems.iter().cloned());
        if self.agent {
            return format!(
                "cleaned up after a perflab agent that is gone (pid {}): {}",
                self.owner.pid,
                parts.join(", ")
            );
        }
        let status = match self.status {
            Some(RunStatus::Running) => "marked it interrupted".to_string(),
            Some(s) => format!("its status stays {s}"),
            None => "its store could not be updated".to_string(),
        };
        format!(
            "cleaned up after the run in {} (its perflab, pid {}, is gone): {}; {status}",
            self.dir.display(),
            self.owner.pid,
            parts.join(", ")
        )
    }
}

/// The machine's run list, locked while a run in it is cleaned up (so two perflabs starting at
/// once do not both run a dead run's teardown). Released when dropped.
struct MachineLock {
    _file: Option<std::fs::File>,
}

impl MachineLock {
    fn take(list: Option<&Path>) -> MachineLock {
        let file = list.and_then(|l| std::fs::OpenOptions::new().create(true).append(true).open(l.join("lock")).ok());
        if let Some(f) = &file {
            use std::os::fd::AsRawFd;
            // SAFETY: flock(2) takes a descriptor that `f` keeps open for the call and an integer
            // flag; it touches no memory of ours. An error only means no lock, which is tolerated.
            unsafe {
                libc::flock(f.as_raw_fd(), libc::LOCK_EX);
            }
        }
        MachineLock { _file: file }
    }
}

/// Clean up after every run in the machine's run list whose perflab is gone; one line for each.
pub fn sweep() -> Vec<String> {
    let Some(list) = ledger::machine_dir() else {
        return Vec::new();
    };
    let _lock = MachineLock::take(Some(&list));
    let mut lines = Vec::new();
    for (entry, dir) in ledger::listed_runs(&list) {
        match Record::read(&dir) {
            // A run going on, listed by its own perflab.
            Ok(Some(rec)) if rec.owner.alive() && ledger::entry_is(&entry, &rec.owner) => continue,
            Ok(Some(rec)) if ledger::entry_is(&entry, &rec.owner) => match reclaim_locked(&dir) {
                Ok(Some(r)) => lines.push(r.line()),
                Ok(None) => {}
                Err(e) => lines.push(format!("{e:#}")),
            },
            // The run was resumed by another perflab (which lists it itself), or it ended.
            Ok(_) => {}
            Err(e) => lines.push(format!("{e:#}; remove it once nothing of that run is left running")),
        }
        let _ = std::fs::remove_file(&entry);
    }
    lines
}

/// Clean up after the run in `dir` if its perflab is gone (`Ok(None)`: nothing was recorded). A
/// run whose perflab still runs is an error (bad input, exit code 2).
pub fn reclaim_dir(dir: &Path) -> anyhow::Result<Option<Reclaimed>> {
    let _lock = MachineLock::take(ledger::machine_dir().as_deref());
    reclaim_locked(dir)
}

fn reclaim_locked(dir: &Path) -> anyhow::Result<Option<Reclaimed>> {
    let Some(rec) = Record::read(dir)? else {
        return Ok(None);
    };
    if rec.owner.alive() {
        return Err(crate::error::usage(format!(
            "{} is being run right now by perflab (pid {}); let it finish or stop it first",
            dir.display(),
            rec.owner.pid
        )));
    }
    let mut r = Reclaimed {
        dir: dir.to_path_buf(),
        owner: rec.owner.clone(),
        agent: rec.agent,
        processes: 0,
        cgroups: 0,
        teardown: None,
        status: None,
        problems: Vec::new(),
    };
    // Process ids and start times only mean something during the boot that recorded them.
    let same_boot = rec.owner.boot == process::boot_id();
    let mut left: Vec<StartedTarget> = Vec::new();
    for t in &rec.targets {
        if let (true, Some(pgid), Some(start)) = (same_boot, t.pgid, t.start) {
            r.processes += kill_group(pgid, start);
        }
        match super::limits::Applied::remove_leftover(&t.cgroups) {
            Ok(n) => r.cgroups += n,
            Err(e) => {
                r.problems.push(format!("{e:#}"));
                left.push(t.clone());
            }
        }
    }
    if let Some(td) = &rec.teardown {
        r.teardown = Some(if td.withheld {
            format!(
                "did not run the teardown of variant {}: its commands hold credentials, which perflab does \
                 not keep on disk (run it by hand)",
                td.variant
            )
        } else {
            match super::hooks::run_all("teardown", &td.variant, &td.commands, Some(&td.cwd), &Cancel::new()) {
                Ok(()) => format!("ran the teardown of variant {}", td.variant),
                Err(e) => format!("{e:#}"),
            }
        });
    }
    if !rec.agent {
        r.status = mark_interrupted(dir).map_err(|e| r.problems.push(format!("{e:#}"))).ok();
        crate::store::reserve::release(dir);
    }
    if left.is_empty() {
        let _ = std::fs::remove_file(dir.join(LEDGER_FILE));
        if rec.agent {
            let _ = std::fs::remove_dir(dir);
        }
    } else {
        // What would not go stays recorded, for the next try.
        let rest = Record {
            owner: rec.owner,
            agent: rec.agent,
            teardown: None,
            targets: left,
        };
        let _ = crate::util::fs::write_atomic(&dir.join(LEDGER_FILE), serde_json::to_string_pretty(&rest)?);
    }
    Ok(Some(r))
}

/// Kill what is left of the process group `pgid` whose leader started at `start`; how many
/// processes that was. Waits (up to 5 s) until they are gone, so their ports are free.
fn kill_group(pgid: i32, start: u64) -> usize {
    let members = process::group_members(pgid, start);
    for &pid in &members {
        process::signal(pid, libc::SIGKILL);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while !process::group_members(pgid, start).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    members.len()
}

/// Mark the run `interrupted` if it is still marked `running`; the status it had.
fn mark_interrupted(dir: &Path) -> anyhow::Result<RunStatus> {
    let mut store = Store::open(dir)?;
    let status = store.run()?.status;
    if status == RunStatus::Running {
        store.finish_run(RunStatus::Interrupted, crate::util::time::unix_now())?;
        let _ = store.checkpoint();
    }
    Ok(status)
}
