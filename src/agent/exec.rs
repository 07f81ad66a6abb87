//! The agent's `exec`: a command run to its end in its own process group, on a thread of its own,
//! its status and output sent back as the request's reply.

use super::Out;
use crate::remote::protocol::{CommandSpec, ExecResult};
use crate::util::{process, Tail};
use std::collections::BTreeSet;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How much of each stream is sent back (the adapters parse a tool's summary, not megabytes).
const OUTPUT_BYTES: usize = 4 * 1024 * 1024;

/// The process groups of the exec commands running now.
#[derive(Clone, Default)]
pub struct Groups(Arc<Mutex<BTreeSet<i32>>>);

impl Groups {
    fn add(&self, g: i32) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).insert(g);
    }

    fn remove(&self, g: i32) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(&g);
    }

    /// SIGKILL every group still running.
    pub fn kill_all(&self) {
        for g in self.0.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            process::signal_group(*g, libc::SIGKILL);
        }
    }
}

/// Run `command` on a thread and reply to request `id` when it ends.
pub fn spawn(
    id: u64,
    mut command: CommandSpec,
    cwd: Option<String>,
    mut env: Vec<(String, String)>,
    timeout_s: f64,
    out: Out,
    groups: Groups,
) {
    super::own_binary::use_own_perflab(&mut command, &mut env);
    // The thread that forks a child dying with the agent must live as long as the child: this one
    // waits for it.
    std::thread::spawn(move || {
        let r = run(command, cwd, env, timeout_s, &groups).and_then(|r| Ok(serde_json::to_value(r)?));
        out.reply(id, r);
    });
}

fn run(
    command: CommandSpec,
    cwd: Option<String>,
    env: Vec<(String, String)>,
    timeout_s: f64,
    groups: &Groups,
) -> anyhow::Result<ExecResult> {
    use std::os::unix::process::CommandExt;
    let mut cmd = match &command {
        CommandSpec::Argv(a) => {
            let Some((prog, args)) = a.split_first() else {
                anyhow::bail!("exec: the command is empty");
            };
            let mut c = Command::new(prog);
            c.args(args);
            c
        }
        CommandSpec::Shell(s) => {
            let mut c = Command::new("/bin/sh");
            c.arg("-c").arg(s);
            c
        }
    };
    if let Some(d) = &cwd {
        cmd.current_dir(d);
    }
    cmd.envs(env);
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.process_group(0);
    process::die_with_parent(&mut cmd);
    let what = match &command {
        CommandSpec::Argv(a) => a.first().cloned().unwrap_or_default(),
        CommandSpec::Shell(s) => s.clone(),
    };
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| anyhow::anyhow!("cannot run `{what}` on this host: {e}"))?;
    let pgid = child.id() as i32;
    groups.add(pgid);
    let pump = |src: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut tail = Tail::new(OUTPUT_BYTES);
            if let Some(mut s) = src {
                let mut buf = [0u8; 16 * 1024];
                while let Ok(n) = s.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    tail.push(&buf[..n]);
                }
            }
            tail.text()
        })
    };
    let so = pump(child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    let se = pump(child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    let limit = Duration::try_from_secs_f64(timeout_s).unwrap_or(Duration::from_secs(3600));
    let mut timed_out = false;
    let pid = child.id() as libc::pid_t;
    // `child` is reaped by `reap` (wait4, for its resource usage), never by std.
    drop(child);
    let (status, usage) = loop {
        if let Some(done) = reap(pid)? {
            break done;
        }
        if !timed_out && start.elapsed() > limit {
            timed_out = true;
            process::signal_group(pgid, libc::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // What the command left in its group goes with it.
    process::signal_group(pgid, libc::SIGKILL);
    groups.remove(pgid);
    let elapsed_s = start.elapsed().as_secs_f64();
    let seconds = |t: libc::timeval| t.tv_sec.max(0) as f64 + t.tv_usec.max(0) as f64 / 1e6;
    Ok(ExecResult {
        status: (!libc::WIFSIGNALED(status)).then(|| libc::WEXITSTATUS(status)),
        timed_out,
        elapsed_s,
        stdout: so.join().unwrap_or_default(),
        stderr: se.join().unwrap_or_default(),
        user_s: seconds(usage.ru_utime),
        system_s: seconds(usage.ru_stime),
        max_rss_kb: usage.ru_maxrss.max(0) as u64,
    })
}

/// The wait status and resource usage of `pid` once it has ended (`wait4` without blocking), or
/// None while it runs.
fn reap(pid: libc::pid_t) -> anyhow::Result<Option<(i32, libc::rusage)>> {
    let mut status = 0;
    // SAFETY: rusage is a C struct of integers, for which all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are valid, writable locals for the whole call; wait4 only
        // fills them.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            return Ok(Some((status, usage)));
        }
        if r == 0 {
            return Ok(None);
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            anyhow::bail!("exec: wait4: {err}");
        }
    }
}
