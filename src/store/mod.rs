//! The store: one SQLite database per run (`runs/<timestamp>-<plan name>/perflab.db`), written trial
//! by trial in one transaction per trial, with a copy of the plan beside it. The schema is documented
//! in `docs/store.md`; every table exports to CSV (`export`).

pub mod cli;
mod codec;
pub mod export;
mod hosts;
mod meta;
mod pack;
mod probes;
pub mod projection;
mod read;
pub mod reserve;
mod retry;
mod samples;
mod schema;
mod status;
mod summary;
mod write;

pub use codec::{decode_histogram, encode_histogram};
pub use probes::{ProbeRecord, ProbeRow};
pub use read::{StoredPoint, StoredRun, StoredThreshold, StoredTrial};
pub use samples::LOCAL_HOST;
pub use schema::SCHEMA_VERSION;
pub use status::{RunStatus, TrialFailure};
pub use summary::{load_end, summarize};
pub use write::{RunInfo, TaggedSample, TrialRecord};

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

    /// Open an existing run's store (for reports, export and `--resume`).
    pub fn open(dir: impl AsRef<Path>) -> anyhow::Result<Store> {
        let dir = dir.as_ref();
        let path = dir.join(DB_FILE);
        if !path.is_file() {
            return Err(crate::error::usage(format!(
                "{} is not a perflab run directory (no {DB_FILE})",
                dir.display()
            )));
        }
        let conn = Connection::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
        let version = schema::check(&conn)?;
        bound_cache(&conn)?;
        Ok(Store {
            conn,
            dir: dir.to_path_buf(),
            redactor: Redactor::default(),
            version,
        })
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

/// Redact the values of credential headers in text (see `util::redact::headers`): the pass every
/// text the store keeps goes through, on top of the run's own secrets (`Store::set_redactor`).
pub fn redact(text: &str) -> String {
    crate::util::redact::headers(text)
}
