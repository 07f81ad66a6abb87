//! `perflab load disk`: the settings as options, the common flags, the live line and the summary.

use super::config::{prepare, DiskConfig};
use crate::workload::driver::live::{run_load, LoadFlags};
use crate::workload::registry::spec::LoadRun;

impl LoadRun for DiskConfig {
    fn run(self, flags: LoadFlags) -> anyhow::Result<i32> {
        check_dir(&self)?;
        flags.durations()?;
        let p = prepare(&self)?;
        run_load(&flags, "IO", |warmup, duration, cancel, hooks| {
            super::engine::run(&p, warmup, duration, cancel, hooks)
        })
    }

    fn workload(self) -> anyhow::Result<toml::Table> {
        check_dir(&self)?;
        prepare(&self)?;
        crate::workload::registry::spec::as_table(&self)
    }
}

/// The file's directory must be there: perflab makes the file, not the directories above it.
fn check_dir(cfg: &DiskConfig) -> anyhow::Result<()> {
    if let Some(dir) = cfg.file.as_deref().map(std::path::Path::new).and_then(std::path::Path::parent) {
        if !dir.as_os_str().is_empty() && !dir.is_dir() {
            return Err(crate::error::usage(format!(
                "--file {}: no such directory {}",
                crate::util::text::clip(cfg.file.as_deref().unwrap_or_default()),
                crate::util::text::clip(&dir.display().to_string())
            )));
        }
    }
    Ok(())
}
