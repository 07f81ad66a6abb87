//! `type = "oltp"`: the built-in OLTP load (`perflab load oltp`): sysbench's tables and scenarios
//! on SQLite, PostgreSQL or MySQL/MariaDB.

use super::{build_builtin, Key, Locator, WorkloadKind};
use crate::workload::oltp::workload::OltpWorkload;
use crate::workload::Workload;

pub struct Kind;

const KEYS: &[Key] = &[
    Key { name: "db", ty: "string (`\"sqlite:PATH\"`, `\"postgres://user:password@host:port/db\"`, `\"mysql://...\"`)", default: "a SQLite file `oltp.db` in the run directory", doc: "the database; a password in the URL is kept out of the store, the report and every message" },
    Key { name: "scenario", ty: "`\"point_select\"`, `\"read_only\"`, `\"read_write\"`, `\"write_only\"`, `\"update_index\"`, `\"update_non_index\"`, `\"insert\"` or `\"delete\"`", default: "`\"read_write\"`", doc: "sysbench's `oltp_*` script of that name: its statement mix, one transaction per event" },
    Key { name: "tables", ty: "integer from 1 to 1024", default: "`1`", doc: "tables `sbtest1`..`sbtestN`; each group of statements picks one uniformly" },
    Key { name: "table_size", ty: "integer ≥ 1", default: "`10000`", doc: "rows per table (ids 1..=table_size)" },
    Key { name: "threads", ty: "integer from 1 to 4096", default: "`1`", doc: "worker threads, one connection each" },
    Key { name: "rate", ty: "number > 0", default: "none (closed model)", doc: "open model: transactions per second over all threads, latency from each one's intended start" },
    Key { name: "transactions", ty: "integer ≥ 1", default: "none (time-based)", doc: "stop after this many measured transactions over all threads" },
    Key { name: "range_size", ty: "integer ≥ 1", default: "`100`", doc: "ids per range select" },
    Key { name: "point_selects", ty: "integer ≥ 0", default: "`10`", doc: "point selects per transaction (read_only, read_write)" },
    Key { name: "simple_ranges", ty: "integer ≥ 0", default: "`1`", doc: "range selects per transaction" },
    Key { name: "sum_ranges", ty: "integer ≥ 0", default: "`1`", doc: "SUM(k) range selects per transaction" },
    Key { name: "order_ranges", ty: "integer ≥ 0", default: "`1`", doc: "ORDER BY range selects per transaction" },
    Key { name: "distinct_ranges", ty: "integer ≥ 0", default: "`1`", doc: "DISTINCT range selects per transaction" },
    Key { name: "index_updates", ty: "integer ≥ 0", default: "`1`", doc: "`k = k + 1` updates per transaction (read_write, write_only, update_index)" },
    Key { name: "non_index_updates", ty: "integer ≥ 0", default: "`1`", doc: "updates of `c` per transaction (read_write, write_only, update_non_index)" },
    Key { name: "delete_inserts", ty: "integer ≥ 0", default: "`1`", doc: "deletes of an id followed by an insert of the same id, per transaction" },
    Key { name: "skip_trx", ty: "bool", default: "`false`", doc: "no BEGIN/COMMIT: each statement commits by itself" },
    Key { name: "prepare", ty: "`\"auto\"`, `\"always\"` or `\"never\"`", default: "`\"auto\"`", doc: "create and load the tables before the trial: when one is missing or not of `table_size` rows, always, or never (a missing table fails the trial)" },
    Key { name: "cleanup", ty: "bool", default: "`false`", doc: "drop the tables at the end of each trial (kept by default, so the next trial reuses them)" },
    Key { name: "seed", ty: "integer", default: "`1`", doc: "seed of the ids and strings each thread draws" },
    Key { name: "rand_type", ty: "`\"uniform\"` or `\"special\"`", default: "`\"uniform\"`", doc: "how ids are drawn; `special` is sysbench's default (75 % of the draws in 1 % of the ids)" },
];

impl WorkloadKind for Kind {
    fn name(&self) -> &'static str {
        "oltp"
    }

    fn summary(&self) -> &'static str {
        "perflab's built-in OLTP load, the options of `perflab load oltp`: sysbench's tables and transaction mixes on SQLite (nothing to install), PostgreSQL or MySQL/MariaDB, with errors counted by class. Primary figures: `transactions_per_s` and the p99 of the merged `latency` histogram (`latency_p99_ms`)."
    }

    fn keys(&self) -> &'static [Key] {
        KEYS
    }

    fn build(&self, table: toml::Table, loc: &dyn Locator) -> anyhow::Result<Box<dyn Workload>> {
        build_builtin(table, KEYS, loc, OltpWorkload::new)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_declared_keys_are_what_the_config_decodes() {
        super::super::assert_declared_keys::<crate::workload::oltp::config::OltpConfig>(super::KEYS);
    }
}
