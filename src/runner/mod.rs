//! The runner: phases, repetitions, the system under test's lifecycle and resource limits.
//!
//! `from_plan` turns a validated plan into an `Experiment`; `execute` runs it trial by trial (`trial`
//! runs the phases of one, through the `seam` the runner's tests replace with a fake workload and
//! clock), storing each finished trial at once.

pub mod cli;
pub mod execute;
pub mod experiment;
pub mod from_hosts;
pub mod from_plan;
pub mod from_shared;
pub mod hooks;
pub mod hosts;
pub mod http_live;
pub mod ledger;
pub mod limits;
pub mod load_live;
pub mod merge_figures;
pub mod one_trial;
pub mod phase;
pub mod preflight;
mod probes;
mod profiles;
pub mod progress;
mod publish;
pub mod reclaim;
pub mod remote_exec;
pub mod remote_monitor;
pub mod remote_target;
mod resume;
pub mod seam;
#[cfg(test)]
mod seam_tests;
pub mod segment;
pub mod sut;
pub mod target;
pub mod thresholds;
pub mod trial;

/// Give back to the system what the run freed (after each trial, and before the report is built).
/// glibc keeps the memory each thread's arena freed; the threads of the next trial, or the report
/// built on this thread, would not reuse all of it, and the run's memory would grow with the
/// fragments of each trial.
pub(crate) fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of glibc's own arenas to the kernel (under the
    // arenas' locks); no memory the program holds is touched.
    unsafe {
        libc::malloc_trim(0);
    }
}
