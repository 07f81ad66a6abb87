//! `type = "mem"` and `perflab load mem`: the built-in memory load, in-process.

use super::config::MemConfig;
use super::workload::MemWorkload;
use crate::workload::registry::spec::{build_builtin, Key, LoadCommand, Locator, Settings, WorkloadKind};
use crate::workload::Workload;

pub struct Kind;

impl WorkloadKind for Kind {
    fn name(&self) -> &'static str {
        "mem"
    }

    fn summary(&self) -> &'static str {
        "perflab's built-in memory load, the options of `perflab load mem`. Primary figures: touch `touch_mib_per_s`; bandwidth `triad_mib_per_s` (method read: `read_mib_per_s`, write: `write_mib_per_s`); latency `accesses_per_s` and `access_latency_ns`."
    }

    fn keys(&self) -> &'static [Key] {
        MemConfig::KEYS
    }

    fn build(&self, table: toml::Table, loc: &dyn Locator) -> anyhow::Result<Box<dyn Workload>> {
        build_builtin(table, loc, MemWorkload::new)
    }

    fn load(&self) -> Option<LoadCommand> {
        Some(LoadCommand::of::<MemConfig>(
            "Load the memory: touch and hold (and verify) a region, STREAM bandwidth, or access latency",
        ))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_key_is_an_option_of_the_command() {
        crate::workload::registry::spec::assert_keys_are_options::<super::MemConfig>(&[]);
    }
}
