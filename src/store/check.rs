//! Is a store what perflab wrote? Two depths, one set of rules:
//!
//! - [`quick`], each time a store is opened to be read (`report`, `export`, `compare`, `run
//!   --resume`): every table and column the store's schema version has, the run's row, the small
//!   tables a report relies on whole (`meta`, `run`, `point`, `trial`, `threshold`: each value of
//!   the kind its column holds, text in UTF-8), the JSON of `meta.primary`, `meta.notes`,
//!   `meta.hosts`, `meta.segment`, `meta.merged`, the clock measurements and every `params_json`, and every trial's point. It
//!   stops at the first problem; the large tables are checked row by row as they are read.
//! - [`full`], `perflab store check DIR`: SQLite's own `PRAGMA integrity_check`, the quick rules,
//!   every value of every table, rows that name a trial, point or sampled metric the store does not
//!   have, and every histogram, packed series, summary and probe decoded as a report reads them.
//!
//! Each problem is one line in the user's words (`trial 3 names point 999, which the store does
//! not have`).

use super::damage::{misfit, quoted, type_words, Place};
use super::layout::{self, Col};
use super::Store;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension};
use std::collections::BTreeSet;

/// The problems found, up to a limit.
pub struct Found {
    limit: usize,
    pub list: Vec<String>,
}

impl Found {
    fn new(limit: usize) -> Found {
        Found { limit, list: Vec::new() }
    }

    fn add(&mut self, what: impl Into<String>) {
        if self.list.len() < self.limit {
            self.list.push(what.into());
        }
    }

    fn full(&self) -> bool {
        self.list.len() >= self.limit
    }
}

/// The most problems `perflab store check` lists.
pub const MAX_LISTED: usize = 50;

/// The first problem of what a report relies on, if any (see the module's doc).
pub fn quick(conn: &Connection, version: i64) -> Option<String> {
    let mut f = Found::new(1);
    rules(conn, version, &mut f);
    f.list.into_iter().next()
}

/// One rule: its problems into the `Found` it is given.
type Step<'a> = dyn Fn(&mut Found) -> rusqlite::Result<()> + 'a;

/// The quick rules, each problem into `f`.
fn rules(conn: &Connection, version: i64, f: &mut Found) {
    let steps: [&Step; 6] = [
        &|f| structure(conn, version, f),
        &|f| {
            for t in ["meta", "run", "point", "trial", "threshold"] {
                if !f.full() {
                    scan(conn, version, t, f)?;
                }
            }
            Ok(())
        },
        &|f| run_row(conn, f),
        &|f| meta_values(conn, f),
        &|f| params(conn, "point", f),
        &|f| params(conn, "trial", f),
    ];
    for step in steps {
        if f.full() {
            return;
        }
        if let Err(e) = step(f) {
            f.add(super::damage::words("", &e));
        }
    }
    if !f.full() {
        if let Err(e) = trial_points(conn, f) {
            f.add(super::damage::words("trial", &e));
        }
    }
}

/// Every table and column of the schema `version` (the probe tables only if there are any).
fn structure(conn: &Connection, version: i64, f: &mut Found) -> rusqlite::Result<()> {
    let mut seen: Vec<&str> = Vec::new();
    for t in layout::tables(version) {
        let have: Vec<String> = conn
            .prepare(&format!("PRAGMA table_info(\"{}\")", t.name))?
            .query_map([], |r| r.get::<_, String>(1))?
            .collect::<rusqlite::Result<_>>()?;
        if have.is_empty() {
            if !t.optional && !seen.contains(&t.name) {
                f.add(format!("table {} is missing", t.name));
                seen.push(t.name);
            }
            continue;
        }
        for c in t.cols.iter().filter(|c| !have.iter().any(|h| h == c.name)) {
            f.add(format!("table {} has no column {}", t.name, c.name));
        }
    }
    Ok(())
}

/// The columns of `table` a store of `version` has, from every layout entry of that table.
fn columns(table: &str, version: i64) -> Vec<Col> {
    layout::tables(version)
        .filter(|t| t.name == table)
        .flat_map(|t| t.cols.iter().copied())
        .collect()
}

