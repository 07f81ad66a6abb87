//! The run's event log (table `event`, since schema version 6): what the runner published as it
//! ran, one row per event in the order published, so that a live view started late, or from another
//! terminal, reads the run from its start (docs/live.md has the events' bodies).
//!
//! The log is written by its own connection ([`EventLog`], on the feed's writer thread) while the
//! runner's connection writes the trials: SQLite's write-ahead log lets readers go on, and each side
//! waits its turn for the short write it makes (a batch of events, one trial).

use super::Store;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::Path;

pub(super) const DDL: &str = r#"
CREATE TABLE IF NOT EXISTS event (
    seq INTEGER PRIMARY KEY,         -- order of publication, from 1
    unix_s REAL NOT NULL,            -- when it was published
    trial_id INTEGER,                -- the trial it is about (NULL: the run's)
    kind TEXT NOT NULL,              -- run_start | trial_start | phase | second | trial_end | ci | skipped | run_end
    body TEXT NOT NULL               -- the event as JSON (docs/live.md)
);
"#;

/// One stored event.
#[derive(Clone, Debug, PartialEq)]
pub struct EventRow {
    pub seq: i64,
    pub unix_s: f64,
    pub trial: Option<i64>,
    pub kind: String,
    pub body: String,
}

/// The event log's own connection to a run's store: appends events in batches.
pub struct EventLog {
    conn: Connection,
}

impl EventLog {
    /// Open the store of run directory `dir` for appending events (the store exists and has the
    /// table: created or upgraded by the runner's `Store`).
    pub fn open(dir: &Path) -> anyhow::Result<EventLog> {
        let conn = Connection::open(dir.join(super::DB_FILE))?;
        conn.execute_batch("PRAGMA cache_size = -64")?;
        // The runner's connection writes a trial at a time; behind a slow disk that can take a
        // while, and the log waits for it rather than stop.
        conn.busy_timeout(std::time::Duration::from_secs(120))?;
        Ok(EventLog { conn })
    }

    /// Append `events` (`unix_s`, trial, kind, body) in one transaction.
    pub fn append(&mut self, events: &[(f64, Option<usize>, &str, String)]) -> anyhow::Result<()> {
        let tx = self.conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        {
            let mut st = tx.prepare_cached("INSERT INTO event (unix_s, trial_id, kind, body) VALUES (?1, ?2, ?3, ?4)")?;
            for (unix_s, trial, kind, body) in events {
                st.execute(params![unix_s, trial.map(|t| t as i64), kind, body])?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}

/// The events after `after` (a `seq`; 0 for all), at most `limit`, in order, read from `conn`.
pub fn read_after(conn: &Connection, after: i64, limit: usize) -> rusqlite::Result<Vec<EventRow>> {
    let has: Option<i64> = conn
        .query_row("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'event'", [], |r| {
            r.get(0)
        })
        .optional()?;
    if has.is_none() {
        return Ok(Vec::new());
    }
    let mut st = conn.prepare_cached("SELECT seq, unix_s, trial_id, kind, body FROM event WHERE seq > ?1 ORDER BY seq LIMIT ?2")?;
    let rows = st.query_map(params![after, limit as i64], |r| {
        Ok(EventRow {
            seq: r.get(0)?,
            unix_s: r.get(1)?,
            trial: r.get(2)?,
            kind: r.get(3)?,
            body: r.get(4)?,
        })
    })?;
    rows.collect()
}

impl Store {
    /// The run's events after `after` (a `seq`; 0 for all), in order (none in a store older than
    /// version 6).
    pub fn events(&self, after: i64) -> anyhow::Result<Vec<EventRow>> {
        read_after(self.conn(), after, usize::MAX >> 1).map_err(|e| self.read_error("event", None, e))
    }
}
