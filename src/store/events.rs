//! The run's event log (table `event`, since schema version 6): what the runner published as it
//! ran, one row per event in the order published, so that a live view started late, or from another
//! terminal, reads the run from its start (docs/live.md has the events' bodies).
//!
//! Once a trial is stored, the feed's writer packs its `second` rows into one row of kind
//! [`PACKED_SECONDS`] ([`EventLog::pack_seconds`]): their `seq`, time and body, a line each,
//! DEFLATE-compressed, in base64. [`read_after`] gives such a row back as the rows it replaced,
//! bit for bit, so a view reads both forms alike.
//!
//! The log is written by its own connection ([`EventLog`], on the feed's writer thread) while the
//! runner's connection writes the trials: SQLite's write-ahead log lets readers go on, and each side
//! waits its turn for the short write it makes (a batch of events, one trial).

use super::Store;
use base64::Engine as _;
use rusqlite::{params, Connection, OptionalExtension, Row};
use std::io::{Read, Write};
use std::path::Path;

pub(super) const DDL: &str = r#"
CREATE TABLE IF NOT EXISTS event (
    seq INTEGER PRIMARY KEY,         -- order of publication, from 1
    unix_s REAL NOT NULL,            -- when it was published
    trial_id INTEGER,                -- the trial it is about (NULL: the run's)
    kind TEXT NOT NULL,              -- run_start | trial_start | phase | second | host | probes | trial_end | ci | threshold | skipped | run_end | seconds
    body TEXT NOT NULL               -- the event as JSON (docs/live.md); `seconds`: a stored trial's seconds, packed
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

/// The kind of the row that holds a stored trial's `second` rows, packed.
pub const PACKED_SECONDS: &str = "seconds";

/// The packed body's format: its first line.
const FORMAT: &str = "seconds/1";

/// The format of a pack that holds `host` rows too (their bodies begin `["`, a second's `[` and a
/// number): an older perflab refuses it rather than read a host as a second.
const FORMAT_HOSTS: &str = "seconds/2";

/// The most bytes a packed body may inflate to (a damaged one is refused, not read without end).
const MAX_UNPACKED: u64 = 64 << 20;

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD_NO_PAD
}

/// A number as a `second`'s body writes it: the fewest characters JSON reads back to it (`5` for 5.0).
pub fn number_text(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// A `second`'s body from its cells (`[5,400,0,0.12,null]`).
pub fn cells_text(cells: &[Option<f64>]) -> String {
    let cells: Vec<String> = cells.iter().map(|v| v.map_or("null".into(), number_text)).collect();
    format!("[{}]", cells.join(","))
}

/// Rows (`seq`, `unix_s`, body) of `second`s as one packed body: a line each, `seq` after the
/// previous one's, `unix_s` (the shortest text that reads back to it) and the body as it is, the
/// whole DEFLATE-compressed (the bodies' digits repeat), in base64.
fn pack(rows: &[(i64, f64, String)]) -> Option<String> {
    let hosts = rows.iter().any(|r| r.2.starts_with("[\""));
    let mut text = format!("{}\n", if hosts { FORMAT_HOSTS } else { FORMAT });
    let mut prev = rows.first()?.0;
    for (seq, unix_s, body) in rows {
        if body.contains('\n') || !unix_s.is_finite() {
            return None;
        }
        text.push_str(&format!("{} {unix_s} {body}\n", seq - prev));
        prev = *seq;
    }
    let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(text.as_bytes()).ok()?;
    Some(b64().encode(enc.finish().ok()?))
}

/// A packed row (`seq` the first second's, of `trial`) back as the `second` rows it holds, in order.
fn unpack(seq: i64, trial: Option<i64>, body: &str) -> anyhow::Result<Vec<EventRow>> {
    let damaged = || anyhow::anyhow!("a packed row of seconds in the event log is damaged");
    let blob = b64().decode(body).map_err(|_| damaged())?;
    let mut text = String::new();
    flate2::read::DeflateDecoder::new(&blob[..])
        .take(MAX_UNPACKED)
        .read_to_string(&mut text)
        .map_err(|_| damaged())?;
    let mut lines = text.lines();
    if !matches!(lines.next(), Some(FORMAT | FORMAT_HOSTS)) {
        return Err(damaged());
    }
    let mut at = seq;
    lines
        .map(|l| {
            let mut parts = l.splitn(3, ' ');
            let (Some(d), Some(t), Some(body)) = (parts.next(), parts.next(), parts.next()) else {
                return Err(damaged());
            };
            at = at.checked_add(d.parse::<i64>().map_err(|_| damaged())?).ok_or_else(damaged)?;
            Ok(EventRow {
                seq: at,
                unix_s: t.parse().map_err(|_| damaged())?,
                trial,
                kind: if body.starts_with("[\"") { "host" } else { "second" }.into(),
                body: body.to_string(),
            })
        })
        .collect()
}

fn event_row(r: &Row<'_>) -> rusqlite::Result<EventRow> {
    Ok(EventRow {
        seq: r.get(0)?,
        unix_s: r.get(1)?,
        trial: r.get(2)?,
        kind: r.get(3)?,
        body: r.get(4)?,
    })
}

impl EventLog {
    /// Once trial `trial` is stored: its `second` and `host` rows become one row of kind
    /// [`PACKED_SECONDS`] (at the first one's `seq`), and of its `probes` rows only the last stays, in one
    /// transaction. Returns how many seconds it packed (none when there were fewer than two).
    pub fn pack_seconds(&mut self, trial: usize) -> anyhow::Result<usize> {
        let tx = self.conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        // Its probes' figures: the last (equal to its stored probe rows) stays.
        tx.execute(
            "DELETE FROM event WHERE trial_id = ?1 AND kind = 'probes'
             AND seq < (SELECT MAX(seq) FROM event WHERE trial_id = ?1 AND kind = 'probes')",
            [trial as i64],
        )?;
        let rows: Vec<(i64, f64, String)> = tx
            .prepare("SELECT seq, unix_s, body FROM event WHERE trial_id = ?1 AND kind IN ('second', 'host') ORDER BY seq")?
            .query_map([trial as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        // A row after the last second (its trial's end) keeps the next `seq` from being one of
        // the rows taken out.
        let last: i64 = tx.query_row("SELECT COALESCE(MAX(seq), 0) FROM event", [], |r| r.get(0))?;
        let (Some(first), Some(end)) = (rows.first(), rows.last()) else {
            tx.commit()?;
            return Ok(0);
        };
        let packed = (rows.len() >= 2 && last > end.0).then(|| pack(&rows)).flatten();
        let Some(body) = packed else {
            tx.commit()?;
            return Ok(0);
        };
        tx.execute(
            "DELETE FROM event WHERE trial_id = ?1 AND kind IN ('second', 'host')",
            [trial as i64],
        )?;
        tx.execute(
            "INSERT INTO event (seq, unix_s, trial_id, kind, body) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![first.0, first.1, trial as i64, PACKED_SECONDS, body],
        )?;
        tx.commit()?;
        Ok(rows.len())
    }

    /// Give the free pages (the packed rows' old place) back to the file system, in a store made
    /// with `auto_vacuum = INCREMENTAL` (an older one keeps them for its next rows).
    pub fn shrink(&mut self) -> anyhow::Result<()> {
        // One page a step: stepped until it is done.
        let mut st = self.conn.prepare("PRAGMA incremental_vacuum")?;
        let mut rows = st.query([])?;
        while rows.next()?.is_some() {}
        Ok(())
    }
}

/// The events after `after` (a `seq`; 0 for all), at most `limit`, in order, read from `conn`: a
/// packed row of seconds is given as the `second` rows it holds.
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
    let rows: Vec<EventRow> = st
        .query_map(params![after, limit as i64], event_row)?
        .collect::<rusqlite::Result<_>>()?;
    // The packed row that begins at or before `after` may hold seconds after it (packs never
    // overlap: the last one that begins there is the only one).
    let straddling = conn
        .prepare_cached("SELECT seq, unix_s, trial_id, kind, body FROM event WHERE seq <= ?1 AND kind = ?2 ORDER BY seq DESC LIMIT 1")?
        .query_row(params![after, PACKED_SECONDS], event_row)
        .optional()?;
    if straddling.is_none() && !rows.iter().any(|r| r.kind == PACKED_SECONDS) {
        return Ok(rows);
    }
    let full = rows.len() >= limit;
    let last = rows.last().map(|r| r.seq);
    let mut out = Vec::with_capacity(rows.len());
    for r in straddling.into_iter().chain(rows) {
        if r.kind != PACKED_SECONDS {
            out.push(r);
            continue;
        }
        let inner = unpack(r.seq, r.trial, &r.body)
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(4, rusqlite::types::Type::Text, e.into()))?;
        out.extend(inner.into_iter().filter(|i| i.seq > after));
    }
    out.sort_by_key(|r| r.seq);
    // A batch cut at `limit` ends at its last row: the seconds of a pack beyond it come with the
    // rows between, in the next batch.
    if let (true, Some(last)) = (full, last) {
        out.retain(|r| r.seq <= last);
    }
    out.truncate(limit);
    Ok(out)
}

impl Store {
    /// The run's events after `after` (a `seq`; 0 for all), in order (none in a store older than
    /// version 6).
    pub fn events(&self, after: i64) -> anyhow::Result<Vec<EventRow>> {
        read_after(self.conn(), after, usize::MAX >> 1).map_err(|e| self.read_error("event", None, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(conn: &Connection, limit: usize) -> Vec<EventRow> {
        let (mut out, mut after) = (Vec::new(), 0);
        loop {
            let rows = read_after(conn, after, limit).unwrap();
            let Some(last) = rows.last() else { return out };
            after = last.seq;
            out.extend(rows);
        }
    }

    #[test]
    fn a_packed_trial_reads_back_as_its_seconds_from_anywhere() {
        let tmp = tempfile::tempdir().unwrap();
        drop(Store::create(tmp.path()).unwrap());
        let mut log = EventLog::open(tmp.path()).unwrap();
        let seconds = [
            "[0,400,0,0.1235,12.35]",
            "[1,401,2,0.1236,12.4,null,37.3,2048,12.5,80.1]",
            "[2,0,0,null,null,null,37.3]",
            "[3,17,0,0.0001234,1234567,9876543210,0,-0.5,100,0,0.25]",
        ];
        let mut rows: Vec<(f64, Option<usize>, &str, String)> = vec![(1.0, None, "run_start", "{}".into())];
        rows.push((2.0, Some(1), "trial_start", "{}".into()));
        for (i, b) in seconds.iter().enumerate() {
            rows.push((3.0 + i as f64 * 1.000123, Some(1), "second", b.to_string()));
            if i == 1 {
                rows.push((4.5, Some(1), "phase", "{}".into()));
                // A remote host's figures, packed with the seconds.
                rows.push((4.55, Some(1), "host", r#"["db",1.5,12.5,null,null,80]"#.into()));
            }
            if i % 2 == 0 {
                rows.push((4.6 + i as f64, Some(1), "probes", format!("{{\"n\":{i}}}")));
            }
        }
        log.append(&rows).unwrap();
        // Before its end is logged, its seconds stay as they are (of its probes' figures, the
        // last stays, whenever it is called).
        assert_eq!(log.pack_seconds(1).unwrap(), 0, "not before its end is logged");
        log.append(&[(9.0, Some(1), "trial_end", "{}".into()), (9.5, None, "run_end", "{}".into())])
            .unwrap();
        let before = all(&log.conn, 1000);
        assert_eq!(before.len(), 11);
        assert!(!before.iter().any(|r| r.body == r#"{"n":0}"#), "the first probes' figures went");
        assert_eq!(log.pack_seconds(1).unwrap(), 5);
        let kinds: Vec<String> = log
            .conn
            .prepare("SELECT kind FROM event ORDER BY seq")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(
            kinds,
            ["run_start", "trial_start", "seconds", "phase", "probes", "trial_end", "run_end"]
        );
        for limit in [1, 2, 3, 1000] {
            assert_eq!(all(&log.conn, limit), before, "in batches of {limit}");
        }
        for after in 0..14 {
            let want: Vec<&EventRow> = before.iter().filter(|r| r.seq > after).collect();
            let got = read_after(&log.conn, after, 1000).unwrap();
            assert_eq!(got.iter().collect::<Vec<_>>(), want, "after {after}");
        }
        assert_eq!(log.pack_seconds(1).unwrap(), 0, "packed once");
        // A longer trial: the pages its seconds took are given back.
        let mut rows: Vec<(f64, Option<usize>, &str, String)> = (0..300)
            .map(|i| {
                (
                    20.0 + f64::from(i),
                    Some(2),
                    "second",
                    format!("[{i},400,0,0.1235,12.35,null,37.3,2048.1,12.5,80.1]"),
                )
            })
            .collect();
        rows.push((400.0, Some(2), "trial_end", "{}".into()));
        log.append(&rows).unwrap();
        let before = all(&log.conn, 1000);
        let free = |log: &EventLog| -> i64 { log.conn.query_row("PRAGMA freelist_count", [], |r| r.get(0)).unwrap() };
        assert_eq!(log.pack_seconds(2).unwrap(), 300);
        assert!(free(&log) > 1, "{} pages freed", free(&log));
        log.shrink().unwrap();
        assert_eq!(free(&log), 0);
        assert_eq!(all(&log.conn, 7), before);
        assert!(unpack(1, Some(1), "AQ").is_err() && unpack(1, Some(1), "not base64!").is_err());
    }
}
