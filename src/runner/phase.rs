//! The shared "current phase" that tags every monitor sample (the phases are `model::Phase`).

pub use crate::model::Phase;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// The phase the trial is in now, shared with the sampler thread.
#[derive(Clone, Default)]
pub struct CurrentPhase(Arc<AtomicU8>);

impl CurrentPhase {
    pub fn set(&self, p: Phase) {
        self.0.store(p as u8, Ordering::SeqCst);
    }
    pub fn get(&self) -> Phase {
        Phase::ALL
            .get(self.0.load(Ordering::SeqCst) as usize)
            .copied()
            .unwrap_or(Phase::Setup)
    }
}