fn exists(conn: &Connection, table: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [table],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// Every value of `table`: of the kind its column holds (NULL only where it may be), text in
/// UTF-8. A missing table was said by `structure`.
fn scan(conn: &Connection, version: i64, table: &str, f: &mut Found) -> rusqlite::Result<()> {
    let cols = columns(table, version);
    if cols.is_empty() || !exists(conn, table)? {
        return Ok(());
    }
    let list: Vec<String> = cols.iter().map(|c| format!("\"{}\"", c.name)).collect();
    let mut st = match conn.prepare(&format!("SELECT {} FROM \"{table}\"", list.join(", "))) {
        Ok(st) => st,
        // A column is missing: `structure` said which.
        Err(_) => return Ok(()),
    };
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        for (i, c) in cols.iter().enumerate() {
            if let Some(bad) = misfit(c, r.get_ref(i)?) {
                f.add(format!("{}: {bad}", row_name(table, &cols, r)));
                if f.full() {
                    return Ok(());
                }
            }
        }
    }
    Ok(())
}

/// The row `r` of `table` in the user's words: `trial 3's metrics`, `point 2`, `meta key primary`.
fn row_name(table: &str, cols: &[Col], r: &rusqlite::Row<'_>) -> String {
    let int = |name: &str| -> Option<i64> {
        let i = cols.iter().position(|c| c.name == name)?;
        r.get_ref(i).ok()?.as_i64().ok()
    };
    let text = |name: &str| -> Option<String> {
        let i = cols.iter().position(|c| c.name == name)?;
        r.get_ref(i).ok()?.as_str().ok().map(str::to_string)
    };
    match table {
        "trial" => int("id").map_or("a trial".into(), |i| format!("trial {i}")),
        "point" => int("id").map_or("a point".into(), |i| format!("point {i}")),
        "meta" => text("key").map_or("a row of table meta".into(), |k| format!("meta key {k}")),
        "threshold" => text("expr").map_or("a threshold".into(), |e| format!("threshold `{e}`")),
        "metric_dict" => int("id").map_or("a sampled metric".into(), |i| format!("sampled metric #{i}")),
        "run" => Place { table, trial: None }.to_string(),
        _ => match int("trial_id") {
            Some(t) => Place { table, trial: Some(t) }.to_string(),
            None => format!("a row of table {table}"),
        },
    }
}

/// The run's one row, with a status perflab knows.
fn run_row(conn: &Connection, f: &mut Found) -> rusqlite::Result<()> {
    if !exists(conn, "run")? {
        return Ok(());
    }
    let Ok(mut st) = conn.prepare("SELECT status FROM run WHERE id = 1") else {
        return Ok(()); // a missing column: said by `structure`
    };
    let status: Option<Option<String>> = st
        .query_row([], |r| Ok(r.get_ref(0)?.as_str().ok().map(str::to_string)))
        .optional()?;
    match status {
        None => f.add("the run's facts are missing (table run has no row)"),
        Some(Some(s)) if super::RunStatus::parse(&s).is_none() => {
            f.add(format!("the run's status is {}, not one perflab writes", quoted(s.as_bytes())))
        }
        _ => {}
    }
    Ok(())
}

