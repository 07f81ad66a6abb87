//! The `cpu` workload of a plan (`type = "cpu"`).

use super::config::{prepare, CpuConfig, Prepared};
use crate::util::Cancel;
use crate::workload::driver::coordinator::Hooks;
use crate::workload::{Primary, Produces, RunSpec, Workload, WorkloadResult};

/// The names of a cpu trial's metrics (`CpuReport::to_result`).
const METRICS: &[&str] = &[
    "ops_per_s",
    "ops_per_cpu_s",
    "load_asked_pct",
    "load_achieved_pct",
    "load_achieved_sd_pct",
    "machine_busy_pct",
    "worker*_load_pct",
    "*_ops_per_s",
    "*_ops_per_cpu_s",
    "methods_version",
    "ops",
    "errors",
    "op_p*_us",
    "op_p*_ms",
    "op_max_us",
    "op_max_ms",
];

pub struct CpuWorkload {
    p: Prepared,
}

impl CpuWorkload {
    pub fn new(cfg: &CpuConfig) -> anyhow::Result<CpuWorkload> {
        Ok(CpuWorkload { p: prepare(cfg)? })
    }
}

impl Workload for CpuWorkload {
    fn name(&self) -> String {
        "cpu".into()
    }

    /// Worker `j` is segment `j mod N`'s (the closed model's workers).
    fn segment(&mut self, segment: crate::model::Segment) -> Result<(), String> {
        let n = segment.share(self.p.workers as u64) as usize;
        if n == 0 {
            return Err(format!(
                "{} workers cannot be split into {} segments: each segment needs at least one",
                self.p.workers, segment.count
            ));
        }
        self.p.workers = n;
        Ok(())
    }

    fn facts(&self) -> Option<String> {
        Some(format!(
            "{} worker(s) on {} CPU(s) allowed, methods v{}",
            self.p.workers,
            self.p.cpus,
            super::methods::VERSION
        ))
    }

    fn primary(&self) -> Primary {
        // Declared once, with its key figures, in workload/figures.rs.
        crate::workload::figures::CPU.primary
    }

    fn metrics(&self) -> Produces {
        Produces::only([METRICS])
    }

    fn run(&mut self, spec: RunSpec, cancel: &Cancel, on_load_start: &mut dyn FnMut()) -> anyhow::Result<WorkloadResult> {
        let report = Hooks::cutover_only(on_load_start, |hooks| {
            super::engine::run(&self.p, spec.warmup, spec.load, cancel, hooks)
        })?;
        Ok(report.to_result().with_summary(&report.summary()))
    }
}
