//! Profiles of the system under test through Linux `perf`: on-CPU (stacks sampled on the
//! `cpu-clock` software event, which works without a hardware PMU) and off-CPU (the stack of every
//! switch off a CPU, `sched:sched_switch`, weighed by the time until the thread ran again), folded
//! with inferno's perf collapser and drawn as inferno flame graphs.
//!
//! A [`Recorder`] starts `perf record` with its events disabled, so that perf's own start (reading
//! the target's maps, which takes up to a second on a busy machine) is over before the profiled
//! window opens; [`Recorder::enable`] and [`Recorder::disable`] open and close the window through
//! perf's control FIFO (`--control`), and every sample's timestamp (`CLOCK_MONOTONIC`, `-k
//! monotonic`) is checked against the window as well. `perflab profile` (`cli.rs`) is the same
//! recorder opened at once. `check.rs` says what is missing where perf cannot run.

pub mod check;
pub mod cli;
pub mod flame;
mod fold;
mod offcpu;
mod record;

pub use check::{availability, Missing};
pub use record::{tree as tree_of, Recorder};

use crate::model::ProfileKind;

/// The sampling frequency when a plan or the command line names none (Hz): a prime, so that the
/// samples do not fall in step with a periodic task.
pub const DEFAULT_FREQUENCY_HZ: u32 = 49;

/// What to profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// These processes and every thread and child they start while profiled.
    Processes(Vec<i32>),
    /// Every process of a cgroup (v2 path under the cgroup mount, e.g. `/system.slice/x.service`).
    Cgroup(String),
    /// The whole machine.
    System,
}

impl Scope {
    /// In words, for the report and messages.
    pub fn describe(&self) -> String {
        match self {
            Scope::Processes(p) if p.len() == 1 => format!("process tree of PID {}", p[0]),
            Scope::Processes(p) => format!("process tree of PIDs {}", join(p)),
            Scope::Cgroup(c) => format!("cgroup {c}"),
            Scope::System => "the whole system".to_string(),
        }
    }
}

fn join(p: &[i32]) -> String {
    p.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")
}

/// How perf walks the stacks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CallGraph {
    /// Frame pointers: cheap; frames of code built without them are lost.
    #[default]
    Fp,
    /// DWARF unwinding of a copy of each sample's user stack: complete, heavier.
    Dwarf,
}

impl CallGraph {
    pub fn parse(s: &str) -> Option<CallGraph> {
        match s {
            "fp" => Some(CallGraph::Fp),
            "dwarf" => Some(CallGraph::Dwarf),
            _ => None,
        }
    }
}

/// One profile to record.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub kind: ProfileKind,
    pub scope: Scope,
    /// On-CPU sampling frequency (Hz).
    pub frequency_hz: u32,
    pub call_graph: CallGraph,
}

/// CLOCK_MONOTONIC now, in seconds: the clock of perf's timestamps (`-k monotonic`) and of
/// `std::time::Instant`.
pub fn monotonic_now() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into the valid, exclusively borrowed `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The scope a plan's `[profile] scope` (`target`, `cgroup`, `system`) names for a target whose
/// process is `pid`: its process tree (now), the cgroup (v2) it runs in, or the whole machine.
pub fn scope_of(scope: &str, pid: Option<i32>) -> Result<Scope, String> {
    if scope == "system" {
        return Ok(Scope::System);
    }
    let Some(pid) = pid else {
        return Err("the trial has no target running".into());
    };
    if scope != "cgroup" {
        return Ok(Scope::Processes(tree_of(pid)));
    }
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).map_err(|e| format!("cannot read the target's cgroup: {e}"))?;
    match text.lines().find_map(|l| l.strip_prefix("0::")) {
        Some("/") | None => Err("the target runs in no cgroup of its own (give it limits, or use scope = \"target\")".into()),
        Some(path) => Ok(Scope::Cgroup(path.to_string())),
    }
}
