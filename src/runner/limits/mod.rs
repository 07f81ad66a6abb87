//! Resource limits for the system under test: CPUs, CPU quota and memory.
//!
//! The mechanism is detected at run time (`detect`):
//! - pure cgroup v2: a leaf with `cpuset.cpus`, `cpu.max`, `memory.max`;
//! - v1/v2 hybrid (v2 without controllers, as on this project's machines): the v1 `cpuset`, `cpu` and
//!   `memory` controllers, plus a v2 leaf (no controllers) for per-tree accounting, PSI and `cgroup.kill`;
//! - no cgroups: `sched_setaffinity` on the child before it runs (CPU quota and memory cannot be applied,
//!   which is reported as an error before the run rather than ignored).
//!
//! The child attaches itself in a `pre_exec` hook (it writes `0` into each `cgroup.procs`), so no process
//! of the target ever runs outside its limits. Proof of the limit is read back and stored with the trial.

mod cgroup;

pub use crate::plan::Limits;
pub use crate::util::cpus::{online_cpus, parse_cpu_list, CpuSpec};
pub use cgroup::{detect, Hierarchy};

use std::ffi::CString;
use std::path::PathBuf;

/// Why this machine cannot apply `limits`, as (the `[target]` key, the reason), checked before the
/// run: CPU quota and memory limits need the cgroup `cpu` and `memory` controllers, and a cgroup
/// tree perflab may write to.
pub fn unsupported(limits: &Limits) -> Option<(&'static str, String)> {
    let wanted = [
        ("cpu_quota", "cpu", limits.cpu_quota.is_some()),
        ("memory", "memory", limits.memory.is_some()),
    ];
    let writable = |p: &std::path::Path| {
        let Ok(c) = CString::new(p.as_os_str().to_string_lossy().into_owned()) else {
            return false;
        };
        // SAFETY: access only reads the NUL-terminated path it is given.
        unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
    };
    for (key, ctrl, want) in wanted {
        if !want {
            continue;
        }
        let why = match detect() {
            Hierarchy::V2 { root, .. } if writable(&root) => continue,
            Hierarchy::V2 { root, .. } => format!("perflab may not create cgroups under {} (run it as root)", root.display()),
            Hierarchy::Hybrid { v1, .. } => match v1.get(ctrl) {
                Some(mount) if writable(mount) || writable(&cgroup::own_dir(mount, ctrl)) => continue,
                Some(mount) => format!("perflab may not create cgroups under {} (run it as root)", mount.display()),
                None => format!("this machine has no usable {ctrl} cgroup controller"),
            },
            Hierarchy::None => "this machine offers no cgroups".into(),
        };
        return Some((key, format!("{why}, so the {key} limit cannot be applied")));
    }
    None
}

/// Limits made ready for one target start: the cgroups exist and are configured; the child attaches
/// itself in `pre_exec`.
pub struct Applied {
    pub mechanism: &'static str,
    /// cgroup directories created, removed again by `cleanup` (deepest last created first).
    dirs: Vec<PathBuf>,
    /// `cgroup.procs` files the child writes `0` into before exec.
    procs_files: Vec<CString>,
    /// CPU mask for `sched_setaffinity` (when no cpuset cgroup is used).
    affinity: Option<Vec<usize>>,
    /// The v2 leaf (accounting, PSI, cgroup.kill), when there is one.
    pub v2_leaf: Option<PathBuf>,
    pub cpus: Option<Vec<usize>>,
    /// The CPU quota applied, in CPUs.
    pub cpu_quota: Option<f64>,
}

impl Applied {
    /// No limits and no accounting cgroup.
    pub fn none() -> Applied {
        Applied {
            mechanism: "none",
            dirs: vec![],
            procs_files: vec![],
            affinity: None,
            v2_leaf: None,
            cpus: None,
            cpu_quota: None,
        }
    }

