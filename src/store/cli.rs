//! The `perflab export` command line: every table of a run as CSV.

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// A run directory (runs/TIMESTAMP-PLAN_NAME)
    pub run: PathBuf,
    /// Where to write the CSV files (default: RUN/csv)
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: ExportArgs) -> anyhow::Result<i32> {
    let store = super::Store::open(&args.run)?;
    let out = args.out.unwrap_or_else(|| args.run.join("csv"));
    let files = super::export::to_csv(&store, &out)?;
    println!("wrote {} tables to {}", files.len(), out.display());
    Ok(0)
}
