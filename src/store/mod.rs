//! The store: one SQLite database per run (`runs/<timestamp>-<plan name>/perflab.db`), written trial
//! by trial in one transaction per trial, with a copy of the plan beside it. The schema is documented
//! in `docs/store.md`; every table exports to CSV (`export`).

pub mod cli;
mod codec;
pub mod export;
mod read;
pub mod reserve;
mod schema;
mod status;
mod write;

pub use codec::{decode_histogram, encode_histogram};
pub use read::{StoredPoint, StoredRun, StoredTrial};
pub use schema::SCHEMA_VERSION;
pub use status::{RunStatus, TrialFailure};
pub use write::{RunInfo, TaggedSample, TrialRecord};

use anyhow::Context;
use rusqlite::Connection;
use std::path::{Path, PathBuf};

/// The database file name inside a run directory.
pub const DB_FILE: &str = "perflab.db";

/// An open run store.
pub struct Store {
    conn: Connection,
    dir: PathBuf,
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
        Ok(Store {
            conn,
            dir: dir.to_path_buf(),
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
        schema::check(&conn)?;
        Ok(Store {
            conn,
            dir: dir.to_path_buf(),
        })
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

/// Redact values that must never be stored: Authorization and Cookie headers, anywhere in a string
/// of `Name: value` lines, a shell word (`-H 'Cookie: a=1'`), or a JSON / TOML rendering that
/// carries them (`"Authorization": "…"`, `Authorization = "…"`).
pub fn redact(text: &str) -> String {
    use std::sync::OnceLock;
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r#"(?i)((?:proxy-)?authorization|cookie|set-cookie)(["']?\s*[:=]\s*["']?)([^"'\r\n,\]]*)"#).expect("static regex")
    });
    re.replace_all(text, "${1}${2}[redacted]").into_owned()
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn redacts_credentials() {
        assert_eq!(redact("Authorization: Bearer abc"), "Authorization: [redacted]");
        assert_eq!(
            redact(r#"headers = ["Cookie: a=1", "X-Y: z"]"#),
            r#"headers = ["Cookie: [redacted]", "X-Y: z"]"#
        );
        assert_eq!(redact("Accept: */*"), "Accept: */*");
        assert_eq!(
            redact(r#"{"Authorization": "Bearer abc", "x": 1}"#),
            r#"{"Authorization": "[redacted]", "x": 1}"#
        );
        assert_eq!(
            redact("curl -H 'Cookie: sid=abc' http://127.0.0.1/"),
            "curl -H 'Cookie: [redacted]' http://127.0.0.1/"
        );
        assert_eq!(
            redact(r#"headers = { authorization = "Basic dXNlcjpw" }"#),
            r#"headers = { authorization = "[redacted]" }"#
        );
    }
}
