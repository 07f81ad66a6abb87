//! `perflab hosts check PLAN` and `perflab hosts install PLAN`.

use crate::plan::HostSpec;
use crate::remote::protocol::Facts;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct HostsArgs {
    #[command(subcommand)]
    pub action: HostsAction,
}

#[derive(clap::Subcommand, Debug)]
pub enum HostsAction {
    /// For every host of the plan: reachable?, its perflab version, CPUs, memory, kernel, cgroups, clock offset,
    /// and the programs the plan starts there
    Check {
        /// The plan file
        plan: PathBuf,
    },
    /// Copy this perflab to every host of the plan that lacks it (per-version cache, SHA-256 checked)
    Install {
        /// The plan file
        plan: PathBuf,
    },
}

fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

/// One line of facts about a host.
pub fn describe(f: &Facts, version: &str) -> String {
    format!(
        "perflab {version}, {} {}, {} CPU(s) ({}), {}, kernel {}, cgroups {}{}",
        f.hostname,
        f.arch,
        f.cpus,
        if f.cpu_model.is_empty() { "model unknown" } else { &f.cpu_model },
        gib(f.mem_bytes),
        f.kernel,
        f.cgroups,
        if f.perf.is_empty() {
            String::new()
        } else {
            format!(", profiles: {}", f.perf)
        }
    )
}

/// Check one host: its facts and clock offset, as one line; then that it has the programs `needed`
/// (the plan's commands there), a missing one being the error (`server: no program `x` on PATH`).
pub fn check_host(h: &HostSpec, needed: &[crate::plan::NeededProgram]) -> anyhow::Result<String> {
    let mut ch = super::open(h)?;
    let o = ch.clock(super::CLOCK_EXCHANGES)?;
    if let Some((i, why)) = super::programs::missing(&mut ch, needed)?.into_iter().next() {
        let _ = ch.close();
        anyhow::bail!("{}: {why} ({})", h.name, needed[i].what());
    }
    let line = format!(
        "{}: reachable, {}, clock offset {:+.3} ms ± {:.3} ms",
        h.name,
        describe(&ch.hello.facts, &ch.hello.perflab),
        o.offset_s * 1e3,
        o.uncertainty_s * 1e3
    );
    ch.close()?;
    Ok(line)
}

/// `local_facts` reads this machine's facts (the agent's own reading, passed in so that this
/// module does not depend on the agent, which depends on it).
pub fn run(a: HostsArgs, local_facts: fn() -> Facts) -> anyhow::Result<i32> {
    let (path, install) = match &a.action {
        HostsAction::Check { plan } => (plan, false),
        HostsAction::Install { plan } => (plan, true),
    };
    let plan = crate::plan::load(path)?;
    if !install {
        println!("local: {}", describe(&local_facts(), env!("CARGO_PKG_VERSION")));
    }
    if plan.hosts.is_empty() {
        println!("(the plan names no remote host: add them under [hosts])");
        return Ok(0);
    }
    let mut failed = 0;
    for h in &plan.hosts {
        let r = if install {
            super::install(h)
        } else {
            check_host(h, &crate::plan::programs_on_host(&plan, &h.name))
        };
        match r {
            Ok(line) => println!("{line}"),
            Err(e) => {
                failed += 1;
                println!("{}", crate::error::one_line(&e));
            }
        }
    }
    Ok(if failed > 0 { 1 } else { 0 })
}
