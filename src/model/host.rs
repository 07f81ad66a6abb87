//! Which machine a figure was measured on.

/// The name of the machine perflab runs on among a run's hosts (the plan's `[hosts]` name the
/// others): the store's `host` columns, the report's per-host tables and findings.
pub const LOCAL_HOST: &str = "local";

/// What identifies the machine a run ran on, as the run's row keeps it (`run.host`, `kernel`,
/// `ncpu`, `mem_total_mb`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostIdentity {
    /// Its host name (`/proc/sys/kernel/hostname`).
    pub hostname: String,
    /// Its kernel release (`uname -r`).
    pub kernel: String,
    /// The CPUs perflab may use there.
    pub ncpu: u32,
    /// Its memory, MiB (`MemTotal`).
    pub mem_total_mb: f64,
}
