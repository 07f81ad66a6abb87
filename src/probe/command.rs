//! `command`: any command, timed from its start to its exit, as `time ssh server 'echo test'`
//! measures. A shell line runs with `sh -c` (one plain word runs as a program); an argv runs
//! without a shell. The command runs in its
//! own process group with no input and its output discarded, and dies with perflab, the whole group
//! (the probe's `guard`; without one, `PR_SET_PDEATHSIG` for the process perflab starts); exit 0 is a reply, any other exit is failed with its status (128 + N for
//! signal N), and a command still running at the timeout has its group killed and is a loss. An
//! abort (Ctrl-C) kills the group at once, and the probe is no sample.

use super::clock::Instant;
use super::guard::Guard;
use super::{sys, Driver, Exchange, Exchanged, Opened, Outcome, Parts, ProbeSpec, Target, Traffic};
use crate::error::usage;
use crate::util::command::CommandLine;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

pub(crate) fn open(spec: &ProbeSpec) -> anyhow::Result<Opened> {
    let (argv, how) = match &spec.target {
        // One plain word (`true`, `/usr/bin/uptime`) needs no shell: it runs, and is checked, as a program.
        Target::Command(CommandLine::Shell(line)) | Target::Address(line) if is_plain_word(line) => {
            (vec![line.trim().to_string()], "no shell")
        }
        Target::Command(CommandLine::Shell(line)) | Target::Address(line) => {
            (vec!["sh".to_string(), "-c".to_string(), line.clone()], "sh -c")
        }
        Target::Command(CommandLine::Argv(v)) => (v.clone(), "no shell"),
    };
    // The program is looked up on PATH once, here, not at each probe.
    let program = resolve(&argv[0]).ok_or_else(|| usage(format!("command probe: `{}` is not an executable file or on PATH", argv[0])))?;
    Ok(Opened {
        driver: Driver::Exchange(Box::new(Run {
            program,
            argv,
            guard: None,
        })),
        detail: format!("run to exit ({how})"),
        parts: &[],
    })
}

/// A word the shell would run as it is: no blanks, quotes, variables, globs or operators.
fn is_plain_word(line: &str) -> bool {
    let w = line.trim();
    !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c))
}

/// A program given with a slash must be an executable file; without one, the first executable
/// file of that name on PATH.
fn resolve(program: &str) -> Option<PathBuf> {
    let executable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        return executable(Path::new(program)).then(|| PathBuf::from(program));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(program)).find(|p| executable(p))
}

struct Run {
    /// The program's path; it still sees `argv[0]` as given.
    program: PathBuf,
    argv: Vec<String>,
    /// Started with the first probe.
    guard: Option<Guard>,
}

impl Exchange for Run {
    fn exchange(&mut self, timeout: Duration) -> Exchanged {
        let t0 = Instant::now();
        let mut cmd = Command::new(&self.program);
        cmd.arg0(&self.argv[0])
            .args(&self.argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        if self.guard.is_none() {
            self.guard = Guard::start();
        }
        if self.guard.is_none() {
            // Without a guard, the process perflab starts at least dies with perflab, even by
            // SIGKILL (the probe's thread, which forks it, lives until it is reaped). With one,
            // the guard kills the whole group, that process included, and the command is started
            // without a code hook between fork and exec, which lets std use posix_spawn (a
            // vfork) instead of a fork of perflab's whole address space.
            crate::util::process::die_with_parent(&mut cmd);
        }
        let guard = &mut self.guard;
        let outcome = match cmd.spawn() {
            Ok(child) => {
                let pgid = child.id();
                if let Some(g) = guard.as_mut() {
                    g.started(pgid);
                }
                wait(child, t0, timeout, &mut || {
                    if let Some(g) = guard.as_mut() {
                        g.ended();
                    }
                })
            }
            Err(e) => Outcome::Error(format!("cannot run `{}`: {e}", self.argv[0])),
        };
        Exchanged {
            outcome,
            parts: Parts::NONE,
            traffic: Traffic::default(),
        }
    }
}

/// Wait for the child's exit until `t0 + timeout`; past it, kill its group. An abort of the probes
/// (Ctrl-C) kills the group at once, through the thread's cut. `ended` is called once the leader
/// has exited (or been killed), before it is reaped.
fn wait(mut child: Child, t0: Instant, timeout: Duration, ended: &mut dyn FnMut()) -> Outcome {
    let deadline = t0 + timeout;
    let held = crate::util::cut::hold_group(child.id() as libc::pid_t);
    let exited = match sys::pidfd(child.id()) {
        Some(fd) => {
            use std::os::fd::AsRawFd;
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                match sys::poll_in(&[fd.as_raw_fd()], Some(left)) {
                    Ok(m) if m & 1 != 0 => break true,
                    _ if left.is_zero() => break false,
                    Ok(_) => continue,
                    Err(_) => break poll_exit(&mut child, deadline),
                }
            }
        }
        None => poll_exit(&mut child, deadline),
    };
    let rtt = t0.elapsed();
    // Taken back before the leader is reaped, so that the cut never signals a reused group id.
    drop(held);
    if !exited {
        sys::kill_group(child.id());
        ended();
        let _ = child.wait();
        return Outcome::Timeout;
    }
    ended();
    match child.wait() {
        Ok(st) => status_outcome(st, rtt),
        Err(e) => Outcome::Error(format!("wait: {e}")),
    }
}

/// Without pidfds: look every millisecond.
fn poll_exit(child: &mut Child, deadline: Instant) -> bool {
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn status_outcome(st: ExitStatus, rtt: Duration) -> Outcome {
    match (st.code(), st.signal()) {
        (Some(0), _) => Outcome::Reply { rtt },
        (Some(code), _) => Outcome::Failed { rtt, status: code },
        (None, Some(sig)) => Outcome::Failed { rtt, status: 128 + sig },
        (None, None) => Outcome::Error("no exit status".into()),
    }
}
