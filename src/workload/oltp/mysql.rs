//! MySQL and MariaDB as an OLTP [`Database`](super::backend::Database).

use super::backend::{Database, DbError, ErrorClass};

/// Open `mysql://user:password@host:port/dbname`.
pub fn open(url: &str) -> Result<Box<dyn Database>, DbError> {
    let _ = url;
    Err(DbError::new(ErrorClass::Other, "MySQL is not supported by this build"))
}
