//! `perflab load cpu`.

use super::config::{prepare, CpuConfig};
use crate::workload::driver::live::{run_load, LoadOptions};

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
    let o = LoadOptions {
        duration: &a.duration,
        warmup: a.warmup.as_deref(),
        json: a.json,
        quiet: a.quiet,
        unit: "ops",
    };
    run_load(&o, |warmup, duration, cancel, hooks| {
        super::engine::run(&p, warmup, duration, cancel, hooks)
    })
}
