//! The phases of a trial and the shared "current phase" that tags every monitor sample.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Setup = 0,
    Baseline = 1,
    Warmup = 2,
    Load = 3,
    Recovery = 4,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Setup => "setup",
            Phase::Baseline => "baseline",
            Phase::Warmup => "warmup",
            Phase::Load => "load",
            Phase::Recovery => "recovery",
        }
    }

    fn from_u8(v: u8) -> Phase {
        match v {
            1 => Phase::Baseline,
            2 => Phase::Warmup,
            3 => Phase::Load,
            4 => Phase::Recovery,
            _ => Phase::Setup,
        }
    }
}

/// The phase the trial is in now, shared with the sampler thread.
#[derive(Clone, Default)]
pub struct CurrentPhase(Arc<AtomicU8>);

impl CurrentPhase {
    pub fn set(&self, p: Phase) {
        self.0.store(p as u8, Ordering::SeqCst);
    }
    pub fn get(&self) -> Phase {
        Phase::from_u8(self.0.load(Ordering::SeqCst))
    }
}
