//! `perflab load mem`.

use super::config::{prepare, MemConfig};
use super::size::{available, SizeSpec};
use crate::workload::driver::coordinator::Hooks;
use crate::workload::driver::interval::Tick;
use hdrhistogram::Histogram;

#[derive(clap::Args, Debug)]
pub struct MemArgs {
    /// touch, bandwidth or latency
    pub mode: String,
    /// touch: the region; latency: the working set; bandwidth: each array (bytes, 512M, 2G, 75%)
    #[arg(short = 's', long)]
    pub size: Option<String>,
    /// touch: run memtester's pattern tests over the region
    #[arg(long)]
    pub verify: bool,
    /// bandwidth: worker threads, each with its own arrays
    #[arg(short = 'w', long)]
    pub workers: Option<u64>,
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
    };
    let mode = prepare(&cfg, available())?;
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
    let report = super::engine::run(&mode, warmup, duration, &cancel, hooks)?;
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
    } else if report.stats.errors > 0 || !report.measured_something() {
        1
    } else {
        0
    })
}
