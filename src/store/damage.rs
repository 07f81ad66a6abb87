//! A damaged store in the user's words: which table, trial or value is wrong, and what to do
//! (`perflab store check`, a copy, the plan run again), as one line with exit code 3
//! (`error::damaged`), never SQLite's or a decoder's own text. What is not damage (a full disk,
//! a store locked by another process, no permission) says so, and is exit code 1.

use super::layout::{self, Col, Ty};
use rusqlite::types::{Type, ValueRef};
use rusqlite::ErrorCode;
use std::fmt::Display;
use std::path::Path;

/// `DIR/perflab.db: WHAT; the store is damaged: ...` (exit code 3).
pub fn damaged(dir: &Path, what: impl Display) -> anyhow::Error {
    crate::error::damaged(format!(
        "{}: {what}; the store is damaged: `perflab store check {}` lists what is wrong; restore it from a copy or run the plan again",
        dir.join(super::DB_FILE).display(),
        dir.display()
    ))
}

/// Where in the store a read went wrong: the rows of `table`, of one trial when known.
#[derive(Clone, Copy, Debug)]
pub struct Place<'a> {
    pub table: &'a str,
    pub trial: Option<i64>,
}

impl Display for Place<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.table, self.trial) {
            ("trial", Some(t)) => write!(f, "trial {t}"),
            (table, Some(t)) => write!(f, "trial {t}'s {}", layout::rows_of(table)),
            ("run", None) => f.write_str("the run's facts (table run)"),
            ("meta", None) => f.write_str("the run's facts (table meta)"),
            ("", None) => f.write_str("the store"),
            (table, None) => write!(f, "table {table}"),
        }
    }
}

/// An error met reading `place` of the store in `dir`, as one line: damage (exit code 3), or what
/// else kept it from being read (exit code 1). An error that is not SQLite's is kept as it is
/// when it already says what is wrong (a damaged-store error), else worded as damage at `place`.
pub fn read_error(dir: &Path, place: Place<'_>, e: anyhow::Error) -> anyhow::Error {
    if e.chain().any(|c| c.is::<crate::error::DamagedStore>()) {
        return e;
    }
    let db = dir.join(super::DB_FILE);
    if let Some(sql) = e.chain().find_map(|c| c.downcast_ref::<rusqlite::Error>()) {
        if let Some(why) = not_damage(sql, dir) {
            return anyhow::anyhow!("{}: {why}", db.display());
        }
        let what = words(place.table, sql);
        // Damage to the file as a whole is not the table's being read.
        if matches!(sql.sqlite_error_code(), Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt)) {
            return damaged(dir, what);
        }
        return damaged(dir, format!("{place}: {what}"));
    }
    damaged(dir, format!("{place}: {}", crate::error::one_line(&e)))
}

/// `e` as one line when SQLite's error is in it (an error a read site did not word: the store
/// in `dir` is named, and what kept it from being read); any other error as it is.
pub fn explain(dir: &Path, e: anyhow::Error) -> anyhow::Error {
    if e.chain().any(|c| c.is::<rusqlite::Error>()) {
        read_error(dir, Place { table: "", trial: None }, e)
    } else {
        e
    }
}

/// A SQLite error that is not damage (the disk, a lock, a permission), in words. An I/O error on
/// a file system with no room left is the full disk (SQLite cannot grow its `-shm` file there).
fn not_damage(e: &rusqlite::Error, dir: &Path) -> Option<String> {
    let code = e.sqlite_error_code()?;
    let full = code == ErrorCode::DiskFull || (code == ErrorCode::SystemIoFailure && free_bytes(dir).is_some_and(|b| b < 64 * 1024));
    Some(
        match code {
            _ if full => {
                "no room left on its device (SQLite writes beside the store, its -wal and -shm files, even to read it); free some space and try again"
            }
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => "another process holds the store locked; try again once it is done",
            ErrorCode::CannotOpen | ErrorCode::PermissionDenied | ErrorCode::ReadOnly => {
                "cannot be opened: check the permissions of the file and of its directory (SQLite writes beside it)"
            }
            ErrorCode::SystemIoFailure => "the device it is on reported a read error",
            ErrorCode::OutOfMemory => "not enough memory to read it",
            _ => return None,
        }
        .to_string(),
    )
}

/// The bytes an unprivileged process can still write on the file system of `dir`.
fn free_bytes(dir: &Path) -> Option<u64> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs is a C struct of integers, for which all-zero bytes are a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a valid, writable statvfs for the whole call.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

