//! The command probe's guard: its commands die with perflab, even by SIGKILL, the whole group.
//!
//! `PR_SET_PDEATHSIG` takes only the process perflab started (`sh`), not what that started in turn
//! (`sh -c 'sleep 100'` forks the `sleep`). The guard is a small shell, in a process group of its
//! own, that outlives perflab. It sleeps on a pipe from perflab that nothing is written to; when
//! the pipe ends (perflab exited or died), it reads the group id perflab left in a memory file
//! they share (a memfd, the guard's standard output, opened for reading and writing) and SIGKILLs
//! that group. perflab writes the id there when a command starts and blanks it once the command
//! has ended: one `pwrite` of a few bytes each, which wakes nothing (the guard reads the file only
//! at the end). A probe runs one command at a time, so the file holds one id.

use std::fs::File;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};

/// The guard's script: wait for the pipe's end, then kill the group listed (digits only: a blank
/// slot, or anything else, kills nothing). The signals are ignored, so that a Ctrl-C or a hang-up
/// of perflab's terminal leaves the guard to do its work.
const SCRIPT: &str = r#"trap '' INT HUP TERM
while read -r _; do :; done
read -r g <&1 || :
case $g in
  ''|*[!0-9]*) ;;
  *) kill -s KILL -- "-$g" 2>/dev/null ;;
esac
"#;

/// The list's one slot: a group id, left-aligned, blank-padded, and a newline.
const SLOT: usize = 12;

pub(crate) struct Guard {
    child: Child,
    /// The pipe whose end tells the guard that perflab has gone.
    alive: Option<ChildStdin>,
    /// The file the guard reads at the end: the group of the command running, or blanks.
    list: File,
}

impl Guard {
    /// Start the guard; None when it cannot be (no `sh`, no memfd: the commands then rely on
    /// `PR_SET_PDEATHSIG` alone).
    pub fn start() -> Option<Guard> {
        let list = memfd()?;
        let mut child = Command::new("sh")
            .args(["-c", SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::from(list.try_clone().ok()?))
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .ok()?;
        let alive = child.stdin.take();
        let g = Guard { child, alive, list };
        g.write(None);
        Some(g)
    }

    fn write(&self, pgid: Option<u32>) {
        let mut slot = [b' '; SLOT];
        if let Some(p) = pgid {
            let digits = p.to_string();
            slot[..digits.len()].copy_from_slice(digits.as_bytes());
        }
        slot[SLOT - 1] = b'\n';
        let _ = self.list.write_at(&slot, 0);
    }

    /// The group `pgid` started: the guard kills it if perflab dies before [`Guard::ended`].
    pub fn started(&mut self, pgid: u32) {
        self.write(Some(pgid));
    }

    /// The group started last is done with (its leader not yet reaped, so the id is still its own).
    pub fn ended(&mut self) {
        self.write(None);
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // The end of the pipe: the guard kills what is still listed (nothing, normally) and exits.
        drop(self.alive.take());
        let _ = self.child.wait();
    }
}

/// A memory file, readable and writable, closed on exec (the guard gets its own copy as its
/// standard output).
fn memfd() -> Option<File> {
    // SAFETY: a NUL-terminated name and a flag; the result is checked before use.
    let fd = unsafe { libc::memfd_create(c"perflab-guard".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    // SAFETY: fd is a fresh descriptor that nothing else owns.
    Some(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether any process of group `pgid` is alive.
    fn alive(pgid: u32) -> bool {
        // SAFETY: signal 0 checks only.
        unsafe { libc::kill(-(pgid as libc::pid_t), 0) == 0 }
    }

    #[test]
    fn the_guard_kills_the_group_listed_at_the_end_and_none_that_ended() {
        let mut g = Guard::start().expect("the guard starts");
        let spawn = || Command::new("sleep").arg("30").process_group(0).spawn().expect("sleep starts");
        // One that started and ended: unlisted, so left alone at the end.
        let mut done = spawn();
        g.started(done.id());
        g.ended();
        // The one running when the guard's pipe ends: killed.
        let mut running = spawn();
        g.started(running.id());
        drop(g);
        let status = running.wait().expect("wait");
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(libc::SIGKILL));
        assert!(alive(done.id()), "an ended group is not killed");
        done.kill().expect("kill");
        done.wait().expect("wait");
    }
}
