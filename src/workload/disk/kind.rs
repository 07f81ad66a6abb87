//! `type = "disk"` and `perflab load disk`: the built-in disk load, in-process.

use super::config::DiskConfig;
use super::workload::DiskWorkload;
use crate::workload::registry::spec::{build_builtin, Key, LoadCommand, Locator, Settings, WorkloadKind};
use crate::workload::Workload;

pub struct Kind;

impl WorkloadKind for Kind {
    fn name(&self) -> &'static str {
        "disk"
    }

    fn summary(&self) -> &'static str {
        "perflab's built-in disk load, the options of `perflab load disk` (fio's jobs): IOPS, MiB/s and submission-to-completion latency per direction. Primary figures: `iops` and the p99 of the `read` histogram (`read_lat_p99_us`), or of `write` for write-only patterns."
    }

    fn keys(&self) -> &'static [Key] {
        DiskConfig::KEYS
    }

    fn build(&self, table: toml::Table, loc: &dyn Locator) -> anyhow::Result<Box<dyn Workload>> {
        build_builtin(table, loc, DiskWorkload::new)
    }

    fn load(&self) -> Option<LoadCommand> {
        Some(LoadCommand::of::<DiskConfig>(
            "Load a disk: fio's jobs (rw, bs, iodepth, jobs) on a file laid out first, io_uring or sync",
        ))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_key_is_an_option_of_the_command() {
        crate::workload::registry::spec::assert_keys_are_options::<super::DiskConfig>(&[]);
    }
}
