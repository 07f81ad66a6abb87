//! `type = "cpu"`: the built-in CPU load (`perflab load cpu`), in-process.

use super::{build_builtin, Key, Locator, WorkloadKind};
use crate::workload::cpu::workload::CpuWorkload;
use crate::workload::Workload;

pub struct Kind;

const KEYS: &[Key] = &[
    Key { name: "workers", ty: "integer ≥ 1", default: "one per CPU the process may use", doc: "worker threads; more than the CPUs allowed needs `oversubscribe = true`" },
    Key { name: "load", ty: "number from 1 to 100", default: "`100`", doc: "% of each worker's CPU, held by a closed loop on its measured thread CPU time" },
    Key { name: "method", ty: "`\"int\"`, `\"float\"`, `\"matrix\"`, `\"hash\"` or `\"mix\"`", default: "`\"mix\"`", doc: "the work of one operation (`mix`: each in turn)" },
    Key { name: "oversubscribe", ty: "bool", default: "`false`", doc: "allow more workers than the CPUs this process may use" },
];

impl WorkloadKind for Kind {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn summary(&self) -> &'static str {
        "perflab's built-in CPU load, the options of `perflab load cpu`: the load asked and achieved per worker and the work done per method. Primary figures: `ops_per_s` and the p99 of the merged `op` histogram (`op_p99_us`)."
    }

    fn keys(&self) -> &'static [Key] {
        KEYS
    }

    fn build(&self, table: toml::Table, loc: &dyn Locator) -> anyhow::Result<Box<dyn Workload>> {
        build_builtin(table, KEYS, loc, CpuWorkload::new)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_declared_keys_are_what_the_config_decodes() {
        super::super::assert_declared_keys::<crate::workload::cpu::config::CpuConfig>(super::KEYS);
    }
}
