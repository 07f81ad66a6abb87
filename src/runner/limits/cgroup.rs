//! cgroup detection and set-up (v2, v1/v2 hybrid, none).

use super::{Applied, Limits};
use anyhow::Context;
use std::collections::BTreeMap;
use std::ffi::CString;
use std::path::{Path, PathBuf};

/// The cgroup layout this machine offers.
#[derive(Clone, Debug, PartialEq)]
pub enum Hierarchy {
    /// cgroup2 mounted with controllers available (cpu, cpuset, memory enabled at the root).
    V2 {
        root: PathBuf,
        controllers: Vec<String>,
    },
    /// v1 controllers (cpu, cpuset, memory, ...) with an optional cgroup2 mount that has none of them.
    Hybrid {
        v1: BTreeMap<String, PathBuf>,
        v2: Option<PathBuf>,
    },
    None,
}

/// Detect the hierarchy from `/proc/self/mountinfo` and the v2 root's `cgroup.controllers`.
pub fn detect() -> Hierarchy {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Hierarchy::None;
    };
    let mut v1 = BTreeMap::new();
    let mut v2 = None;
    for line in info.lines() {
        let Some((pre, post)) = line.split_once(" - ") else {
            continue;
        };
        let mount_point = pre.split_whitespace().nth(4).unwrap_or("");
        let mut post = post.split_whitespace();
        let fstype = post.next().unwrap_or("");
        let _source = post.next();
        let opts = post.next().unwrap_or("");
        match fstype {
            "cgroup2" => v2 = Some(PathBuf::from(mount_point)),
            "cgroup" => {
                for c in ["cpu", "cpuset", "memory", "cpuacct", "pids"] {
                    if opts.split(',').any(|o| o == c) {
                        v1.entry(c.to_string()).or_insert_with(|| PathBuf::from(mount_point));
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(root) = &v2 {
        let controllers: Vec<String> = std::fs::read_to_string(root.join("cgroup.controllers"))
            .unwrap_or_default()
            .split_whitespace()
            .map(String::from)
            .collect();
        if v1.is_empty() && ["cpu", "cpuset", "memory"].iter().all(|c| controllers.iter().any(|x| x == c)) {
            return Hierarchy::V2 {
                root: root.clone(),
                controllers,
            };
        }
    }
    if v1.is_empty() && v2.is_none() {
        Hierarchy::None
    } else {
        Hierarchy::Hybrid { v1, v2 }
    }
}

/// This process's cgroup path for a v1 controller (or "" for v2), from `/proc/self/cgroup`.
fn own_path(controller: &str) -> String {
    let text = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    for line in text.lines() {
        let mut f = line.splitn(3, ':');
        let (_id, ctrls, path) = (f.next(), f.next().unwrap_or(""), f.next().unwrap_or("/"));
        let hit = if controller.is_empty() {
            ctrls.is_empty()
        } else {
            ctrls.split(',').any(|c| c == controller)
        };
        if hit {
            return path.to_string();
        }
    }
    "/".into()
}

fn child_dir(mount: &Path, controller: &str, name: &str) -> PathBuf {
    own_dir(mount, controller).join(name)
}

/// This process's own cgroup directory under a v1 controller's mount.
pub(super) fn own_dir(mount: &Path, controller: &str) -> PathBuf {
    mount.join(own_path(controller).trim_start_matches('/'))
}

fn write(dir: &Path, file: &str, value: &str) -> anyhow::Result<()> {
    std::fs::write(dir.join(file), value).with_context(|| format!("cannot write {value:?} to {}", dir.join(file).display()))
}

fn procs_file(dir: &Path) -> anyhow::Result<CString> {
    Ok(CString::new(dir.join("cgroup.procs").to_string_lossy().into_owned())?)
}

/// Create and configure the cgroups; `note` is told each directory before it is created.
pub(super) fn prepare(limits: &Limits, name: &str, note: &mut dyn FnMut(&Path)) -> anyhow::Result<Applied> {
    let cpus = match &limits.cpus {
        Some(spec) => Some(spec.resolve().map_err(crate::error::usage)?),
        None => None,
    };
    let mut applied = Applied::none();
    applied.cpus = cpus.clone();
    applied.cpu_quota = limits.cpu_quota;
    match detect() {
        Hierarchy::V2 { root, .. } => {
            // Enable the controllers for children of the root (allowed even with processes in the root).
            let _ = std::fs::write(root.join("cgroup.subtree_control"), "+cpu +cpuset +memory");
            let dir = root.join(name);
            note(&dir);
            std::fs::create_dir(&dir).with_context(|| format!("cannot create cgroup {}", dir.display()))?;
            applied.dirs.push(dir.clone());
            if let Some(c) = &cpus {
                write(&dir, "cpuset.cpus", &crate::util::cpus::format_cpu_list(c))?;
            }
            if let Some(q) = limits.cpu_quota {
                write(&dir, "cpu.max", &format!("{} 100000", (q * 100_000.0).round() as u64))?;
            }
            if let Some(m) = limits.memory {
                write(&dir, "memory.max", &m.to_string())?;
            }
            applied.procs_files.push(procs_file(&dir)?);
            applied.v2_leaf = Some(dir);
            applied.mechanism = "cgroup-v2";
        }
        Hierarchy::Hybrid { v1, v2 } => {
            let mut used_v1 = false;
            let wanted = [
                ("cpuset", cpus.is_some()),
                ("cpu", limits.cpu_quota.is_some()),
                ("memory", limits.memory.is_some()),
            ];
            for (ctrl, want) in wanted {
                if !want {
                    continue;
                }
                let Some(mount) = v1.get(ctrl) else {
                    if ctrl == "cpuset" {
                        applied.affinity = cpus.clone();
                        continue;
                    }
                    return Err(crate::error::usage(format!(
                        "this machine has no usable {ctrl} cgroup controller, so the plan's {} limit cannot be applied",
                        if ctrl == "cpu" { "cpu_quota" } else { "memory" }
                    )));
                };
                let dir = child_dir(mount, ctrl, name);
                note(&dir);
                if let Err(e) = std::fs::create_dir(&dir) {
                    if ctrl == "cpuset" {
                        applied.affinity = cpus.clone();
                        continue;
                    }
                    return Err(anyhow::anyhow!("cannot create cgroup {}: {e}", dir.display()));
                }
                applied.dirs.push(dir.clone());
                match ctrl {
                    "cpuset" => {
                        // v1 cpuset needs cpus AND mems before a task can attach (else ENOSPC).
                        let parent_mems =
                            std::fs::read_to_string(dir.parent().unwrap_or(mount).join("cpuset.mems")).unwrap_or_else(|_| "0".into());
                        write(
                            &dir,
                            "cpuset.cpus",
                            &crate::util::cpus::format_cpu_list(cpus.as_deref().unwrap_or(&[])),
                        )?;
                        write(&dir, "cpuset.mems", parent_mems.trim())?;
                    }
                    "cpu" => {
                        let q = limits.cpu_quota.unwrap_or(1.0);
                        write(&dir, "cpu.cfs_period_us", "100000")?;
                        write(&dir, "cpu.cfs_quota_us", &((q * 100_000.0).round() as u64).to_string())?;
                    }
                    _ => {
                        write(&dir, "memory.limit_in_bytes", &limits.memory.unwrap_or(0).to_string())?;
                    }
                }
                applied.procs_files.push(procs_file(&dir)?);
                used_v1 = true;
            }
            // A v2 leaf with no controllers still gives per-tree accounting, PSI and cgroup.kill.
            if let Some(root) = v2 {
                let dir = child_dir(&root, "", name);
                note(&dir);
                if std::fs::create_dir(&dir).is_ok() {
                    applied.dirs.push(dir.clone());
                    applied.procs_files.push(procs_file(&dir)?);
                    applied.v2_leaf = Some(dir);
                }
            }
            applied.mechanism = if used_v1 {
                "cgroup-v1"
            } else if applied.affinity.is_some() {
                "affinity"
            } else if applied.v2_leaf.is_some() {
                "cgroup-v2-accounting"
            } else {
                "none"
            };
        }
        Hierarchy::None => {
            if limits.cpu_quota.is_some() || limits.memory.is_some() {
                return Err(crate::error::usage(
                    "this machine offers no cgroups, so cpu_quota and memory limits cannot be applied",
                ));
            }
            if cpus.is_some() {
                applied.affinity = cpus.clone();
                applied.mechanism = "affinity";
            }
        }
    }
    Ok(applied)
}