    /// The target's CPU limits for the monitor: the CPUs it may use (the fewer of its CPU set's
    /// size and its quota) and the `cpu.stat` of the cgroup enforcing its quota; None without
    /// either limit.
    pub fn cpu_limits(&self) -> Option<crate::monitor::CpuLimits> {
        let set = self.cpus.as_ref().map(|c| c.len() as f64);
        let cpus = match (set, self.cpu_quota) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }?;
        let stat = self.cpu_quota.and_then(|_| {
            self.dirs
                .iter()
                .find(|d| d.join("cpu.cfs_quota_us").exists() || d.join("cpu.max").exists())
                .map(|d| d.join("cpu.stat"))
        });
        Some(crate::monitor::CpuLimits { cpus: Some(cpus), stat })
    }

    /// Create and configure the cgroups for `limits`. `name` must be unique per target start.
    pub fn prepare(limits: &Limits, name: &str) -> anyhow::Result<Applied> {
        cgroup::prepare(limits, name, &mut |_| {})
    }

    /// [`Applied::prepare`], telling `note` each cgroup directory before it is created (so a
    /// record of it exists before the cgroup does).
    pub fn prepare_noting(limits: &Limits, name: &str, note: &mut dyn FnMut(&std::path::Path)) -> anyhow::Result<Applied> {
        cgroup::prepare(limits, name, note)
    }

    /// The cgroups `dirs` that a perflab which is gone created for a target: everything still in
    /// them is killed and they are removed. Only directories named as perflab names them are
    /// touched (`perflab-…`, or `agent-PID-perflab-…` for a remote agent's target); those already
    /// gone are skipped. Returns how many were removed.
    pub fn remove_leftover(dirs: &[PathBuf]) -> anyhow::Result<usize> {
        let ours = |name: &str| {
            let agent = name
                .strip_prefix("agent-")
                .and_then(|r| r.split_once('-'))
                .is_some_and(|(pid, rest)| pid.chars().all(|c| c.is_ascii_digit()) && rest.starts_with("perflab-"));
            name.starts_with("perflab-") || agent
        };
        let dirs: Vec<PathBuf> = dirs
            .iter()
            .filter(|d| d.file_name().is_some_and(|n| ours(&n.to_string_lossy())) && d.is_dir())
            .cloned()
            .collect();
        let n = dirs.len();
        let mut left = Applied::none();
        left.v2_leaf = dirs.iter().find(|d| d.join("cgroup.kill").exists()).cloned();
        left.dirs = dirs;
        left.cleanup().map(|()| n)
    }

    /// Install the attach step into a `Command`: runs in the child between fork and exec.
    pub fn install(&self, cmd: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        let files = self.procs_files.clone();
        let mask = self.affinity.as_ref().map(|cpus| {
            // SAFETY: cpu_set_t is a C bit array, for which all-zero bytes are a valid value (the
            // empty set).
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            for &c in cpus {
                // SAFETY: `set` is a valid local cpu_set_t; libc's CPU_SET indexes its bit array
                // with Rust's bounds check, so a CPU number beyond the set's size panics instead
                // of writing past it.
                unsafe { libc::CPU_SET(c, &mut set) };
            }
            set
        });
        // SAFETY: pre_exec runs the closure in the child between fork and exec, where only
        // async-signal-safe work is sound. The closure only calls async-signal-safe functions
        // (setpgid, open, write, close, sched_setaffinity) on data prepared before the fork (the
        // NUL-terminated paths in `files`, the CPU mask), allocates nothing and takes no lock;
        // `last_os_error` only reads errno.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setpgid(0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                for f in &files {
                    let fd = libc::open(f.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                    if fd < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    let ok = libc::write(fd, b"0\n".as_ptr().cast(), 2) == 2;
                    let err = std::io::Error::last_os_error();
                    libc::close(fd);
                    if !ok {
                        return Err(err);
                    }
                }
                if let Some(set) = &mask {
                    if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
    }

    /// Read back proof of the limits as applied to `pid`.
    pub fn proof(&self, pid: u32) -> String {
        let mut parts = Vec::new();
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            if let Some(l) = status.lines().find(|l| l.starts_with("Cpus_allowed_list:")) {
                parts.push(l.split_whitespace().collect::<Vec<_>>().join(" "));
            }
        }
        for d in &self.dirs {
            for f in [
                "cpuset.cpus",
                "cpu.cfs_quota_us",
                "cpu.cfs_period_us",
                "cpu.max",
                "memory.limit_in_bytes",
                "memory.max",
            ] {
                if let Ok(v) = std::fs::read_to_string(d.join(f)) {
                    parts.push(format!("{f}={}", v.trim()));
                }
            }
        }
        parts.join("; ")
    }

    /// Every pid in the target's cgroups (empty when there are none).
    pub fn pids(&self) -> Vec<i32> {
        let mut out = Vec::new();
        for d in self.dirs.iter().chain(self.v2_leaf.iter()) {
            if let Ok(s) = std::fs::read_to_string(d.join("cgroup.procs")) {
                out.extend(s.lines().filter_map(|l| l.trim().parse::<i32>().ok()));
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Kill everything left in the cgroups (v2 `cgroup.kill` where available, else SIGKILL each pid).
    pub fn kill_all(&self) {
        if let Some(leaf) = &self.v2_leaf {
            let _ = std::fs::write(leaf.join("cgroup.kill"), "1");
        }
        for pid in self.pids() {
            crate::util::process::signal(pid, libc::SIGKILL);
        }
    }

    /// Kill what is left, wait for the cgroups to empty, and remove them.
    pub fn cleanup(&mut self) -> anyhow::Result<()> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            self.kill_all();
            if self.pids().is_empty() || std::time::Instant::now() > deadline {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let mut failed = Vec::new();
        for d in self.dirs.iter().rev() {
            if d.exists() && std::fs::remove_dir(d).is_err() {
                // A just-exited task can linger for a moment; retry briefly.
                let mut removed = false;
                for _ in 0..50 {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    if std::fs::remove_dir(d).is_ok() || !d.exists() {
                        removed = true;
                        break;
                    }
                }
                if !removed {
                    failed.push(d.display().to_string());
                }
            }
        }
        self.dirs.clear();
        if failed.is_empty() {
            Ok(())
        } else {
            anyhow::bail!("could not remove cgroup(s) {}", failed.join(", "))
        }
    }
}

impl Drop for Applied {
    fn drop(&mut self) {
        if !self.dirs.is_empty() {
            let _ = self.cleanup();
        }
    }
}
