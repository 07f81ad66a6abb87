//! Signals to the processes perflab started: one process, a whole process group, and the stop
//! sequence (signal the group, wait a grace period, then SIGKILL what is left of it); who a process
//! is (its start time in `/proc/PID/stat`, so a recorded PID is never mistaken for a newer process
//! that got the same number); and a child that dies with perflab (`PR_SET_PDEATHSIG`).

use std::time::{Duration, Instant};

/// How often [`stop_group`] checks whether the group is gone during the grace period.
const POLL: Duration = Duration::from_millis(10);

/// Send `sig` to the process `pid`. A process that is already gone is not an error.
pub fn signal(pid: libc::pid_t, sig: libc::c_int) {
    // SAFETY: kill(2) takes two integers and touches no memory of ours; a bad pid or signal only
    // makes it return an error (ESRCH, EINVAL), which is ignored on purpose.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// Send `sig` to every process in the group `pgid` (a group leader's pid when it was started with its
/// own group). A group that is already gone is not an error.
pub fn signal_group(pgid: libc::pid_t, sig: libc::c_int) {
    if pgid <= 0 {
        // kill(0, …) and kill(-(-n), …) would reach perflab's own group or a single process.
        return;
    }
    signal(-pgid, sig);
}

/// Stop the group `pgid`: send it `sig`, wait up to `grace` until `gone()` says the leader has
/// exited (checked every 10 ms), then SIGKILL whatever is left of the group either way (the leader may
/// be gone while its children live on). Returns whether `gone()` became true within `grace`.
/// A second Ctrl-C ([`crate::util::cancel::hurried`]) cuts the grace period short.
pub fn stop_group(pgid: libc::pid_t, sig: libc::c_int, grace: Duration, mut gone: impl FnMut() -> bool) -> bool {
    signal_group(pgid, sig);
    let deadline = crate::util::duration::deadline(Instant::now(), grace);
    let mut went = gone();
    while !went && Instant::now() < deadline && !crate::util::cancel::hurried() {
        std::thread::sleep(POLL);
        went = gone();
    }
    signal_group(pgid, libc::SIGKILL);
    went
}

/// What `/proc/PID/stat` says about a process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcStat {
    /// `R`, `S`, `D`, `Z` (zombie), `X` (dead), …
    pub state: char,
    pub pgid: libc::pid_t,
    /// When the process started, in clock ticks since boot: with the boot id, who it is.
    pub start: u64,
}

impl ProcStat {
    /// Running or able to run: not a zombie waiting to be reaped, not dead.
    pub fn live(&self) -> bool {
        !matches!(self.state, 'Z' | 'X')
    }
}

/// Parse the text of `/proc/PID/stat` (the command name in parentheses may hold spaces and `)`).
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state(3) ppid(4) pgrp(5) … starttime(22), numbered as in proc(5).
    Some(ProcStat {
        state: f.first()?.chars().next()?,
        pgid: f.get(2)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
    })
}

/// The process `pid` as `/proc` shows it now, if it exists.
pub fn stat(pid: libc::pid_t) -> Option<ProcStat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`): a start time means nothing across boots.
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Whether `pid` is still the live process that started at `start` (clock ticks since boot).
pub fn is_same_live(pid: libc::pid_t, start: u64) -> bool {
    stat(pid).is_some_and(|s| s.live() && s.start == start)
}

/// The live processes of the group `pgid` that started at or after `since` (ticks since boot): the
/// members of a group whose leader started then. A later group with the same number cannot hold an
/// older process, and a group id is not reused while any member lives.
pub fn group_members(pgid: libc::pid_t, since: u64) -> Vec<libc::pid_t> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|&pid| stat(pid).is_some_and(|s| s.live() && s.pgid == pgid && s.start >= since))
        .collect()
}

/// Make the child that `cmd` starts die (SIGKILL) when perflab dies, even by SIGKILL. The kernel
/// sends the signal when the *thread* that forked the child ends, so start such children from a
/// thread that lives as long as the run (perflab starts them from its main thread).
pub fn die_with_parent(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: getpid(2) takes no arguments and cannot fail.
    let parent = unsafe { libc::getpid() };
    // SAFETY: pre_exec runs the closure in the child between fork and exec, where only
    // async-signal-safe work is sound: it makes the prctl, getppid and _exit system calls with
    // integer arguments, allocates nothing and takes no lock.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // perflab may have died between the fork and the prctl: then nobody will signal us.
            if libc::getppid() != parent {
                libc::_exit(137);
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    #[test]
    fn stop_group_ends_a_group_that_ignores_the_first_signal() {
        // A shell that ignores SIGTERM, with a child in the same group; it says when the trap is set.
        let mut child = Command::new("/bin/sh")
            .args(["-c", "trap '' TERM; echo ready; sleep 30 & wait"])
            .process_group(0)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh");
        let pgid = child.id() as libc::pid_t;
        let mut line = String::new();
        let out = child.stdout.take().expect("stdout");
        std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line).expect("read");
        assert_eq!(line.trim(), "ready");
        let went = stop_group(pgid, libc::SIGTERM, Duration::from_millis(200), || {
            matches!(child.try_wait(), Ok(Some(_)))
        });
        assert!(!went, "the shell ignores SIGTERM, so it outlives the grace period");
        let status = child.wait().expect("wait");
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }

    #[test]
    fn stat_reads_the_group_and_start_time_past_a_name_with_parentheses() {
        let text = "4242 (a) b (c)) S 1 4240 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        let s = parse_stat(text).expect("parses");
        assert_eq!((s.state, s.pgid, s.start), ('S', 4240, 987654));
        let me = stat(std::process::id() as libc::pid_t).expect("own stat");
        assert!(me.live());
        assert!(is_same_live(std::process::id() as libc::pid_t, me.start));
        assert!(!is_same_live(std::process::id() as libc::pid_t, me.start + 1));
    }

    #[test]
    fn stop_group_returns_early_when_the_leader_exits() {
        let mut child = Command::new("sleep").arg("30").process_group(0).spawn().expect("sleep");
        let pgid = child.id() as libc::pid_t;
        let went = stop_group(pgid, libc::SIGTERM, Duration::from_secs(20), || {
            matches!(child.try_wait(), Ok(Some(_)))
        });
        assert!(went, "sleep ends on SIGTERM, within the grace period");
    }
}
