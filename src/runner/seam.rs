//! The run loop's seam: what runs one trial, and what tells the time. A run executes its trials with
//! [`Phased`] (the phases, the monitor, the target, the probes: `trial::run_trial`) on the
//! [`WallClock`]; the runner's unit tests (`seam_tests.rs`) give the same loop a fake trial runner
//! that only calls its workload, and a clock that moves only when a trial runs, so that the order of
//! the trials, adaptive repetitions and `--resume` are tested without real time.

use super::progress::Progress;
use super::remote_monitor::HostSamples;
use super::sut::Sut;
use super::trial::{run_trial, TrialObserver, TrialSpec};
use crate::store::TrialRecord;
use crate::util::Cancel;
use crate::workload::Workload;

/// Where the run loop reads the time: the run's start, a trial that could not start, the run's end.
pub trait Clock {
    /// Seconds since the Unix epoch.
    fn now_unix(&self) -> f64;
}

/// The system's clock.
pub struct WallClock;

impl Clock for WallClock {
    fn now_unix(&self) -> f64 {
        crate::util::time::unix_now()
    }
}

/// Runs one trial: never fails as a whole (a failure is in the record); returns the record and the
/// samples of each remote host. `kept` is a target kept across trials (`restart = "keep"`). The
/// default is the real trial ([`Phased`]); the runner's tests give their own.
pub trait TrialRunner {
    fn run(
        &mut self,
        spec: &TrialSpec,
        workload: &mut dyn Workload,
        kept: Option<&mut Sut>,
        cancel: &Cancel,
        progress: &mut Progress,
    ) -> (TrialRecord, Vec<HostSamples>) {
        run_trial(spec, workload, kept, cancel, progress as &mut dyn TrialObserver)
    }
}

/// The real trial: its phases in real time, the monitor sampling throughout.
pub struct Phased;

impl TrialRunner for Phased {}
