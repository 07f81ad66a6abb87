//! The `perflab export` command line (every table of a run as CSV), `perflab store upgrade` and
//! `perflab store check`.

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
    let files = super::export::to_csv(&store, &out).map_err(|e| super::damage::explain(&args.run, e))?;
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
    /// Check a run's store: SQLite's integrity check, then every rule perflab's reports rely on
    /// (every table and column, each value of its kind, trials naming points the store has,
    /// histograms and packed samples that decode). Exit 0 when sound, 3 when damaged (each problem
    /// listed)
    Check {
        /// A run directory (runs/TIMESTAMP-PLAN_NAME)
        run: PathBuf,
    },
}

pub fn store(args: StoreArgs) -> anyhow::Result<i32> {
    match args.action {
        StoreAction::Upgrade { run } => upgrade(&run),
        StoreAction::Check { run } => check(&run),
    }
}

/// `perflab store check DIR`: each problem on a line of its own, then the verdict.
fn check(dir: &std::path::Path) -> anyhow::Result<i32> {
    let store = super::Store::open_unchecked(dir)?;
    let db = dir.join(super::DB_FILE);
    let problems = store.problems()?;
    for p in &problems {
        println!("{}: {p}", db.display());
    }
    if !problems.is_empty() {
        let more = if problems.len() >= super::check::MAX_LISTED {
            " (the first ones)"
        } else {
            ""
        };
        println!(
            "{}: damaged: {} problem(s){more}; restore it from a copy or run the plan again",
            db.display(),
            problems.len()
        );
        return Ok(crate::error::EXIT_DAMAGED);
    }
    let run = store.run()?;
    let trials = store.trial_ids()?.len();
    let points = store.points()?.len();
    println!(
        "{}: sound: schema version {}, {trials} trial(s) of {points} point(s), run {}; SQLite's integrity check and perflab's rules pass",
        db.display(),
        store.schema_version(),
        run.status
    );
    Ok(0)
}

fn upgrade(dir: &std::path::Path) -> anyhow::Result<i32> {
    let mut store = super::Store::open(dir)?;
    let before = file_size(dir);
    let from = store.upgrade().map_err(|e| super::damage::explain(dir, e))?;
    let to = super::SCHEMA_VERSION;
    if from == to {
        println!("{}: already at store schema version {to}; nothing to do", dir.display());
    } else {
        store.checkpoint().map_err(|e| super::damage::explain(dir, e))?;
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
