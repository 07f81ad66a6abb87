//! Cooperative cancellation: Ctrl-C (SIGINT) and SIGTERM set a flag that every loop checks.
//!
//! Two ways to take the signals:
//! - [`Cancel::on_signals`], for commands with nothing to clean up (`serve`, `http`, `monitor`): the
//!   first signal sets the flag, a second one exits at once with 130;
//! - [`Cancel::on_signals_hurrying`], for `perflab run`: the first signal sets the flag, every later
//!   one only *hurries* the cleanup ([`hurried`]): grace periods are cut short (SIGKILL at once), but
//!   the targets are still stopped, the cgroups removed, the variant's teardown run and the status
//!   stored. A terminal sends one SIGINT per Ctrl-C, so a second press must never skip the cleanup.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Set by the second (and any later) signal under [`Cancel::on_signals_hurrying`].
static HURRY: AtomicBool = AtomicBool::new(false);

/// Whether a second Ctrl-C / SIGTERM asked to stop without waiting for grace periods.
pub fn hurried() -> bool {
    HURRY.load(Ordering::SeqCst)
}

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

    /// A flag that the first SIGINT or SIGTERM sets; every later one sets [`hurried`] instead of
    /// exiting, so the cleanup always runs to its end.
    pub fn on_signals_hurrying() -> anyhow::Result<Self> {
        let c = Self::new();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            let flag = c.0.clone();
            // SAFETY: the action runs inside a signal handler, where only async-signal-safe work is
            // sound: it does two lock-free atomic operations on memory that lives as long as the
            // process (an Arc kept by the registration, a static), allocates nothing and takes no lock.
            unsafe {
                signal_hook::low_level::register(sig, move || {
                    if flag.swap(true, Ordering::SeqCst) {
                        HURRY.store(true, Ordering::SeqCst);
                    }
                })?;
            }
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
