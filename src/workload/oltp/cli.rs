//! `perflab load oltp`: prepare the tables (not measured), run the transactions, print a
//! sysbench-like summary. Without `--db`, a SQLite file in a new temporary directory, removed at the
//! end.

use super::backend::Database;
use super::config::{prepare, OltpConfig};
use crate::workload::driver::live::{run_load, LoadFlags};
use std::sync::Arc;

/// `perflab load oltp`'s options: the settings, and one of the command line's own.
#[derive(clap::Args, Debug)]
pub struct OltpArgs {
    #[command(flatten)]
    pub settings: OltpConfig,
    /// Only create and load the tables, then exit
    #[arg(long)]
    pub prepare_only: bool,
}

impl crate::workload::registry::spec::LoadRun for OltpArgs {
    fn run(self, flags: LoadFlags) -> anyhow::Result<i32> {
        run(self, &flags)
    }

    fn workload(self) -> anyhow::Result<toml::Table> {
        if self.prepare_only {
            return Err(crate::error::usage(
                "--prepare-only cannot be used with --live: a run loads the tables before its trial",
            ));
        }
        check_sqlite_dir(&self.settings)?;
        prepare(&self.settings).map_err(|e| crate::error::usage(as_flag(&format!("{e:#}"))))?;
        crate::workload::registry::spec::as_table(&self.settings)
    }
}

fn run(a: OltpArgs, flags: &LoadFlags) -> anyhow::Result<i32> {
    // Before the tables are loaded.
    flags.durations()?;
    check_sqlite_dir(&a.settings)?;
    let s = Arc::new(prepare(&a.settings).map_err(|e| crate::error::usage(as_flag(&format!("{e:#}"))))?);
    let scratch = match &s.db {
        Some(_) => None,
        None => Some(scratch_dir()?),
    };
    let url = match (&s.db, &scratch) {
        (Some(u), _) => u.clone(),
        (None, Some(d)) => format!("sqlite:{}", d.join(super::workload::DEFAULT_FILE).display()),
        (None, None) => unreachable!("a scratch directory without --db"),
    };
    let result = run_with(&a, flags, &s, &url);
    if let Some(d) = scratch {
        let _ = std::fs::remove_dir_all(d);
    }
    result
}

fn run_with(a: &OltpArgs, flags: &LoadFlags, s: &Arc<super::config::Settings>, url: &str) -> anyhow::Result<i32> {
    let db: Arc<dyn Database> = Arc::from(super::open(url).map_err(|e| crate::error::usage(format!("--db: {}", e.message)))?);
    let cancel = crate::util::Cancel::on_signals()?;
    if let Err(e) = super::prepare::prepare(db.as_ref(), s, &cancel, !flags.quiet || a.prepare_only) {
        if cancel.is_cancelled() {
            eprintln!("oltp: interrupted while preparing the tables (nothing measured)");
            return Ok(130);
        }
        return Err(e);
    }
    if a.prepare_only {
        println!("oltp: {} table(s) × {} rows ready in {}", s.tables, s.table_size, db.describe());
        return Ok(0);
    }
    let code = run_load(flags, "trx", |warmup, duration, cancel, hooks| {
        super::engine::run(s, &db, warmup, duration, cancel, hooks)
    })?;
    if s.cleanup {
        super::prepare::cleanup(db.as_ref(), s, &cancel)?;
    }
    Ok(code)
}

/// An SQLite file is made by perflab, the directories above it are not.
fn check_sqlite_dir(cfg: &super::config::OltpConfig) -> anyhow::Result<()> {
    let sqlite_dir = cfg
        .db
        .as_deref()
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
    Ok(())
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
