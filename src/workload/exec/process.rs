//! Spawn a command in its own process group, capture its output (bounded), and reap it with `wait4`
//! to get its CPU time. Cancel or timeout → SIGTERM to the group, then SIGKILL after a grace period.

use crate::util::{process, Cancel, Tail};
use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// At most this much of each stream is kept (the tail); tools print their results last.
pub const CAPTURE_LIMIT: usize = 16 << 20;

/// How long the group gets after SIGTERM before SIGKILL, at its timeout.
const GRACE: Duration = Duration::from_secs(2);

/// The same after Ctrl-C: enough for a tool to print what it measured, short enough that perflab
/// ends within a second of the Ctrl-C whatever the command does.
const CANCEL_GRACE: Duration = Duration::from_millis(600);

/// How the command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit status {c}"),
            Exit::Signal(s) => write!(f, "killed by signal {s}"),
        }
    }
}

/// Why perflab stopped the command early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    Cancelled,
    TimedOut,
}

/// What one run of a command produced.
#[derive(Clone, Debug)]
pub struct Finished {
    pub exit: Exit,
    pub wall: Duration,
    pub user: Duration,
    pub system: Duration,
    /// Peak resident set of the command (or its largest reaped descendant), KiB.
    pub max_rss_kb: u64,
    pub stdout: String,
    pub stderr: String,
    /// Whether the head of stdout/stderr was dropped because it exceeded [`CAPTURE_LIMIT`].
    pub truncated: bool,
    pub stopped: Option<Stopped>,
}

/// Run `argv` to completion (or until `cancel`/`timeout`). Errors only when it cannot be started.
pub fn run(
    argv: &[String],
    cwd: Option<&Path>,
    env: &BTreeMap<String, String>,
    timeout: Duration,
    cancel: &Cancel,
) -> anyhow::Result<Finished> {
    let Some((prog, args)) = argv.split_first() else {
        anyhow::bail!("empty command");
    };
    let mut cmd = Command::new(prog);
    cmd.args(args)
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.process_group(0);
    // If perflab itself dies (SIGKILL, crash), the command is not left running.
    // SAFETY: pre_exec runs the closure in the child between fork and exec, where only
    // async-signal-safe work is sound: the closure makes one prctl system call with integer
    // arguments, allocates nothing and takes no lock.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| anyhow::anyhow!("cannot start `{prog}`: {e}"))?;
    let pid = child.id() as libc::pid_t;
    let out_buf = Arc::new(Mutex::new(Tail::new(CAPTURE_LIMIT)));
    let err_buf = Arc::new(Mutex::new(Tail::new(CAPTURE_LIMIT)));
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let readers = [
        child.stdout.take().map(|s| spawn_reader(s, out_buf.clone(), done_tx.clone())),
        child.stderr.take().map(|s| spawn_reader(s, err_buf.clone(), done_tx.clone())),
    ];
    drop(done_tx);
    // `child` is reaped by wait4 below, never by std: dropping a std Child does not wait.
    drop(child);

    let (wait_tx, wait_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = wait4(pid);
        let _ = wait_tx.send((r, Instant::now()));
    });

    let mut stopped = None;
    let (waited, ended) = loop {
        match wait_rx.recv_timeout(Duration::from_millis(20)) {
            Ok(v) => break v,
            Err(mpsc::RecvTimeoutError::Disconnected) => anyhow::bail!("lost the wait on `{prog}`"),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if cancel.is_cancelled() {
            stopped = Some(Stopped::Cancelled);
        } else if start.elapsed() >= timeout {
            stopped = Some(Stopped::TimedOut);
        } else {
            continue;
        }
        let mut reaped = None;
        let grace = if stopped == Some(Stopped::Cancelled) { CANCEL_GRACE } else { GRACE };
        process::stop_group(pid, libc::SIGTERM, grace, || {
            reaped = wait_rx.try_recv().ok();
            reaped.is_some()
        });
        match reaped.map(Ok).unwrap_or_else(|| wait_rx.recv()) {
            Ok(v) => break v,
            Err(_) => anyhow::bail!("lost the wait on `{prog}`"),
        }
    };
    let (status, usage) = waited?;
    // Leave nothing behind: whatever the command left running in its group goes too.
    process::signal_group(pid, libc::SIGKILL);
    // Readers end when every writer of the pipes is gone; something that escaped the group may hold
    // them open, so wait only a little.
    let linger = if stopped == Some(Stopped::Cancelled) {
        Duration::from_millis(300)
    } else {
        Duration::from_secs(2)
    };
    let deadline = Instant::now() + linger;
    let mut open = readers.iter().flatten().count();
    while open > 0 {
        let left = deadline.saturating_duration_since(Instant::now());
        match done_rx.recv_timeout(left) {
            Ok(()) => open -= 1,
            Err(_) => break,
        }
    }
    let (stdout, t1) = take(&out_buf);
    let (stderr, t2) = take(&err_buf);
    let exit = if libc::WIFSIGNALED(status) {
        Exit::Signal(libc::WTERMSIG(status))
    } else {
        Exit::Code(std::process::ExitStatus::from_raw(status).code().unwrap_or(-1))
    };
    Ok(Finished {
        exit,
        wall: ended - start,
        user: timeval(usage.ru_utime),
        system: timeval(usage.ru_stime),
        max_rss_kb: usage.ru_maxrss.max(0) as u64,
        stdout,
        stderr,
        truncated: t1 || t2,
        stopped,
    })
}

fn wait4(pid: libc::pid_t) -> anyhow::Result<(i32, libc::rusage)> {
    let mut status = 0;
    // SAFETY: rusage is a C struct of integers, for which all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are valid, writable locals for the whole call; wait4 only
        // fills them.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            return Ok((status, usage));
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            anyhow::bail!("wait4: {err}");
        }
    }
}

fn timeval(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
}

fn spawn_reader(mut src: impl Read + Send + 'static, buf: Arc<Mutex<Tail>>, done: mpsc::Sender<()>) {
    std::thread::spawn(move || {
        let mut chunk = [0u8; 64 * 1024];
        loop {
            match src.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => buf.lock().unwrap_or_else(|p| p.into_inner()).push(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = done.send(());
    });
}

fn take(buf: &Arc<Mutex<Tail>>) -> (String, bool) {
    buf.lock().unwrap_or_else(|p| p.into_inner()).take_text()
}
