//! The SQLite schema (documented in docs/store.md). Bump `SCHEMA_VERSION` on any change, keep
//! reading the older versions, and teach `upgrade` to bring one up to date (for `--resume`).
//!
//! Versions: 1 first; 2 adds `metric.kind` and `threshold.basis` (NULL in rows of version 1: the
//! kind is then inferred from the metric's name and unit); 3 packs the monitor samples (`metric_dict`,
//! `sample_clock`, `sample_series` in place of `sample`) and adds `phase_summary`; 4 adds
//! `trial.failure_kind` (which `model::TrialFailure` a failure is; filled from the text on upgrade); 5 adds
//! `profile` (the folded stacks of the trials' load phases, `store/profiles.rs`); 6 adds `event` (the
//! run's event log, `store/events.rs`).

use crate::model::TrialFailure;
use rusqlite::{Connection, OptionalExtension};

pub const SCHEMA_VERSION: i64 = 6;

/// The oldest version this perflab still reads.
pub const OLDEST_READABLE: i64 = 1;

const DDL: &str = r#"
PRAGMA auto_vacuum = INCREMENTAL;
PRAGMA journal_mode = WAL;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE run (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    plan_name TEXT NOT NULL,
    plan_file TEXT NOT NULL,
    plan_source TEXT NOT NULL,
    seed INTEGER NOT NULL,
    started_unix REAL NOT NULL,
    ended_unix REAL,
    status TEXT NOT NULL,            -- running | complete | interrupted | failed
    perflab_version TEXT NOT NULL,
    host TEXT NOT NULL,
    kernel TEXT NOT NULL,
    ncpu INTEGER NOT NULL,
    mem_total_mb REAL NOT NULL,
    planned_trials INTEGER NOT NULL
);
CREATE TABLE point (
    id INTEGER PRIMARY KEY,          -- matrix point id from the plan expansion
    label TEXT NOT NULL,             -- "concurrency=10 model=pool"
    params_json TEXT NOT NULL,
    repetitions INTEGER NOT NULL DEFAULT 0,
    stop_reason TEXT                 -- why its repetitions stopped (fixed N, CI reached, max reached, skipped)
);
CREATE TABLE trial (
    id INTEGER PRIMARY KEY,          -- trial index in execution order
    point INTEGER NOT NULL REFERENCES point(id),
    repetition INTEGER NOT NULL,
    params_json TEXT NOT NULL,
    workload TEXT NOT NULL,
    status TEXT NOT NULL,            -- ok | failed
    failure TEXT,
    failure_kind TEXT,               -- which failure: target_not_ready, workload, ... (NULL: ok)
    started_unix REAL NOT NULL,
    ended_unix REAL NOT NULL,
    limit_mechanism TEXT,            -- cgroup-v1 | cgroup-v2 | affinity | none
    limit_proof TEXT,                -- e.g. "Cpus_allowed_list: 0; cpu.cfs_quota_us=50000"
    target_stdout_tail TEXT,
    target_stderr_tail TEXT
);
CREATE TABLE phase (
    trial_id INTEGER NOT NULL REFERENCES trial(id),
    name TEXT NOT NULL,              -- baseline | warmup | load | recovery
    start_s REAL NOT NULL,           -- seconds since the trial started
    end_s REAL NOT NULL,
    PRIMARY KEY (trial_id, name)
);
CREATE TABLE metric (
    trial_id INTEGER NOT NULL REFERENCES trial(id),
    name TEXT NOT NULL,
    unit TEXT NOT NULL,
    value REAL NOT NULL,
    better TEXT NOT NULL,            -- higher | lower | neither
    kind TEXT,                       -- rate | count | gauge | duration | quantile:Q (NULL: inferred from name and unit)
    PRIMARY KEY (trial_id, name)
);
CREATE TABLE histogram (
    trial_id INTEGER NOT NULL REFERENCES trial(id),
    name TEXT NOT NULL,              -- latency | service_time | connect | ttfb (values in microseconds)
    count INTEGER NOT NULL,
    hdr_v2_deflate BLOB NOT NULL,    -- HdrHistogram V2 + DEFLATE encoding
    PRIMARY KEY (trial_id, name)
);
CREATE TABLE series (
    trial_id INTEGER NOT NULL REFERENCES trial(id),
    name TEXT NOT NULL,
    t_s REAL NOT NULL,               -- seconds since the load phase began
    value REAL NOT NULL
);
CREATE TABLE error (
    trial_id INTEGER NOT NULL REFERENCES trial(id),
    class TEXT NOT NULL,
    count INTEGER NOT NULL
);
CREATE TABLE raw_output (
    trial_id INTEGER NOT NULL REFERENCES trial(id),
    line_no INTEGER NOT NULL,
    line TEXT NOT NULL
);
CREATE TABLE threshold (
    expr TEXT NOT NULL,
    point INTEGER NOT NULL,
    observed REAL,
    passed INTEGER NOT NULL,
    basis TEXT                       -- what `observed` is, e.g. "median of 3 trials' p99"
);
CREATE INDEX series_by_trial ON series(trial_id, name);
"#;

