//! The facts an agent reports about its host.

use crate::remote::protocol::Facts;

fn read(path: &str) -> String {
    std::fs::read_to_string(path).map(|s| s.trim().to_string()).unwrap_or_default()
}

/// This host's name, architecture, kernel, CPU model and count, memory and cgroup mechanism.
pub fn facts() -> Facts {
    let cpuinfo = read("/proc/cpuinfo");
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name") || l.starts_with("Model") || l.starts_with("cpu model"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default();
    let mem_bytes = read("/proc/meminfo")
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0);
    use crate::runner::limits::Hierarchy;
    let cgroups = match crate::runner::limits::detect() {
        Hierarchy::V2 { .. } => "v2",
        Hierarchy::Hybrid { .. } => "hybrid",
        Hierarchy::None => "none",
    };
    Facts {
        hostname: read("/proc/sys/kernel/hostname"),
        arch: std::env::consts::ARCH.to_string(),
        kernel: read("/proc/sys/kernel/osrelease"),
        cpu_model,
        cpus: crate::util::cpus::online_cpus().len(),
        mem_bytes,
        cgroups: cgroups.to_string(),
    }
}
