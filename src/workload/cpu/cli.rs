//! `perflab load cpu`: the settings as options, the common flags, the live line and the summary.

use super::config::{prepare, CpuConfig};
use crate::workload::driver::live::{run_load, LoadFlags};
use crate::workload::registry::spec::LoadRun;

impl LoadRun for CpuConfig {
    fn run(self, flags: LoadFlags) -> anyhow::Result<i32> {
        let p = prepare(&self)?;
        run_load(&flags, "ops", |warmup, duration, cancel, hooks| {
            super::engine::run(&p, warmup, duration, cancel, hooks)
        })
    }

    fn workload(self) -> anyhow::Result<toml::Table> {
        prepare(&self)?;
        crate::workload::registry::spec::as_table(&self)
    }
}