/// The tables of schema 3 that hold the monitor samples and their summaries.
const PACKED: &str = r#"
CREATE TABLE metric_dict (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,              -- monitor column name, unit in the suffix
    unit TEXT NOT NULL,
    kind TEXT NOT NULL,              -- rate | count | gauge | duration | quantile:Q
    host TEXT NOT NULL DEFAULT 'local',
    UNIQUE (host, name)
);
CREATE TABLE sample_clock (
    trial_id INTEGER NOT NULL REFERENCES trial(id),
    host TEXT NOT NULL DEFAULT 'local',
    n_samples INTEGER NOT NULL,
    phases TEXT NOT NULL,            -- the phase names, comma-separated, in order of first use
    phase_of BLOB NOT NULL,          -- one byte per sample: its phase's index in `phases`
    t_s BLOB NOT NULL,               -- packed f64: seconds since the trial started
    unix_s BLOB NOT NULL,            -- packed f64: wall clock
    PRIMARY KEY (trial_id, host)
) WITHOUT ROWID;
CREATE TABLE sample_series (
    trial_id INTEGER NOT NULL REFERENCES trial(id),
    metric_id INTEGER NOT NULL REFERENCES metric_dict(id),
    n_values INTEGER NOT NULL,
    present BLOB,                    -- bitmap of the samples that have a value; NULL: all do
    vals BLOB NOT NULL,              -- packed f64 (f64-xor-shuffle-deflate)
    PRIMARY KEY (trial_id, metric_id)
) WITHOUT ROWID;
CREATE TABLE phase_summary (
    trial_id INTEGER NOT NULL REFERENCES trial(id),
    metric_id INTEGER NOT NULL REFERENCES metric_dict(id),
    baseline REAL,
    n_baseline INTEGER NOT NULL,
    under_load REAL,
    n_load INTEGER NOT NULL,
    peak REAL,
    recovery REAL,
    n_recovery INTEGER NOT NULL,
    recovery_s REAL,
    never_recovered INTEGER NOT NULL,
    PRIMARY KEY (trial_id, metric_id)
) WITHOUT ROWID;
"#;

/// The tables in export order.
pub const TABLES: &[&str] = &[
    "meta",
    "run",
    "point",
    "trial",
    "phase",
    "metric",
    "histogram",
    "series",
    "metric_dict",
    "sample",
    "phase_summary",
    "error",
    "raw_output",
    "threshold",
    "probe",
    "probe_sample",
    "profile",
    "event",
];

pub fn create(conn: &Connection) -> anyhow::Result<()> {
    conn.execute_batch(DDL)?;
    conn.execute_batch(PACKED)?;
    conn.execute_batch(super::profiles::DDL)?;
    conn.execute_batch(super::events::DDL)?;
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)",
        [SCHEMA_VERSION.to_string()],
    )?;
    Ok(())
}

