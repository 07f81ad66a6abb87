//! A plan's remote hosts before a run: perflab installed where asked (`--install-agent`), then every
//! host reached, its facts read and its clock offset measured, so that an unreachable host, a refused
//! key or a host without perflab is one clear line before anything starts. What was found is stored
//! with the run (`Store::write_hosts`).

use crate::plan::Plan;
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
        out.push(HostRecord {
            name: h.name.clone(),
            ssh: h.ssh.clone(),
            perflab: ch.hello.perflab.clone(),
            facts: ch.hello.facts.clone(),
            offset_s: o.offset_s,
            uncertainty_s: o.uncertainty_s,
        });
        ch.close()?;
    }
    Ok(out)
}
