//! One `perf record` from start to folded stacks: started with its events disabled, opened and
//! closed through its control FIFO, stopped with SIGINT (as Ctrl-C stops it), read back with
//! `perf script`. Everything it made (its directory, the perf process, a tracefs it mounted) is
//! gone when the recorder is dropped, on every path.

use super::{CallGraph, Options, Scope};
use crate::model::{Profile, ProfileKind};
use anyhow::{anyhow, Context};
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long perf may take to start (read the target's maps) on a busy machine.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long perf may take to acknowledge a command or to write its data after SIGINT.
const ACK_TIMEOUT: Duration = Duration::from_secs(5);
const STOP_TIMEOUT: Duration = Duration::from_secs(20);

pub struct Recorder {
    opts: Options,
    child: Option<Child>,
    dir: PathBuf,
    ctl: Option<File>,
    ack: Option<File>,
    /// CLOCK_MONOTONIC when the window opened and closed.
    opened: Option<f64>,
    closed: Option<f64>,
    /// Acknowledgements still to read (an enable is not waited for, so as not to delay the load).
    pending_acks: usize,
    /// The tracefs mount point this recorder mounted (unmounted on drop).
    mounted: Option<PathBuf>,
}

impl Recorder {
    /// Start `perf record` with its events disabled and wait until it is ready to record. Fails
    /// with perf's own reason when it cannot start (what [`super::availability`] could not tell).
    pub fn start(opts: Options) -> anyhow::Result<Recorder> {
        let dir = private_dir()?;
        let mut r = Recorder {
            opts,
            child: None,
            dir,
            ctl: None,
            ack: None,
            opened: None,
            closed: None,
            pending_acks: 0,
            mounted: None,
        };
        if r.opts.kind == ProfileKind::OffCpu {
            r.mounted = super::offcpu::mount_tracefs()?;
        }
        for f in ["ctl", "ack"] {
            mkfifo(&r.dir.join(f))?;
        }
        let log = File::create(r.dir.join("perf.log"))?;
        let mut cmd = Command::new("perf");
        cmd.args(record_args(&r.opts, &r.dir))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            // Its own process group: Ctrl-C reaches perflab, which stops perf itself.
            .process_group(0);
        crate::util::process::die_with_parent(&mut cmd);
        r.child = Some(cmd.spawn().context("cannot start perf")?);
        r.ack = Some(
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(r.dir.join("ack"))?,
        );
        r.wait_ready()?;
        Ok(r)
    }

    /// Open the window: perf records from now on. Does not wait for perf's acknowledgement.
    pub fn enable(&mut self) -> anyhow::Result<()> {
        self.opened = Some(super::monotonic_now());
        self.command("enable")
    }

    /// Close the window, and wait until perf acknowledged it.
    pub fn disable(&mut self) -> anyhow::Result<()> {
        if self.opened.is_none() || self.closed.is_some() {
            return Ok(());
        }
        self.command("disable")?;
        let deadline = Instant::now() + ACK_TIMEOUT;
        while self.pending_acks > 0 {
            self.read_acks()?;
            if Instant::now() > deadline {
                return Err(anyhow!("perf did not acknowledge the end of the profile within {ACK_TIMEOUT:?}"));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        self.closed = Some(super::monotonic_now());
        Ok(())
    }

    /// Stop perf and fold what it recorded in the window. `t0` (CLOCK_MONOTONIC seconds) is the
    /// time the profile's window and samples are counted from (the trial's start).
    pub fn finish(mut self, t0: f64) -> anyhow::Result<Profile> {
        self.disable()?;
        let log = self.stop_perf()?;
        let (Some(open), Some(close)) = (self.opened, self.closed) else {
            return Err(anyhow!("the profile's window was never opened"));
        };
        let data = self.dir.join("perf.data");
        let mut profile = match self.opts.kind {
            ProfileKind::OnCpu => super::fold::on_cpu(&data, (open, close))?,
            ProfileKind::OffCpu => super::offcpu::fold(&data, (open, close))?,
        };
        profile.kind = Some(self.opts.kind);
        profile.scope = self.opts.scope.describe();
        profile.frequency_hz = (self.opts.kind == ProfileKind::OnCpu).then_some(self.opts.frequency_hz as f64);
        profile.window = (open - t0, close - t0);
        profile.sampled = profile.sampled.map(|(a, b)| (a - t0, b - t0));
        if let Some(lost) = log.lines().find(|l| l.contains("lost")) {
            profile.notes.push(format!("perf lost samples: {}", lost.trim()));
        }
        Ok(profile)
    }

    /// Write a control command to perf's FIFO.
    fn command(&mut self, what: &str) -> anyhow::Result<()> {
        let ctl = match &mut self.ctl {
            Some(c) => c,
            None => self.ctl.insert(
                std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(self.dir.join("ctl"))
                    .context("cannot reach perf's control FIFO")?,
            ),
        };
        ctl.write_all(format!("{what}\n").as_bytes())
            .with_context(|| format!("cannot send `{what}` to perf"))?;
        self.pending_acks += 1;
        Ok(())
    }

    fn read_acks(&mut self) -> anyhow::Result<()> {
        let Some(ack) = &mut self.ack else { return Ok(()) };
        let mut buf = [0u8; 64];
        match ack.read(&mut buf) {
            Ok(n) => {
                let acks = String::from_utf8_lossy(&buf[..n]).matches("ack").count();
                self.pending_acks = self.pending_acks.saturating_sub(acks);
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Wait until perf says its events are set up (disabled), or fail with what it printed.
    fn wait_ready(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let log = std::fs::read_to_string(self.dir.join("perf.log")).unwrap_or_default();
            if log.contains("Events disabled") {
                return Ok(());
            }
            if let Some(child) = &mut self.child {
                if child.try_wait()?.is_some() {
                    self.child = None;
                    return Err(anyhow!("perf record could not start: {}", perf_reason(&log)));
                }
            }
            if Instant::now() > deadline {
                return Err(anyhow!("perf record did not start within {START_TIMEOUT:?}"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGINT perf (it writes its data and exits), SIGKILL it if it does not in time. Returns its log.
    fn stop_perf(&mut self) -> anyhow::Result<String> {
        if let Some(mut child) = self.child.take() {
            crate::util::process::signal(child.id() as i32, libc::SIGINT);
            let deadline = Instant::now() + STOP_TIMEOUT;
            while child.try_wait()?.is_none() {
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(anyhow!("perf did not write its data within {STOP_TIMEOUT:?} of being stopped"));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        Ok(std::fs::read_to_string(self.dir.join("perf.log")).unwrap_or_default())
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(m) = self.mounted.take() {
            super::offcpu::unmount(&m);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// perf's arguments: events disabled at start (`-D -1`), commands through the FIFOs, timestamps
/// on CLOCK_MONOTONIC.
fn record_args(o: &Options, dir: &Path) -> Vec<String> {
    let d = |f: &str| dir.join(f).display().to_string();
    let mut a: Vec<String> = vec![
        "record".into(),
        "-o".into(),
        d("perf.data"),
        "-D".into(),
        "-1".into(),
        format!("--control=fifo:{},{}", d("ctl"), d("ack")),
        "-k".into(),
        "monotonic".into(),
    ];
    match o.kind {
        ProfileKind::OnCpu => a.extend(["-e".into(), "cpu-clock".into(), "-F".into(), o.frequency_hz.to_string()]),
        ProfileKind::OffCpu => a.extend(super::offcpu::events()),
    }
    a.extend(match o.call_graph {
        CallGraph::Fp => vec!["--call-graph".to_string(), "fp".to_string()],
        CallGraph::Dwarf => vec!["--call-graph".to_string(), "dwarf".to_string()],
    });
    match &o.scope {
        Scope::Processes(pids) => {
            a.push("-p".into());
            a.push(super::join(pids));
        }
        Scope::Cgroup(path) => {
            a.push("-a".into());
            let events = a.iter().filter(|x| *x == "-e").count();
            a.push("-G".into());
            a.push(vec![path.trim_start_matches('/'); events].join(","));
        }
        Scope::System => a.push("-a".into()),
    }
    a
}

/// The line of perf's output that says why it failed (its last non-empty line).
fn perf_reason(log: &str) -> String {
    let lines: Vec<&str> = log.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let key = lines
        .iter()
        .find(|l| l.contains("Permission") || l.contains("No such process") || l.contains("paranoid") || l.starts_with("Error"));
    key.or(lines.last()).map_or("it printed nothing".to_string(), |l| l.to_string())
}

fn private_dir() -> anyhow::Result<PathBuf> {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("perflab-profile-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

use std::os::unix::fs::DirBuilderExt;

fn mkfifo(p: &Path) -> anyhow::Result<()> {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes())?;
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(std::io::Error::last_os_error()).with_context(|| format!("cannot create {}", p.display()));
    }
    Ok(())
}

/// Every process of the tree under `root` (itself first), from /proc.
pub fn tree(root: i32) -> Vec<i32> {
    let mut parent: Vec<(i32, i32)> = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // After the name in parentheses (which may hold spaces and `)`): state, ppid.
            let ppid = stat.rfind(')').and_then(|i| stat[i + 1..].split_whitespace().nth(1)?.parse().ok());
            if let Some(ppid) = ppid {
                parent.push((pid, ppid));
            }
        }
    }
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(parent.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    out
}
