//! Standard error while the terminal view is up: pointed at a pipe whose lines the view shows
//! (the footer's message) and writes out once it ends; and SIGHUP's disposition, put back after.

use std::io::{BufRead, BufReader};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// The terminal's stderr, saved while stderr is captured (-1 otherwise): where a panic writes.
static SAVED: AtomicI32 = AtomicI32::new(-1);

/// Lines kept at most (the view shows the last; all are written out after it, up to this many).
const KEEP: usize = 200;

/// The lines written on stderr so far (the first [`KEEP`]), the latest, how many came and how
/// many the view has been told of.
#[derive(Default)]
struct Seen {
    kept: Vec<String>,
    last: String,
    total: u64,
    told: u64,
}

/// What came on stderr, shared between its reader and the view.
#[derive(Clone, Default)]
pub struct Lines(Arc<Mutex<Seen>>);

impl Lines {
    /// The latest line, when lines came since the last call.
    pub fn news(&self) -> Option<String> {
        let mut g = self.0.lock().ok()?;
        if g.total == g.told {
            return None;
        }
        g.told = g.total;
        let last = g.last.trim_start_matches("perflab: ");
        Some(if g.total == 1 {
            format!("stderr: {last}")
        } else {
            format!("stderr ({} lines, shown again after the view): {last}", g.total)
        })
    }

    fn push(&self, l: String) {
        if let Ok(mut g) = self.0.lock() {
            if g.kept.len() < KEEP {
                g.kept.push(l.clone());
            }
            g.last = l;
            g.total += 1;
        }
    }
}

/// Standard error taken into a pipe (only when it is a terminal: a file or a pipe the user chose
/// keeps everything as it comes).
pub struct Capture {
    saved: OwnedFd,
    lines: Lines,
    reader: JoinHandle<()>,
}

impl Capture {
    pub fn start() -> Option<Capture> {
        // SAFETY: isatty reads a descriptor number; pipe writes two descriptors into the array we
        // own; dup and dup2 take descriptor numbers. Every descriptor made here is owned below.
        unsafe {
            if libc::isatty(libc::STDERR_FILENO) != 1 {
                return None;
            }
            let saved = libc::dup(libc::STDERR_FILENO);
            if saved < 0 {
                return None;
            }
            let saved = OwnedFd::from_raw_fd(saved);
            let mut fds = [0; 2];
            if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
                return None;
            }
            let (r, w) = (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]));
            let lines = Lines::default();
            let into = lines.clone();
            let reader = std::thread::Builder::new()
                .name("perflab-tui-stderr".into())
                .spawn(move || {
                    for l in BufReader::new(std::fs::File::from(r)).lines() {
                        match l {
                            Ok(l) => into.push(l),
                            Err(_) => break,
                        }
                    }
                })
                .ok()?;
            if libc::dup2(w.as_raw_fd(), libc::STDERR_FILENO) < 0 {
                return None;
            }
            drop(w);
            SAVED.store(saved.as_raw_fd(), Ordering::SeqCst);
            install_panic_hook();
            Some(Capture { saved, lines, reader })
        }
    }

    pub fn lines(&self) -> Lines {
        self.lines.clone()
    }

    /// Stderr back where it was; the lines written meanwhile.
    pub fn stop(self) -> Vec<String> {
        SAVED.store(-1, Ordering::SeqCst);
        // SAFETY: dup2 takes two descriptor numbers, `saved` open for the call.
        unsafe {
            libc::dup2(self.saved.as_raw_fd(), libc::STDERR_FILENO);
        }
        // The pipe's last writer is gone with fd 2 moved back: the reader reads to its end.
        let _ = self.reader.join();
        let mut kept = self.lines.0.lock().map(|g| g.kept.clone()).unwrap_or_default();
        let total = self.lines.0.lock().map_or(0, |g| g.total);
        if total > kept.len() as u64 {
            kept.push(format!(
                "perflab: ({} more lines on stderr while the view was up: not kept)",
                total - kept.len() as u64
            ));
        }
        kept
    }
}

/// A panic while stderr is captured: stderr goes back to the terminal first, so its message
/// (after the terminal is restored by ratatui's hook, which this one calls) is seen.
fn install_panic_hook() {
    let next = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let saved = SAVED.load(Ordering::SeqCst);
        if saved >= 0 {
            // SAFETY: dup2 takes two descriptor numbers; `saved` stays open while SAVED holds it.
            unsafe {
                libc::dup2(saved, libc::STDERR_FILENO);
            }
        }
        next(info);
    }));
}

/// SIGHUP's disposition now (before the view catches it).
pub fn sighup_disposition() -> Option<libc::sigaction> {
    // SAFETY: sigaction with a null new action only writes the current one into `old`, ours.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        (libc::sigaction(libc::SIGHUP, std::ptr::null(), &mut old) == 0).then_some(old)
    }
}

/// Put SIGHUP's disposition back (signal-hook, whose handler it replaces, is not asked to catch
/// SIGHUP again in this process: one view a run).
pub fn restore_sighup(before: Option<libc::sigaction>) {
    if let Some(old) = before {
        // SAFETY: `old` is a disposition sigaction itself returned; the old-action pointer is null.
        unsafe {
            libc::sigaction(libc::SIGHUP, &old, std::ptr::null_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_view_is_told_of_new_lines_once_and_keeps_them_for_after() {
        let l = super::Lines::default();
        assert_eq!(l.news(), None);
        l.push("perflab: warning: the target is slow to stop".into());
        assert_eq!(l.news().as_deref(), Some("stderr: warning: the target is slow to stop"));
        assert_eq!(l.news(), None, "told once");
        for i in 0..300 {
            l.push(format!("line {i}"));
        }
        assert_eq!(
            l.news().as_deref(),
            Some("stderr (301 lines, shown again after the view): line 299")
        );
        assert_eq!(l.0.lock().unwrap().kept.len(), super::KEEP, "bounded");
    }
}
