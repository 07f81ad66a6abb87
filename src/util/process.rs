//! Signals to the processes perflab started: one process, a whole process group, and the stop
//! sequence (signal the group, wait a grace period, then SIGKILL what is left of it).

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
pub fn stop_group(pgid: libc::pid_t, sig: libc::c_int, grace: Duration, mut gone: impl FnMut() -> bool) -> bool {
    signal_group(pgid, sig);
    let deadline = crate::util::duration::deadline(Instant::now(), grace);
    let mut went = gone();
    while !went && Instant::now() < deadline {
        std::thread::sleep(POLL);
        went = gone();
    }
    signal_group(pgid, libc::SIGKILL);
    went
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
    fn stop_group_returns_early_when_the_leader_exits() {
        let mut child = Command::new("sleep").arg("30").process_group(0).spawn().expect("sleep");
        let pgid = child.id() as libc::pid_t;
        let went = stop_group(pgid, libc::SIGTERM, Duration::from_secs(20), || {
            matches!(child.try_wait(), Ok(Some(_)))
        });
        assert!(went, "sleep ends on SIGTERM, within the grace period");
    }
}
