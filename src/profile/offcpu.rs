//! Off-CPU time by stack through perf alone (Debian's perf has no `--off-cpu`): the
//! `sched:sched_switch` tracepoint gives the stack of every switch of a profiled thread off its
//! CPU, and `sched:sched_stat_runtime` (without stacks) the CPU time it ran in between. A thread
//! switched off at t1 and next switched off at t2 was off its CPU for (t2 − t1) − the CPU time it
//! ran in (t1, t2]; its last switch in the window, until the window's end. The tracepoints need
//! tracefs: mounted here (as root) when it is not, and unmounted again by the recorder.

use super::fold::{profile_of, script, Block};
use crate::model::Profile;
use anyhow::anyhow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// perf's events for an off-CPU profile.
pub fn events() -> Vec<String> {
    ["-e", "sched:sched_switch", "-e", "sched:sched_stat_runtime/call-graph=no/"]
        .map(String::from)
        .to_vec()
}

/// Mount tracefs where the kernel expects it, if it is not mounted; the mount point to unmount.
pub fn mount_tracefs() -> anyhow::Result<Option<PathBuf>> {
    if super::check::tracefs_state() == super::check::Tracefs::Mounted {
        return Ok(None);
    }
    if !super::check::is_root() {
        return Err(anyhow!(
            "tracefs is not mounted (the sched:sched_switch tracepoint needs it): mount -t tracefs nodev /sys/kernel/tracing"
        ));
    }
    let at = PathBuf::from("/sys/kernel/tracing");
    let c = |s: &str| std::ffi::CString::new(s).expect("no NUL");
    let (src, target, fstype) = (c("nodev"), c("/sys/kernel/tracing"), c("tracefs"));
    // SAFETY: every pointer is a valid NUL-terminated string that outlives the call; data is null.
    let rc = unsafe { libc::mount(src.as_ptr(), target.as_ptr(), fstype.as_ptr(), 0, std::ptr::null()) };
    if rc != 0 {
        return Err(anyhow!(
            "cannot mount tracefs on {}: {}",
            at.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(Some(at))
}

/// Unmount what [`mount_tracefs`] mounted (lazily: a perf still holding it lets go later).
pub fn unmount(at: &Path) {
    if let Ok(c) = std::ffi::CString::new(at.as_os_str().as_encoded_bytes()) {
        // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
        unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
    }
}

/// The off-CPU profile of `data` within `window` (CLOCK_MONOTONIC seconds).
pub fn fold(data: &Path, window: (f64, f64)) -> anyhow::Result<Profile> {
    let blocks = script(data, "comm,pid,tid,time,event,trace,ip,sym,dso")?;
    let weighed = off_times(&blocks, window);
    let refs: Vec<(&Block, u64)> = weighed.iter().map(|(i, ns)| (&blocks[*i], *ns)).collect();
    profile_of(&refs)
}

/// Each switch off a CPU inside the window (its index in `blocks`) with the nanoseconds its thread
/// stayed off.
pub fn off_times(blocks: &[Block], window: (f64, f64)) -> Vec<(usize, u64)> {
    let mut by_tid: BTreeMap<i32, Vec<usize>> = BTreeMap::new();
    for (i, b) in blocks.iter().enumerate() {
        by_tid.entry(b.tid).or_default().push(i);
    }
    let mut out = Vec::new();
    for idx in by_tid.values_mut() {
        idx.sort_by(|a, b| blocks[*a].time.total_cmp(&blocks[*b].time));
        // (index of the switch, its time, the CPU time run since it)
        let mut open: Option<(usize, f64, f64)> = None;
        let close = |o: Option<(usize, f64, f64)>, until: f64, out: &mut Vec<(usize, u64)>| {
            if let Some((i, t1, ran)) = o {
                let off = (until.min(window.1) - t1 - ran).max(0.0);
                out.push((i, (off * 1e9).round() as u64));
            }
        };
        for &i in idx.iter() {
            let b = &blocks[i];
            if b.event.ends_with("sched_stat_runtime") {
                if let (Some(o), Some(ns)) = (open.as_mut(), field(&b.trace, "runtime")) {
                    o.2 += ns as f64 * 1e-9;
                }
            } else if b.event.ends_with("sched_switch") && field(&b.trace, "prev_pid") == Some(b.tid as u64) {
                close(open.take(), b.time, &mut out);
                if b.time >= window.0 && b.time <= window.1 {
                    open = Some((i, b.time, 0.0));
                }
            }
        }
        close(open, window.1, &mut out);
    }
    out.sort_unstable();
    out
}

/// The number after `name=` in a tracepoint's fields.
fn field(trace: &str, name: &str) -> Option<u64> {
    trace
        .split_whitespace()
        .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
        .and_then(|v| v.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(tid: i32, time: f64, event: &str, trace: &str) -> Block {
        Block {
            comm: "sl".into(),
            pid: tid,
            tid,
            time,
            period: 1,
            event: event.into(),
            trace: trace.into(),
            stack: vec!["11a3 main (/tmp/sl)".into()],
        }
    }

    #[test]
    fn off_time_is_the_gap_less_the_time_run() {
        let sw = |t| {
            ev(
                7,
                t,
                "sched:sched_switch",
                "prev_comm=sl prev_pid=7 prev_state=S ==> next_comm=x next_pid=0",
            )
        };
        let run = |t, ns: u64| ev(7, t, "sched:sched_stat_runtime", &format!("comm=sl pid=7 runtime={ns} [ns]"));
        let blocks = vec![
            sw(0.5), // before the window: not counted
            sw(1.0), // off until it ran 0.1 s before switching again at 1.5
            run(1.45, 50_000_000),
            run(1.5, 50_000_000),
            sw(1.5), // the last: off until the window's end (2.0)
            ev(
                8,
                1.2,
                "sched:sched_switch",
                "prev_comm=y prev_pid=9 prev_state=S ==> next_comm=x next_pid=0",
            ),
        ];
        let off = off_times(&blocks, (0.9, 2.0));
        assert_eq!(off, vec![(1, 400_000_000), (4, 500_000_000)]);
        assert_eq!(field("comm=sl pid=7 runtime=72508 [ns] ffff update_se", "runtime"), Some(72508));
    }
}
