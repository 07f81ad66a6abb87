//! The `perflab export` command line (every table of a run as CSV) and `perflab store upgrade`.

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

#[derive(clap::Args, Debug)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub action: StoreAction,
}

#[derive(clap::Subcommand, Debug)]
pub enum StoreAction {
    /// Bring a run's store written by an older perflab to the current schema, in place (its
    /// samples are packed and summarized; everything it holds is kept)
    Upgrade {
        /// A run directory (runs/TIMESTAMP-PLAN_NAME)
        run: PathBuf,
    },
}

pub fn store(args: StoreArgs) -> anyhow::Result<i32> {
    match args.action {
        StoreAction::Upgrade { run } => upgrade(&run),
    }
}

fn upgrade(dir: &std::path::Path) -> anyhow::Result<i32> {
    let mut store = super::Store::open(dir)?;
    let before = file_size(dir);
    let from = store.upgrade()?;
    let to = super::SCHEMA_VERSION;
    if from == to {
        println!("{}: already at store schema version {to}; nothing to do", dir.display());
    } else {
        store.checkpoint()?;
        println!(
            "{}: store upgraded from schema version {from} to {to} ({} → {})",
            dir.display(),
            human(before),
            human(file_size(dir))
        );
    }
    Ok(0)
}

fn file_size(dir: &std::path::Path) -> u64 {
    std::fs::metadata(dir.join(super::DB_FILE)).map(|m| m.len()).unwrap_or(0)
}

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MB", b as f64 / (1u64 << 20) as f64),
        b => format!("{:.0} KB", b as f64 / 1024.0),
    }
}