/// What is wrong, for a SQLite error that is damage. `table` says what belongs in a column.
pub fn words(table: &str, e: &rusqlite::Error) -> String {
    use rusqlite::Error as E;
    match e {
        E::InvalidColumnType(_, col, actual) => {
            let expected = layout::column(table, col).map_or("another kind of value", |c| c.ty.words());
            format!("column {col} holds {} where {expected} belongs", type_words(*actual))
        }
        E::FromSqlConversionFailure(_, _, inner) if inner.is::<std::str::Utf8Error>() => {
            "a text value is not valid UTF-8 (its bytes were altered)".to_string()
        }
        E::FromSqlConversionFailure(_, ty, inner) => format!("a value ({}) cannot be read: {inner}", type_words(*ty)),
        E::IntegralValueOutOfRange(_, v) => format!("the number {v} is out of range"),
        E::Utf8Error(_, _) => "a text value is not valid UTF-8 (its bytes were altered)".to_string(),
        E::QueryReturnedNoRows => "a row is missing".to_string(),
        E::SqliteFailure(f, msg) => {
            let msg = msg.as_deref().unwrap_or("");
            if let Some(t) = msg.strip_prefix("no such table: ") {
                format!("table {t} is missing")
            } else if let Some(c) = msg.strip_prefix("no such column: ") {
                format!("column {c} is missing")
            } else {
                match f.code {
                    ErrorCode::NotADatabase => "the file is not a SQLite database (cut short or overwritten)".to_string(),
                    ErrorCode::DatabaseCorrupt => "the database file is corrupt (SQLite finds its pages inconsistent)".to_string(),
                    _ => "SQLite cannot read it (its tables are not as perflab made them)".to_string(),
                }
            }
        }
        _ => "it cannot be read as perflab wrote it".to_string(),
    }
}

/// What is wrong with the value `v` of column `c`, if anything: `column value holds text where a
/// number belongs` (NULL only where the column may be empty; text in UTF-8). The one wording of a
/// value of the wrong kind, whoever finds it (a report, an export, `perflab store check`).
pub fn misfit(c: &Col, v: ValueRef<'_>) -> Option<String> {
    let holds = match (c.ty, v) {
        (_, ValueRef::Null) if c.null => return None,
        (Ty::Int, ValueRef::Integer(_)) | (Ty::Real, ValueRef::Integer(_) | ValueRef::Real(_)) | (Ty::Blob, ValueRef::Blob(_)) => {
            return None
        }
        (Ty::Text, ValueRef::Text(t)) => {
            return std::str::from_utf8(t)
                .err()
                .map(|_| format!("column {} holds text that is not valid UTF-8 (its bytes were altered)", c.name))
        }
        (_, other) => type_words(other.data_type()),
    };
    Some(format!("column {} holds {holds} where {} belongs", c.name, c.ty.words()))
}

/// The first value of the row `r` of `table` that is not of its column's kind, in words (`misfit`).
pub fn row_misfit(table: &str, r: &rusqlite::Row<'_>) -> Option<String> {
    let st = r.as_ref();
    (0..st.column_count()).find_map(|i| {
        let c = layout::column(table, st.column_name(i).ok()?)?;
        misfit(&c, r.get_ref(i).ok()?)
    })
}

/// What is wrong with a histogram whose bytes do not decode.
pub fn histogram(name: &str) -> String {
    format!("histogram {name} cannot be decoded (its bytes are not the HdrHistogram encoding perflab writes)")
}

/// A short quote of stored text, for a message.
pub fn quoted(t: &[u8]) -> String {
    let s = String::from_utf8_lossy(t);
    let short: String = s.chars().take(24).collect();
    let more = if short.len() < s.len() { "…" } else { "" };
    format!("{:?}", format!("{short}{more}"))
}

/// "text", "nothing (NULL)", ... for a value SQLite holds.
pub fn type_words(t: Type) -> &'static str {
    match t {
        Type::Null => "nothing (NULL)",
        Type::Integer => "a whole number",
        Type::Real => "a number",
        Type::Text => "text",
        Type::Blob => "bytes",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_and_words_name_the_trial_and_what_belongs() {
        let p = Place {
            table: "metric",
            trial: Some(3),
        };
        assert_eq!(p.to_string(), "trial 3's metrics");
        let e = rusqlite::Error::InvalidColumnType(3, "value".into(), Type::Text);
        assert_eq!(words("metric", &e), "column value holds text where a number belongs");
        let e = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(1), Some("no such table: histogram".into()));
        assert_eq!(words("histogram", &e), "table histogram is missing");
        let full = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(13), None);
        let e = read_error(Path::new("runs/x"), p, full.into());
        assert_eq!(crate::error::exit_code(&e), 1, "a full disk is not damage");
        assert!(e.to_string().starts_with("runs/x/perflab.db: no room left"), "{e}");
        let e = read_error(Path::new("runs/x"), p, rusqlite::Error::QueryReturnedNoRows.into());
        assert_eq!(crate::error::exit_code(&e), 3);
        assert!(
            e.to_string()
                .starts_with("runs/x/perflab.db: trial 3's metrics: a row is missing; the store is damaged"),
            "{e}"
        );
    }
}
