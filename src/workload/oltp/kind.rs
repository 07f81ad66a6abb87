//! `type = "oltp"` and `perflab load oltp`: the built-in OLTP load: sysbench's tables and
//! scenarios on SQLite, PostgreSQL or MySQL/MariaDB.

use super::config::OltpConfig;
use super::workload::OltpWorkload;
use crate::workload::registry::spec::{build_builtin, Key, LoadCommand, Locator, Settings, WorkloadKind};
use crate::workload::Workload;

pub struct Kind;

impl WorkloadKind for Kind {
    fn name(&self) -> &'static str {
        "oltp"
    }

    fn summary(&self) -> &'static str {
        "perflab's built-in OLTP load, the options of `perflab load oltp`: sysbench's tables and transaction mixes on SQLite (nothing to install), PostgreSQL or MySQL/MariaDB, with errors counted by class. Primary figures: `transactions_per_s` and the p99 of the merged `latency` histogram (`latency_p99_ms`)."
    }

    fn keys(&self) -> &'static [Key] {
        OltpConfig::KEYS
    }

    fn build(&self, table: toml::Table, loc: &dyn Locator) -> anyhow::Result<Box<dyn Workload>> {
        build_builtin(table, loc, OltpWorkload::new)
    }

    fn load(&self) -> Option<LoadCommand> {
        Some(LoadCommand::of::<super::cli::OltpArgs>(
            "Load a database with sysbench's OLTP transactions: SQLite (default), PostgreSQL, MySQL/MariaDB",
        ))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_key_is_an_option_of_the_command() {
        crate::workload::registry::spec::assert_keys_are_options::<super::OltpConfig>(&[]);
    }
}
