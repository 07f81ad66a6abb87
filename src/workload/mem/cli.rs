//! `perflab load mem`.

use super::config::{prepare, MemConfig};
use super::size::{available, SizeSpec};
use crate::workload::driver::live::{run_load, LoadOptions};

#[derive(clap::Args, Debug)]
pub struct MemArgs {
    /// touch, bandwidth or latency
    pub mode: String,
    /// touch: the region; latency: the working set; bandwidth: each array or block (bytes, 512M, 2G, 75%)
    #[arg(short = 's', long)]
    pub size: Option<String>,
    /// touch: run memtester's pattern tests over the region
    #[arg(long)]
    pub verify: bool,
    /// bandwidth: worker threads, each with its own arrays
    #[arg(short = 'w', long)]
    pub workers: Option<u64>,
    /// bandwidth: stream (STREAM's four kernels), read (a sequential sum of every word of a block)
    /// or write (a sequential store of every word)
    #[arg(short = 'm', long)]
    pub method: Option<String>,
    /// How long to measure (e.g. 10s); touch holds the region this long
    #[arg(short = 'd', long, default_value = "10s")]
    pub duration: String,
    /// Warm-up before measuring (e.g. 1s)
    #[arg(long)]
    pub warmup: Option<String>,
    /// Print the result as JSON (schema perflab.load.mem/1)
    #[arg(long)]
    pub json: bool,
    /// No live progress line
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(a: MemArgs) -> anyhow::Result<i32> {
    let cfg = MemConfig {
        mode: a.mode.clone(),
        size: a.size.clone().map(SizeSpec::Text),
        verify: a.verify,
        workers: a.workers,
        method: a.method.clone(),
    };
    let mode = prepare(&cfg, available())?;
    let o = LoadOptions {
        duration: &a.duration,
        warmup: a.warmup.as_deref(),
        json: a.json,
        quiet: a.quiet,
        unit: "ops",
    };
    run_load(&o, |warmup, duration, cancel, hooks| {
        super::engine::run(&mode, warmup, duration, cancel, hooks)
    })
}
