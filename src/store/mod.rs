//! The store: one SQLite database per run (`runs/<timestamp>-<plan name>/perflab.db`), written trial
//! by trial in one transaction per trial, with a copy of the plan beside it. The schema is documented
//! in `docs/store.md`; every table exports to CSV (`export`).

mod check;
pub mod cli;
mod codec;
mod damage;
pub mod events;
pub mod export;
mod hosts;
mod layout;
mod meta;
mod pack;
mod probes;
mod profiles;
pub mod projection;
mod read;
pub mod reserve;
mod retry;
mod samples;
mod schema;
mod segment;
mod status;
mod summary;
mod write;

pub use codec::{decode_histogram, encode_histogram};
pub use events::{EventLog, EventRow};
pub use probes::{ProbeRecord, ProbeRow};
pub use profiles::ProfileRecord;
pub use read::{Measured, StoredPoint, StoredRun, StoredThreshold, StoredTrial};
pub use schema::SCHEMA_VERSION;
pub use segment::{plan_sha256, MergedMark, MergedSegment, SegmentMark};
pub use status::RunStatus;
pub use summary::{load_end, summarize};
pub use write::{RunInfo, TaggedSample, TrialRecord};
// The model's types the store's callers have always found here.
pub use crate::model::{PhaseSpan, TrialFailure, TrialInfo, LOCAL_HOST};

use crate::util::redact::Redactor;
use anyhow::Context;
use rusqlite::Connection;
use std::path::{Path, PathBuf};

/// The database file name inside a run directory.
pub const DB_FILE: &str = "perflab.db";

/// An open run store.
pub struct Store {
    conn: Connection,
    dir: PathBuf,
    /// Applied to every text written (labels, parameters, failures, outputs, notes).
    redactor: Redactor,
    /// The schema version of the database as opened (older ones are read, and upgraded before a
    /// `--resume` writes to them).
    version: i64,
}

impl Store {
    /// Create a new store in `dir` (the directory is created; an existing database is an error).
    pub fn create(dir: &Path) -> anyhow::Result<Store> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create run directory {}", dir.display()))?;
        let path = dir.join(DB_FILE);
        if path.exists() {
            anyhow::bail!("{} already exists", path.display());
        }
        let conn = Connection::open(&path).with_context(|| format!("cannot create {}", path.display()))?;
        schema::create(&conn)?;
        bound_cache(&conn)?;
        Ok(Store {
            conn,
            dir: dir.to_path_buf(),
            redactor: Redactor::default(),
            version: SCHEMA_VERSION,
        })
    }

    /// Open an existing run's store (for reports, export and `--resume`), checking what a report
    /// relies on (`check::quick`): a damaged store is refused with one line naming the damage
    /// (`error::DamagedStore`, exit code 3).
    pub fn open(dir: impl AsRef<Path>) -> anyhow::Result<Store> {
        let store = Store::open_unchecked(dir.as_ref())?;
        if let Some(what) = check::quick(&store.conn, store.version) {
            return Err(damage::damaged(&store.dir, what));
        }
        Ok(store)
    }

    /// Open a run's store as it is (`perflab store check` lists every problem itself).
    fn open_unchecked(dir: &Path) -> anyhow::Result<Store> {
        let path = dir.join(DB_FILE);
        if !path.is_file() {
            return Err(crate::error::usage(format!(
                "{} is not a perflab run directory (no {DB_FILE})",
                dir.display()
            )));
        }
        let at = damage::Place {
            table: "meta",
            trial: None,
        };
        let conn = Connection::open(&path).map_err(|e| damage::read_error(dir, at, e.into()))?;
        let version = schema::check(&conn, dir).map_err(|e| damage::read_error(dir, at, e))?;
        bound_cache(&conn).map_err(|e| damage::read_error(dir, at, e))?;
        Ok(Store {
            conn,
            dir: dir.to_path_buf(),
            redactor: Redactor::default(),
            version,
        })
    }

    /// Every problem `perflab store check` finds in this store (none: it is sound), each in words.
    pub fn problems(&self) -> anyhow::Result<Vec<String>> {
        check::full(self, true)
    }

    /// Refuse a store with any damage a report would meet, checked whole (every trial, histogram
    /// and packed series read): before `--resume` adds trials to it, so a run is not resumed for
    /// hours into a store whose report cannot be written. The error is the line a report gives.
    pub fn check_whole(&self) -> anyhow::Result<()> {
        match check::full(self, false)?.into_iter().next() {
            Some(what) => Err(damage::damaged(&self.dir, what)),
            None => Ok(()),
        }
    }

    /// An error met reading `table` (of trial `trial`, when known) as one line naming the damage.
    pub(crate) fn read_error(&self, table: &str, trial: Option<i64>, e: impl Into<anyhow::Error>) -> anyhow::Error {
        damage::read_error(&self.dir, damage::Place { table, trial }, e.into())
    }

    /// Redact the run's own secrets (the plan's, see `plan::Secrets`) from everything written from
    /// now on; without it only credential headers are (`redact`).
    pub fn set_redactor(&mut self, redactor: Redactor) {
        self.redactor = redactor;
    }

    /// Bytes SQLite holds for this store's connection: its page cache, schema and prepared
    /// statements (what a long run keeps of its store; bounded, see `CACHE_KIB`).
    pub fn connection_memory(&self) -> u64 {
        use rusqlite::ffi;
        let mut total = 0u64;
        for op in [
            ffi::SQLITE_DBSTATUS_CACHE_USED,
            ffi::SQLITE_DBSTATUS_SCHEMA_USED,
            ffi::SQLITE_DBSTATUS_STMT_USED,
        ] {
            let (mut cur, mut high) = (0, 0);
            // SAFETY: the handle is this open connection's, used on this thread only for the
            // duration of the call; sqlite3_db_status only reads its counters into the two ints.
            let rc = unsafe { ffi::sqlite3_db_status(self.conn.handle(), op, &mut cur, &mut high, 0) };
            if rc == ffi::SQLITE_OK {
                total += cur.max(0) as u64;
            }
        }
        total
    }

    /// The schema version of the database as it was opened.
    pub fn schema_version(&self) -> i64 {
        self.version
    }

    /// Bring a store written by an older perflab up to the current schema, before writing to it
    /// (`--resume`, `perflab store upgrade`); what it holds is kept (metric kinds written before stay
    /// inferred), its samples are packed and summarized, and the file is compacted (`VACUUM`).
    /// Returns the version it had.
    pub fn upgrade(&mut self) -> anyhow::Result<i64> {
        let from = self.version;
        if schema::upgrade(&mut self.conn, from)? {
            self.conn.execute_batch("VACUUM")?;
        }
        self.version = SCHEMA_VERSION;
        Ok(from)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    pub(crate) fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }
}

