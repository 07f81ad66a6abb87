//! A plan's remote hosts before a run: perflab installed where asked (`--install-agent`), then every
//! host reached, its facts read, its clock offset measured and the programs the plan starts there
//! looked for, so that an unreachable host, a refused key, a host without perflab or without a
//! program the plan runs there is one clear line before anything starts. What was found is stored
//! with the run (`Store::write_hosts`), `local` first (this machine's facts, offset 0).

use crate::plan::Plan;
use crate::remote::protocol::Facts;
use serde::Serialize;

/// One remote host as the run found it.
#[derive(Clone, Debug, Serialize)]
pub struct HostRecord {
    pub name: String,
    pub ssh: String,
    pub perflab: String,
    pub facts: crate::remote::protocol::Facts,
    /// Host clock minus this machine's, in seconds, ± `uncertainty_s` (half the best round trip).
    pub offset_s: f64,
    pub uncertainty_s: f64,
    /// The plan's sampling interval: an uncertainty above a tenth of it is a validity warning.
    pub interval_s: f64,
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).map(|s| s.trim().to_string()).unwrap_or_default()
}

/// This machine's name, architecture, kernel, CPU model and count, memory and cgroup mechanism
/// (what an agent reports about its host).
pub fn local_facts() -> Facts {
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
    use super::limits::Hierarchy;
    let cgroups = match super::limits::detect() {
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
        perf: perf_fact(),
    }
}

/// What profiles perf can take here, or what is missing and how to enable it.
fn perf_fact() -> String {
    use crate::model::ProfileKind;
    let scope = crate::profile::Scope::Processes(Vec::new());
    match (
        crate::profile::availability(ProfileKind::OnCpu, &scope),
        crate::profile::availability(ProfileKind::OffCpu, &scope),
    ) {
        (Ok(()), Ok(())) => "on-CPU and off-CPU".into(),
        (Ok(()), Err(m)) => format!("on-CPU only (off-CPU: {m})"),
        (Err(m), _) => format!("none: {m}"),
    }
}

/// This machine as a host record (`local`, offset 0), for a run with remote hosts.
pub fn local(interval_s: f64) -> HostRecord {
    HostRecord {
        name: "local".into(),
        ssh: String::new(),
        perflab: env!("CARGO_PKG_VERSION").into(),
        facts: local_facts(),
        offset_s: 0.0,
        uncertainty_s: 0.0,
        interval_s,
    }
}

/// Reach every host of `plan` (installing perflab first with `install`); the first failure is the
/// error. Lines for the user go to stderr unless `quiet`.
pub fn check(plan: &Plan, install: bool, quiet: bool) -> anyhow::Result<Vec<HostRecord>> {
    let mut out = Vec::new();
    for h in &plan.hosts {
        if install {
            let line = crate::remote::install(h)?;
            if !quiet {
                eprintln!("perflab: {line}");
            }
        }
        let mut ch = crate::remote::open(h)?;
        let o = ch.clock(crate::remote::CLOCK_EXCHANGES)?;
        let needed = crate::plan::programs_on_host(plan, &h.name);
        if let Some((i, why)) = crate::remote::programs::missing(&mut ch, &needed)?.into_iter().next() {
            let _ = ch.close();
            let n = &needed[i];
            return Err(crate::error::usage(format!(
                "{}: {}: {}: {why}",
                plan.locate_key(&n.key),
                n.what(),
                h.name
            )));
        }
        out.push(HostRecord {
            name: h.name.clone(),
            ssh: h.ssh.clone(),
            perflab: ch.hello.perflab.clone(),
            facts: ch.hello.facts.clone(),
            offset_s: o.offset_s,
            uncertainty_s: o.uncertainty_s,
            interval_s: plan.phases.interval.as_secs_f64(),
        });
        ch.close()?;
    }
    if !out.is_empty() {
        out.insert(0, local(plan.phases.interval.as_secs_f64()));
    }
    Ok(out)
}
