//! The built-in OLTP workload (`type = "oltp"`, `perflab load oltp`): sysbench's tables and
//! transaction mixes against SQLite (nothing to install), PostgreSQL or MySQL/MariaDB, on the load
//! driver. Each database is a [`backend::Database`]; the scenarios are written once against
//! [`backend::Conn`].
//!
//! - [`config`]: the settings; [`scenario`]: sysbench's statement mixes, ids and strings;
//! - [`prepare`]: the tables' creation and bulk load, before the measured phase;
//! - [`op`]: one worker's [`Operation`](crate::workload::driver::ops::Operation), one call one
//!   transaction, with retries, reconnects and error classes; [`stats`]: what it counts;
//! - [`engine`] runs them on the driver, [`report`] turns the run into figures, [`workload`] is the
//!   plan's workload and [`cli`] `perflab load oltp`.

pub mod backend;
pub mod cli;
pub mod config;
pub mod db_url;
pub mod engine;
pub mod kind;
pub mod mysql;
mod mysql_io;
pub mod mysql_wire;
pub mod op;
pub mod pg;
mod pg_start;
mod pg_wire;
pub mod prepare;
pub mod report;
pub mod scenario;
pub mod sqlite;
pub mod stats;
mod text;
pub mod tls;
pub mod workload;

pub use kind::Kind;

use backend::{Database, DbError, ErrorClass};

/// Open the database a `db` URL names: `sqlite:PATH`, `postgres://` or `postgresql://`,
/// `mysql://` or `mariadb://`.
pub fn open(url: &str) -> Result<Box<dyn Database>, DbError> {
    if let Some(path) = url.strip_prefix("sqlite:") {
        return sqlite::open(path.strip_prefix("//").unwrap_or(path));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return pg::open(url);
    }
    if url.starts_with("mysql://") || url.starts_with("mariadb://") {
        return mysql::open(url);
    }
    Err(DbError::new(
        ErrorClass::Other,
        format!(
            "unknown database URL \"{}\" (use sqlite:PATH, postgres://... or mysql://...)",
            redact_url(url)
        ),
    ))
}

pub use crate::util::redact::{redact_url, url_password};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_taken_out_of_urls() {
        assert_eq!(
            redact_url("postgres://bob:s3cr@t@127.0.0.1:5432/db"),
            "postgres://bob:[redacted]@127.0.0.1:5432/db"
        );
        assert_eq!(redact_url("mysql://bob@h/db"), "mysql://bob@h/db");
        assert_eq!(
            redact_url("postgres://h/db?user=a&password=xyz&x=1"),
            "postgres://h/db?user=a&password=[redacted]&x=1"
        );
        assert_eq!(redact_url("sqlite:/tmp/a.db"), "sqlite:/tmp/a.db");
        assert_eq!(url_password("postgres://bob:s3cr@t@h/db").as_deref(), Some("s3cr@t"));
        assert_eq!(url_password("mysql://bob@h/db"), None);
        assert!(open("oracle://x").is_err());
        assert!(open("oracle://bob:pw@127.0.0.1/db").is_err_and(|e| !e.to_string().contains(":pw@")));
    }
}
