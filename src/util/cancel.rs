//! Cooperative cancellation: Ctrl-C (SIGINT) and SIGTERM set a flag that every loop checks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A cheap, clonable cancellation flag.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn new() -> Self {
        Self::default()
    }

    /// A flag that SIGINT and SIGTERM set. The second signal of either kind exits at once with 130.
    pub fn on_signals() -> anyhow::Result<Self> {
        let c = Self::new();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            signal_hook::flag::register_conditional_shutdown(sig, 130, c.0.clone())?;
            signal_hook::flag::register(sig, c.0.clone())?;
        }
        Ok(c)
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// The underlying flag, for code that wants an `Arc<AtomicBool>`.
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }

    /// Sleep up to `d`, waking early (returning true) if cancelled.
    pub fn sleep(&self, d: std::time::Duration) -> bool {
        let end = crate::util::duration::deadline(std::time::Instant::now(), d);
        loop {
            if self.is_cancelled() {
                return true;
            }
            let now = std::time::Instant::now();
            if now >= end {
                return false;
            }
            std::thread::sleep((end - now).min(std::time::Duration::from_millis(20)));
        }
    }
}
