//! `type = "cpu"` and `perflab load cpu`: the built-in CPU load, in-process.

use super::config::CpuConfig;
use super::workload::CpuWorkload;
use crate::workload::registry::spec::{build_builtin, Key, LoadCommand, Locator, Settings, WorkloadKind};
use crate::workload::Workload;

pub struct Kind;

impl WorkloadKind for Kind {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn summary(&self) -> &'static str {
        "perflab's built-in CPU load, the options of `perflab load cpu`: the load asked and achieved per worker and the work done per method. Primary figures: `ops_per_s` and the p99 of the merged `op` histogram (`op_p99_us`)."
    }

    fn keys(&self) -> &'static [Key] {
        CpuConfig::KEYS
    }

    fn build(&self, table: toml::Table, loc: &dyn Locator) -> anyhow::Result<Box<dyn Workload>> {
        build_builtin(table, loc, CpuWorkload::new)
    }

    fn load(&self) -> Option<LoadCommand> {
        Some(LoadCommand::of::<CpuConfig>(
            "Load the CPUs: workers at a load % each, held by their measured thread CPU time",
        ))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_key_is_an_option_of_the_command() {
        crate::workload::registry::spec::assert_keys_are_options::<super::CpuConfig>(&[]);
    }
}
