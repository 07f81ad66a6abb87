//! The `cpu` workload's settings, as a plan's `[workload]` table and `perflab load cpu` give them,
//! and their checks.

use super::methods::Choice;
use crate::error::usage;

crate::workload::registry::spec::settings! {
    /// The `cpu` workload's settings: a plan's `[workload]` keys and `perflab load cpu`'s options.
    #[derive(Clone, Debug, Default, serde::Serialize)]
    #[serde(deny_unknown_fields)]
    pub struct CpuConfig {
        /// worker threads; more than the CPUs allowed needs `oversubscribe = true`
        #[key("integer ≥ 1", "one per CPU the process may use")]
        #[serde(default)]
        #[arg(short = 'w', long)]
        pub workers: Option<u64>,
        /// % of each worker's CPU, held by a closed loop on its measured thread CPU time
        #[key("number from 1 to 100", "`100`")]
        #[serde(default)]
        #[arg(short = 'l', long)]
        pub load: Option<f64>,
        /// the work of one operation (`mix`: each in turn)
        #[key("`\"int\"`, `\"float\"`, `\"matrix\"`, `\"hash\"` or `\"mix\"`", "`\"mix\"`")]
        #[serde(default)]
        #[arg(short = 'm', long)]
        pub method: Option<String>,
        /// allow more workers than the CPUs this process may use
        #[key("bool", "`false`")]
        #[serde(default)]
        #[arg(long)]
        pub oversubscribe: bool,
    }
}

/// Checked settings.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub workers: usize,
    /// Percent, 1 to 100.
    pub load_pct: f64,
    pub method: Choice,
    /// The CPUs this process may run on.
    pub cpus: usize,
}

/// The CPUs this process may use (its affinity and cgroup quota).
pub fn allowed_cpus() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Check the settings; the messages name the key first (`load must be ...`).
pub fn prepare(c: &CpuConfig) -> anyhow::Result<Prepared> {
    let cpus = allowed_cpus();
    let load_pct = c.load.unwrap_or(100.0);
    if !(1.0..=100.0).contains(&load_pct) {
        return Err(usage(format!(
            "load must be from 1 to 100 (% of each worker's CPU), not {load_pct}"
        )));
    }
    let workers = match c.workers {
        Some(0) => return Err(usage("workers must be at least 1")),
        Some(n) if n > 4096 => return Err(usage(format!("workers must be at most 4096, not {n}"))),
        Some(n) => n as usize,
        None => cpus,
    };
    if workers > cpus && !c.oversubscribe {
        return Err(usage(format!(
            "workers = {workers} is more than the {cpus} CPU(s) this process may use: say oversubscribe = true (--oversubscribe) to run them anyway"
        )));
    }
    let method = Choice::parse(c.method.as_deref().unwrap_or("mix")).map_err(usage)?;
    Ok(Prepared {
        workers,
        load_pct,
        method,
        cpus,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_settings_are_refused_with_the_key_first() {
        let bad = |c: CpuConfig| format!("{:#}", prepare(&c).expect_err("refused"));
        assert!(bad(CpuConfig {
            load: Some(0.0),
            ..Default::default()
        })
        .starts_with("load must be from 1 to 100"));
        assert!(bad(CpuConfig {
            load: Some(150.0),
            ..Default::default()
        })
        .contains("not 150"));
        assert!(bad(CpuConfig {
            workers: Some(0),
            ..Default::default()
        })
        .starts_with("workers"));
        let many = CpuConfig {
            workers: Some(allowed_cpus() as u64 + 1),
            ..Default::default()
        };
        assert!(bad(many.clone()).contains("oversubscribe = true"));
        assert!(prepare(&CpuConfig {
            oversubscribe: true,
            ..many
        })
        .is_ok());
        assert!(bad(CpuConfig {
            method: Some("fft".into()),
            ..Default::default()
        })
        .starts_with("method"));
        let p = prepare(&CpuConfig::default()).expect("defaults");
        assert_eq!((p.workers, p.load_pct, p.method), (allowed_cpus(), 100.0, Choice::Mix));
    }
}
