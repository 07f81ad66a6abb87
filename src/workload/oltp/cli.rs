//! `perflab load oltp`: prepare the tables (not measured), run the transactions, print a
//! sysbench-like summary. Without `--db`, a SQLite file in a new temporary directory, removed at the
//! end.

use super::backend::Database;
use super::config::{prepare, OltpConfig};
use crate::workload::driver::live::{run_load, LoadOptions};
use std::sync::Arc;

#[derive(clap::Args, Debug)]
pub struct OltpArgs {
    /// The database: sqlite:PATH, postgres://user:password@host:port/db or mysql://...
    /// (default: a SQLite file in a temporary directory)
    #[arg(long)]
    pub db: Option<String>,
    /// point_select, read_only, read_write, write_only, update_index, update_non_index, insert or delete
    #[arg(short = 's', long, default_value = "read_write")]
    pub scenario: String,
    /// Tables (sbtest1..N)
    #[arg(long)]
    pub tables: Option<u64>,
    /// Rows per table
    #[arg(long)]
    pub table_size: Option<u64>,
    /// Threads, one connection each
    #[arg(short = 't', long)]
    pub threads: Option<u64>,
    /// Open model: transactions per second over all threads (default: closed model)
    #[arg(long)]
    pub rate: Option<f64>,
    /// Stop after this many measured transactions
    #[arg(long)]
    pub transactions: Option<u64>,
    /// How long to measure (e.g. 10s)
    #[arg(short = 'd', long, default_value = "10s")]
    pub duration: String,
    /// Warm-up before measuring (e.g. 1s)
    #[arg(long)]
    pub warmup: Option<String>,
    /// When to create and load the tables: auto (missing or of another size), always or never
    #[arg(long)]
    pub prepare: Option<String>,
    /// Only create and load the tables, then exit
    #[arg(long)]
    pub prepare_only: bool,
    /// Drop the tables at the end
    #[arg(long)]
    pub cleanup: bool,
    /// Ids: uniform (default) or special (sysbench's default: 75 % of the draws in 1 % of the ids)
    #[arg(long)]
    pub rand_type: Option<String>,
    /// Print the result as JSON (schema perflab.load.oltp/1)
    #[arg(long)]
    pub json: bool,
    /// No live progress line
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(a: OltpArgs) -> anyhow::Result<i32> {
    // Before the tables are loaded.
    crate::workload::driver::live::durations(&a.duration, a.warmup.as_deref())?;
    // An SQLite file is made by perflab, the directories above it are not.
    let sqlite_dir =
        a.db.as_deref()
            .and_then(|d| d.strip_prefix("sqlite:"))
            .map(|p| p.strip_prefix("//").unwrap_or(p));
    if let Some(dir) = sqlite_dir.map(std::path::Path::new).and_then(std::path::Path::parent) {
        if !dir.as_os_str().is_empty() && !dir.is_dir() {
            return Err(crate::error::usage(format!(
                "--db: no such directory {}",
                crate::util::text::clip(&dir.display().to_string())
            )));
        }
    }
    let cfg = OltpConfig {
        db: a.db.clone(),
        scenario: Some(a.scenario.clone()),
        tables: a.tables,
        table_size: a.table_size,
        threads: a.threads,
        rate: a.rate,
        transactions: a.transactions,
        prepare: a.prepare.clone(),
        cleanup: a.cleanup,
        rand_type: a.rand_type.clone(),
        ..Default::default()
    };
    let s = Arc::new(prepare(&cfg).map_err(|e| crate::error::usage(as_flag(&format!("{e:#}"))))?);
    let scratch = match &s.db {
        Some(_) => None,
        None => Some(scratch_dir()?),
    };
    let url = match (&s.db, &scratch) {
        (Some(u), _) => u.clone(),
        (None, Some(d)) => format!("sqlite:{}", d.join(super::workload::DEFAULT_FILE).display()),
        (None, None) => unreachable!("a scratch directory without --db"),
    };
    let result = run_with(&a, &s, &url);
    if let Some(d) = scratch {
        let _ = std::fs::remove_dir_all(d);
    }
    result
}

fn run_with(a: &OltpArgs, s: &Arc<super::config::Settings>, url: &str) -> anyhow::Result<i32> {
    let db: Arc<dyn Database> = Arc::from(super::open(url).map_err(|e| crate::error::usage(format!("--db: {}", e.message)))?);
    let cancel = crate::util::Cancel::on_signals()?;
    super::prepare::prepare(db.as_ref(), s, &cancel, !a.quiet || a.prepare_only)?;
    if a.prepare_only {
        println!("oltp: {} table(s) × {} rows ready in {}", s.tables, s.table_size, db.describe());
        return Ok(0);
    }
    let o = LoadOptions {
        duration: &a.duration,
        warmup: a.warmup.as_deref(),
        json: a.json,
        quiet: a.quiet,
        unit: "trx",
    };
    let code = run_load(&o, |warmup, duration, cancel, hooks| {
        super::engine::run(s, &db, warmup, duration, cancel, hooks)
    })?;
    if s.cleanup {
        super::prepare::cleanup(db.as_ref(), s)?;
    }
    Ok(code)
}

/// `table_size must be ...` → `--table-size must be ...`: the settings' messages name the key first.
fn as_flag(msg: &str) -> String {
    let key_end = msg.find([' ', ':']).unwrap_or(msg.len());
    format!("--{}{}", msg[..key_end].replace('_', "-"), &msg[key_end..])
}

fn scratch_dir() -> anyhow::Result<std::path::PathBuf> {
    let d = std::env::temp_dir().join(format!("perflab-oltp-{}", std::process::id()));
    std::fs::create_dir_all(&d).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", d.display()))?;
    Ok(d)
}