/// SQLite's page cache for one store, in KiB. Its default (2 MiB) fills as the database grows,
/// so a run's memory rose with its first few dozen trials; trials are appended and read once
/// each, and this much cache is full before the tenth trial is stored.
const CACHE_KIB: i64 = 256;

fn bound_cache(conn: &Connection) -> anyhow::Result<()> {
    conn.execute_batch(&format!("PRAGMA cache_size = -{CACHE_KIB}"))?;
    Ok(())
}

/// An error met reading the stores of `dirs`, as one line: SQLite's own errors (that no read site
/// worded) become the damage or the condition they are, naming the store; any other error is
/// returned as it is. For `report`, `compare` and `export`, whose read sites word most errors.
pub fn explain(dirs: &[&Path], e: anyhow::Error) -> anyhow::Error {
    match dirs {
        [one] => damage::explain(one, e),
        _ if e.chain().any(|c| c.is::<rusqlite::Error>()) => {
            let names: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
            let sql = e.chain().find_map(|c| c.downcast_ref::<rusqlite::Error>());
            crate::error::damaged(format!(
                "one of the stores of {} cannot be read: {}; `perflab store check DIR` on each says which",
                names.join(", "),
                sql.map_or_else(String::new, |s| damage::words("", s))
            ))
        }
        _ => e,
    }
}

/// Redact the values of credential headers in text (see `util::redact::headers`): the pass every
/// text the store keeps goes through, on top of the run's own secrets (`Store::set_redactor`).
pub fn redact(text: &str) -> String {
    crate::util::redact::headers(text)
}

/// A new store in `dir` holding a run of `trials` planned trials and the points `0..points` (no
/// parameters): where the store's own tests start.
#[cfg(test)]
pub(crate) fn test_store(dir: &std::path::Path, trials: usize, points: usize) -> Store {
    let mut s = Store::create(dir).expect("store");
    s.write_run(&RunInfo {
        plan_name: "p".into(),
        plan_file: "p.toml".into(),
        plan_source: String::new(),
        seed: 1,
        started_unix: 0.0,
        planned_trials: trials,
    })
    .expect("run");
    for p in 0..points {
        s.write_point(p, "", "{}", 0, None).expect("point");
    }
    s
}
