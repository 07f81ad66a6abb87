//! `perflab load mem`: the settings as options, the common flags, the live line and the summary.

use super::config::{prepare, MemConfig};
use super::size::available;
use crate::workload::driver::live::{run_load, LoadFlags};
use crate::workload::registry::spec::LoadRun;

impl LoadRun for MemConfig {
    fn run(self, flags: LoadFlags) -> anyhow::Result<i32> {
        let mode = prepare(&self, available())?;
        run_load(&flags, "ops", |warmup, duration, cancel, hooks| {
            super::engine::run(&mode, warmup, duration, cancel, hooks)
        })
    }

    fn workload(self) -> anyhow::Result<toml::Table> {
        prepare(&self, available())?;
        crate::workload::registry::spec::as_table(&self)
    }
}
