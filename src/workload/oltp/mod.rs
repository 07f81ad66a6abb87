//! The built-in OLTP workload (`type = "oltp"`, `perflab load oltp`): sysbench's tables and
//! transaction mixes against SQLite (nothing to install), PostgreSQL or MySQL/MariaDB, on the load
//! driver. Each database is a [`backend::Database`]; the scenarios are written once against
//! [`backend::Conn`].

pub mod backend;
pub mod mysql;
pub mod pg;
