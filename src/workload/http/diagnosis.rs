//! Self-diagnosis: when the load generator may have been the bottleneck (its threads near 100 % of
//! their cores, open-model sends behind schedule) or shared cores with the target (a loopback URL and
//! overlapping CPU sets), so that its figures are not taken for the target's.

use super::config::Prepared;
use super::report::{HttpReport, Warning};
use std::collections::BTreeSet;

/// A worker thread busier than this (CPU time / its wall time) is near 100 % of its core.
pub const BUSY_THREAD: f64 = 0.90;
/// Open model: more late sends than this fraction of the scheduled ones.
pub const LATE_FRACTION: f64 = 0.01;

pub fn diagnose(cfg: &Prepared, r: &HttpReport) -> Vec<Warning> {
    let mut w = Vec::new();
    let busiest = r.thread_busy.iter().cloned().fold(0.0_f64, f64::max);
    let cpus = own_cpus();
    let work = r.cpu.saturating_sub(r.stats.spin);
    let process_busy = work.as_secs_f64() / (r.wall.as_secs_f64().max(1e-9) * cpus.len().max(1) as f64);
    if busiest >= BUSY_THREAD {
        w.push(Warning {
            kind: "client_cpu_bound",
            message: format!(
                "a client thread was busy {:.0} % of the run (threshold {:.0} %): perflab http may be the bottleneck; \
                 add --threads or give the client more cores",
                busiest * 100.0,
                BUSY_THREAD * 100.0
            ),
        });
    } else if process_busy >= BUSY_THREAD {
        w.push(Warning {
            kind: "client_cpu_bound",
            message: format!(
                "the client used {:.0} % of its {} CPU(s): perflab http may be the bottleneck",
                process_busy * 100.0,
                cpus.len()
            ),
        });
    }
    if r.target_rate.is_some() {
        let st = &r.stats;
        let late = st.late as f64 / st.scheduled.max(1) as f64;
        if late > LATE_FRACTION || st.dropped > 0 {
            w.push(Warning {
                kind: "client_behind_schedule",
                message: format!(
                    "open-model sends fell behind schedule: {} of {} late ({:.1} %), {} dropped; the intended-time \
                     latencies include this delay (raise -c/--max-inflight, or the target is saturated)",
                    st.late,
                    st.scheduled,
                    late * 100.0,
                    st.dropped
                ),
            });
        }
    }
    if cfg.addr.ip().is_loopback() {
        let all = online_cpus();
        match target_cpus(cfg.addr.port()) {
            Some((pid, theirs)) => {
                let shared: Vec<usize> = cpus.intersection(&theirs).copied().collect();
                if !shared.is_empty() {
                    let who = if pid == std::process::id() {
                        "this process".to_string()
                    } else {
                        format!("pid {pid}")
                    };
                    w.push(Warning {
                        kind: "shares_cores_with_target",
                        message: format!(
                            "the target ({who}, listening on port {}) and the client share CPU(s) {}: they compete for \
                             cores; pin them apart (taskset, or the plan's target cpus)",
                            cfg.addr.port(),
                            crate::util::cpus::format_cpu_list(&shared)
                        ),
                    });
                }
            }
            None if !all.is_empty() && all.is_subset(&cpus) => w.push(Warning {
                kind: "shares_cores_with_target",
                message: "the target is on loopback and the client may run on every CPU: they likely share cores \
                          (pin them apart with taskset for a cleaner measurement)"
                    .into(),
            }),
            None => {}
        }
    }
    w
}

/// The CPUs this process may run on.
fn own_cpus() -> BTreeSet<usize> {
    cpus_of("self").unwrap_or_else(online_cpus)
}

fn online_cpus() -> BTreeSet<usize> {
    crate::util::cpus::online_cpus().into_iter().collect()
}

fn cpus_of(pid: &str) -> Option<BTreeSet<usize>> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let list = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    crate::util::cpus::parse_cpu_list(list.trim()).ok().map(|v| v.into_iter().collect())
}

/// The process listening on loopback `port`, and its CPUs: the socket's inode from /proc/net/tcp*
/// (`util::listeners`), then the process holding it.
fn target_cpus(port: u16) -> Option<(u32, BTreeSet<usize>)> {
    let inodes: BTreeSet<String> = crate::util::listeners::all()
        .into_iter()
        .filter(|l| l.addr.port() == port)
        .map(|l| format!("socket:[{}]", l.inode))
        .collect();
    if inodes.is_empty() {
        return None;
    }
    let me = std::process::id();
    // Look at this process first (an in-process `perflab serve`), then the others.
    let mut pids = vec![me];
    if let Ok(dir) = std::fs::read_dir("/proc") {
        pids.extend(
            dir.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                .filter(|p| *p != me),
        );
    }
    for pid in pids {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(link) = std::fs::read_link(fd.path()) {
                if link.to_str().is_some_and(|l| inodes.contains(l)) {
                    return cpus_of(&pid.to_string()).map(|c| (pid, c));
                }
            }
        }
    }
    None
}
