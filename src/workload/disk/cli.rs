//! `perflab load disk`.

use super::config::{prepare, DiskConfig};
use crate::workload::driver::live::{run_load, LoadOptions};
use crate::workload::mem::size::SizeSpec;

#[derive(clap::Args, Debug)]
pub struct DiskArgs {
    /// Pattern: read, write, randread, randwrite or randrw
    #[arg(long, default_value = "randread")]
    pub rw: String,
    /// randrw: % of operations that read
    #[arg(long)]
    pub mix: Option<f64>,
    /// Bytes per operation (4K, 1M)
    #[arg(long, default_value = "4K")]
    pub bs: String,
    /// Operations in flight per job
    #[arg(long, default_value_t = 1)]
    pub iodepth: u64,
    /// Jobs (threads, each with its own ring)
    #[arg(short = 'j', long, default_value_t = 1)]
    pub jobs: u64,
    /// The file's size (default 1G; a block device: its size)
    #[arg(short = 's', long)]
    pub size: Option<String>,
    /// The file or block device (default: a new file in a temporary directory)
    #[arg(short = 'f', long)]
    pub file: Option<String>,
    /// Allow writing to this block device (its path again)
    #[arg(long)]
    pub allow_destroy: Option<String>,
    /// Go through the page cache (no O_DIRECT)
    #[arg(long)]
    pub buffered: bool,
    /// An fsync after every N writes of a job
    #[arg(long)]
    pub fsync: Option<u64>,
    /// Keep the file perflab laid out
    #[arg(long)]
    pub keep: bool,
    /// auto (io_uring, else synchronous), io_uring or sync
    #[arg(long, default_value = "auto")]
    pub engine: String,
    /// Stop after this many measured operations
    #[arg(long)]
    pub ops: Option<u64>,
    /// How long to measure (e.g. 10s)
    #[arg(short = 'd', long, default_value = "10s")]
    pub duration: String,
    /// Warm-up before measuring (e.g. 1s)
    #[arg(long)]
    pub warmup: Option<String>,
    /// Print the result as JSON (schema perflab.load.disk/1)
    #[arg(long)]
    pub json: bool,
    /// No live progress line
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(a: DiskArgs) -> anyhow::Result<i32> {
    let cfg = DiskConfig {
        rw: Some(a.rw.clone()),
        mix: a.mix,
        bs: Some(SizeSpec::Text(a.bs.clone())),
        iodepth: Some(a.iodepth),
        jobs: Some(a.jobs),
        size: a.size.clone().map(SizeSpec::Text),
        file: a.file.clone(),
        allow_destroy: a.allow_destroy.clone(),
        direct: Some(!a.buffered),
        fsync: a.fsync,
        keep: a.keep,
        engine: Some(a.engine.clone()),
        ops: a.ops,
    };
    // The file's directory must be there: perflab makes the file, not the directories above it.
    if let Some(dir) = a.file.as_deref().map(std::path::Path::new).and_then(std::path::Path::parent) {
        if !dir.as_os_str().is_empty() && !dir.is_dir() {
            return Err(crate::error::usage(format!(
                "--file {}: no such directory {}",
                crate::util::text::clip(&a.file.clone().unwrap_or_default()),
                crate::util::text::clip(&dir.display().to_string())
            )));
        }
    }
    crate::workload::driver::live::durations(&a.duration, a.warmup.as_deref())?;
    let p = prepare(&cfg)?;
    let o = LoadOptions {
        duration: &a.duration,
        warmup: a.warmup.as_deref(),
        json: a.json,
        quiet: a.quiet,
        unit: "IO",
    };
    run_load(&o, |warmup, duration, cancel, hooks| {
        super::engine::run(&p, warmup, duration, cancel, hooks)
    })
}
