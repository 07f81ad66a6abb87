//! `perflab load cpu`.

use super::config::{prepare, CpuConfig};
use crate::workload::driver::coordinator::Hooks;
use crate::workload::driver::interval::Tick;
use hdrhistogram::Histogram;

#[derive(clap::Args, Debug)]
pub struct CpuArgs {
    /// Worker threads (default: one per CPU this process may use)
    #[arg(short = 'w', long)]
    pub workers: Option<u64>,
    /// Load of each worker, in % of its CPU (1 to 100)
    #[arg(short = 'l', long)]
    pub load: Option<f64>,
    /// Work: int, float, matrix, hash or mix
    #[arg(short = 'm', long)]
    pub method: Option<String>,
    /// Allow more workers than CPUs this process may use
    #[arg(long)]
    pub oversubscribe: bool,
    /// How long to measure (e.g. 10s)
    #[arg(short = 'd', long, default_value = "10s")]
    pub duration: String,
    /// Warm-up before measuring (e.g. 1s)
    #[arg(long)]
    pub warmup: Option<String>,
    /// Print the result as JSON (schema perflab.load.cpu/1)
    #[arg(long)]
    pub json: bool,
    /// No live progress line
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(a: CpuArgs) -> anyhow::Result<i32> {
    let cfg = CpuConfig {
        workers: a.workers,
        load: a.load,
        method: a.method.clone(),
        oversubscribe: a.oversubscribe,
    };
    let p = prepare(&cfg)?;
    let duration = crate::util::duration::parse(&a.duration).map_err(|e| crate::error::usage(format!("--duration: {e}")))?;
    if duration.is_zero() {
        return Err(crate::error::usage("--duration must be longer than 0s"));
    }
    let warmup = a
        .warmup
        .as_deref()
        .map(crate::util::duration::parse)
        .transpose()
        .map_err(|e| crate::error::usage(format!("--warmup: {e}")))?
        .unwrap_or_default();
    let cancel = crate::util::Cancel::on_signals()?;
    let live = !a.quiet && !a.json;
    let mut on_tick = |t: &Tick, _: &Histogram<u64>| {
        if live {
            crate::workload::driver::live::print(t, "ops");
        }
    };
    let hooks = Hooks {
        on_load_start: &mut || {},
        on_tick: &mut on_tick,
    };
    let report = super::engine::run(&p, warmup, duration, &cancel, hooks)?;
    if live {
        eprintln!();
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report.json())?);
    } else {
        print!("{}", report.summary());
    }
    Ok(if cancel.is_cancelled() {
        130
    } else if report.stats.errors > 0 || report.stats.ops == 0 {
        1
    } else {
        0
    })
}