/// The JSON values of `meta`: `primary`, `notes`, `hosts`, `segment`, `merged`, `clock:<trial>`.
fn meta_values(conn: &Connection, f: &mut Found) -> rusqlite::Result<()> {
    if !exists(conn, "meta")? {
        return Ok(());
    }
    let mut st = conn.prepare("SELECT key, value FROM meta")?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let (Ok(key), Ok(value)) = (r.get_ref(0)?.as_str(), r.get_ref(1)?.as_str()) else {
            continue; // said by `scan`
        };
        let fits = match key {
            "primary" => serde_json::from_str::<crate::model::PrimaryMetrics>(value).is_ok(),
            "notes" => serde_json::from_str::<Vec<String>>(value).is_ok(),
            "hosts" => serde_json::from_str::<Vec<serde_json::Value>>(value).is_ok(),
            "segment" => serde_json::from_str::<super::SegmentMark>(value).is_ok(),
            "merged" => serde_json::from_str::<super::MergedMark>(value).is_ok(),
            k if k.starts_with("clock:") => {
                k["clock:".len()..].parse::<usize>().is_ok() && serde_json::from_str::<Vec<serde_json::Value>>(value).is_ok()
            }
            _ => true,
        };
        if !fits {
            let what = match key {
                "primary" => "the run's primary figures (meta key primary)".to_string(),
                "notes" => "the run's notes (meta key notes)".to_string(),
                "hosts" => "the run's hosts (meta key hosts)".to_string(),
                "segment" => "the facts of the run's segment (meta key segment)".to_string(),
                "merged" => "the facts of the run's merged segments (meta key merged)".to_string(),
                k => format!("the clock measurements of meta key {k}"),
            };
            f.add(format!(
                "{what} are not the JSON perflab writes there: {}",
                quoted(value.as_bytes())
            ));
            if f.full() {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Every `params_json` of `table` (`point` or `trial`) is a JSON object.
fn params(conn: &Connection, table: &str, f: &mut Found) -> rusqlite::Result<()> {
    if !exists(conn, table)? {
        return Ok(());
    }
    let mut st = match conn.prepare(&format!("SELECT id, params_json FROM {table} ORDER BY id")) {
        Ok(st) => st,
        Err(_) => return Ok(()),
    };
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let (Ok(id), Ok(text)) = (r.get_ref(0)?.as_i64(), r.get_ref(1)?.as_str()) else {
            continue; // said by `scan`
        };
        if !matches!(serde_json::from_str::<serde_json::Value>(text), Ok(serde_json::Value::Object(_))) {
            f.add(format!(
                "{table} {id}: its parameters (params_json) are not a JSON object: {}",
                quoted(text.as_bytes())
            ));
            if f.full() {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The ids of the points.
fn point_ids(conn: &Connection) -> rusqlite::Result<BTreeSet<i64>> {
    let mut st = conn.prepare("SELECT id FROM point WHERE typeof(id) = 'integer'")?;
    let ids = st.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    Ok(ids)
}

/// Every trial names a point the store has.
fn trial_points(conn: &Connection, f: &mut Found) -> rusqlite::Result<()> {
    if !exists(conn, "trial")? || !exists(conn, "point")? {
        return Ok(());
    }
    let points = point_ids(conn)?;
    let mut st = conn.prepare("SELECT id, point FROM trial WHERE typeof(id) = 'integer' AND typeof(point) = 'integer' ORDER BY id")?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let (id, point): (i64, i64) = (r.get(0)?, r.get(1)?);
        if !points.contains(&point) {
            f.add(format!("trial {id} names point {point}, which the store does not have"));
            if f.full() {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// What `perflab store check` finds: SQLite's integrity check (with `integrity`), the quick
/// rules, and everything else (see the module's doc), at most [`MAX_LISTED`] problems. An error
/// that is not damage (a full disk) is returned as such.
pub fn full(store: &Store, integrity: bool) -> anyhow::Result<Vec<String>> {
    let conn = store.conn();
    let version = store.schema_version();
    let mut f = Found::new(MAX_LISTED);
    if integrity {
        match sqlite_integrity(conn) {
            Ok(lines) => lines.into_iter().for_each(|l| f.add(format!("SQLite's integrity check: {l}"))),
            Err(e) => f.add(super::damage::words("", &e)),
        }
    }
    rules(conn, version, &mut f);
    let rest = ["phase", "metric", "histogram", "series", "error", "raw_output", "sample"]
        .into_iter()
        .chain([
            "metric_dict",
            "sample_clock",
            "sample_series",
            "phase_summary",
            "probe",
            "probe_sample",
            "profile",
            "event",
        ]);
    for t in rest {
        if !f.full() {
            if let Err(e) = scan(conn, version, t, &mut f) {
                f.add(format!("table {t}: {}", super::damage::words(t, &e)));
            }
        }
    }
    if !f.full() {
        if let Err(e) = orphans(conn, version, &mut f) {
            f.add(super::damage::words("", &e));
        }
    }
    if f.list.is_empty() {
        decoded(store, &mut f)?;
    }
    Ok(f.list)
}

/// SQLite's `PRAGMA integrity_check`: its lines other than `ok`.
fn sqlite_integrity(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut st = conn.prepare("PRAGMA integrity_check(20)")?;
    let lines: Vec<String> = st.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    Ok(lines.into_iter().filter(|l| l != "ok").collect())
}

/// Rows that name a trial, point or sampled metric the store does not have.
fn orphans(conn: &Connection, version: i64, f: &mut Found) -> rusqlite::Result<()> {
    let mut refs: Vec<(&str, &str, &str, &str)> = Vec::new();
    // The event log names the trials that started, stored or not (an interrupted trial's events
    // stay, the trial is not stored and `--resume` runs it again).
    for t in layout::tables(version).filter(|t| t.name != "event") {
        if t.cols.iter().any(|c| c.name == "trial_id") {
            refs.push((t.name, "trial_id", "trial", "trial"));
        }
        if t.cols.iter().any(|c| c.name == "metric_id") {
            refs.push((t.name, "metric_id", "metric_dict", "sampled metric #"));
        }
    }
    refs.push(("threshold", "point", "point", "point"));
    refs.dedup();
    for (table, col, parent, what) in refs {
        if f.full() || !exists(conn, table)? || !exists(conn, parent)? {
            continue;
        }
        let sql =
            format!("SELECT DISTINCT \"{col}\" FROM \"{table}\" WHERE \"{col}\" NOT IN (SELECT id FROM \"{parent}\") ORDER BY 1 LIMIT 5");
        let Ok(mut st) = conn.prepare(&sql) else { continue };
        let ids: Vec<String> = st
            .query_map([], |r| {
                Ok(match r.get_ref(0)? {
                    ValueRef::Integer(i) => i.to_string(),
                    ValueRef::Real(x) => x.to_string(),
                    ValueRef::Text(t) => quoted(t),
                    other => type_words(other.data_type()).to_string(),
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        for id in ids {
            let sep = if what.ends_with('#') { "" } else { " " };
            f.add(format!(
                "table {table} holds {} of {what}{sep}{id}, which the store does not have",
                layout::rows_of(table)
            ));
        }
    }
    Ok(())
}

/// Every trial read as a report reads it: its metrics, histograms and series, its samples on
/// every host, their summaries, its probes, kept output and profiles. What is not damage (a full disk) is
/// returned as the error it is.
fn decoded(store: &Store, f: &mut Found) -> anyhow::Result<()> {
    let Some(trials) = note(f, store.trials())? else { return Ok(()) };
    let Some(hosts) = note(f, store.sample_hosts())? else {
        return Ok(());
    };
    for t in &trials {
        for h in &hosts {
            note(
                f,
                store.samples_on(t.id, h).and_then(|_| store.phase_summaries_on(t.id, h, &t.phases)),
            )?;
        }
        note(f, store.probes(t.id).and_then(|_| store.raw_output(t.id)))?;
        note(f, store.profiles(t.id))?;
        if f.full() {
            return Ok(());
        }
    }
    note(f, store.thresholds())?;
    Ok(())
}

/// A read's value; its damage into `f` (then `None`); any other error returned.
fn note<T>(f: &mut Found, r: anyhow::Result<T>) -> anyhow::Result<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.chain().any(|c| c.is::<crate::error::DamagedStore>()) => {
            f.add(strip(&e));
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// A damaged-store error's own words: what is between the store's path and the advice.
fn strip(e: &anyhow::Error) -> String {
    let line = crate::error::one_line(e);
    let line = line.split_once(": ").map_or(line.as_str(), |(_, rest)| rest);
    line.split("; the store is damaged").next().unwrap_or(line).to_string()
}
