//! PostgreSQL as an OLTP [`Database`](super::backend::Database).

use super::backend::{Database, DbError, ErrorClass};

/// Open `postgres://user:password@host:port/dbname`.
pub fn open(url: &str) -> Result<Box<dyn Database>, DbError> {
    let _ = url;
    Err(DbError::new(ErrorClass::Other, "PostgreSQL is not supported by this build"))
}