/// The store's schema version, if this perflab can read it. A database with neither a `meta` nor
/// a `run` table is not a perflab store (bad input); one whose version is missing or not a
/// number is damaged (`dir` names it); a newer version than this perflab reads is bad input.
/// SQLite's own errors (a file that is not a database) are returned as they are.
pub fn check(conn: &Connection, dir: &std::path::Path) -> anyhow::Result<i64> {
    let tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('meta', 'run')",
        [],
        |r| r.get(0),
    )?;
    if tables == 0 {
        return Err(crate::error::usage(format!(
            "{} is not a perflab store (it has no meta or run table)",
            dir.join(super::DB_FILE).display()
        )));
    }
    let v: Option<String> = conn
        .query_row("SELECT CAST(value AS TEXT) FROM meta WHERE key = 'schema_version'", [], |r| {
            r.get(0)
        })
        .optional()?;
    let Some(v) = v else {
        return Err(super::damage::damaged(
            dir,
            "the store's schema version (meta key schema_version) is missing",
        ));
    };
    match v.parse::<i64>() {
        Ok(n) if (OLDEST_READABLE..=SCHEMA_VERSION).contains(&n) => Ok(n),
        Ok(n) if n > SCHEMA_VERSION => Err(crate::error::usage(format!(
            "{}: store schema version {n} is newer than this perflab reads ({OLDEST_READABLE} to {SCHEMA_VERSION}); use a newer perflab",
            dir.join(super::DB_FILE).display()
        ))),
        _ => Err(super::damage::damaged(
            dir,
            format!("the store's schema version (meta key schema_version) is {v:?}, not one perflab writes"),
        )),
    }
}

/// Bring a store of an older version up to `SCHEMA_VERSION` (before writing to it: `--resume`, or
/// `perflab store upgrade`). Rows written before keep NULL in the new columns of version 2; the
/// samples of a store older than 3 are packed, trial by trial, and their summaries computed; the
/// failures of a store older than 4 get the kind their text tells; a store older than 5 gets the (empty)
/// profile table, one older than 6 the (empty) event log. Returns whether the
/// samples were repacked (the file then has free pages worth a `VACUUM`).
pub fn upgrade(conn: &mut Connection, from: i64) -> anyhow::Result<bool> {
    if from >= SCHEMA_VERSION {
        return Ok(false);
    }
    let tx = conn.transaction()?;
    if from < 2 {
        tx.execute_batch("ALTER TABLE metric ADD COLUMN kind TEXT; ALTER TABLE threshold ADD COLUMN basis TEXT;")?;
    }
    if from < 3 {
        tx.execute_batch(PACKED)?;
        super::summary::pack_rows(&tx)?;
        tx.execute_batch("DROP INDEX IF EXISTS sample_by_trial; DROP TABLE sample;")?;
    }
    if from < 4 {
        add_failure_kinds(&tx)?;
    }
    if from < 5 {
        tx.execute_batch(super::profiles::DDL)?;
    }
    if from < 6 {
        tx.execute_batch(super::events::DDL)?;
    }
    tx.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
        [SCHEMA_VERSION.to_string()],
    )?;
    tx.commit()?;
    Ok(from < 3)
}

/// Version 4: `trial.failure_kind`, told from each failed trial's text.
fn add_failure_kinds(c: &Connection) -> anyhow::Result<()> {
    c.execute_batch("ALTER TABLE trial ADD COLUMN failure_kind TEXT;")?;
    let failed: Vec<(i64, String)> = c
        .prepare("SELECT id, failure FROM trial WHERE failure IS NOT NULL")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut st = c.prepare("UPDATE trial SET failure_kind = ?1 WHERE id = ?2")?;
    for (id, text) in failed {
        st.execute(rusqlite::params![TrialFailure::infer_kind(&text), id])?;
    }
    Ok(())
}
