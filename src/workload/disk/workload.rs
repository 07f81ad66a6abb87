//! The `disk` workload of a plan (`type = "disk"`).

use super::config::{prepare, DiskConfig, Prepared};
use crate::util::Cancel;
use crate::workload::driver::coordinator::Hooks;
use crate::workload::{Primary, Produces, RunSpec, Unmet, Workload, WorkloadResult};

/// The names of a disk trial's metrics (`DiskReport::to_result`).
const METRICS: &[&str] = &[
    "iops",
    "mib_per_s",
    "read_iops",
    "write_iops",
    "read_mib_per_s",
    "write_mib_per_s",
    "read_ops",
    "write_ops",
    "read_lat_p*_us",
    "write_lat_p*_us",
    "fsyncs",
    "cpu_us_per_io",
    "errors",
    "io_uring",
];

pub struct DiskWorkload {
    p: Prepared,
}

impl DiskWorkload {
    pub fn new(cfg: &DiskConfig) -> anyhow::Result<DiskWorkload> {
        Ok(DiskWorkload { p: prepare(cfg)? })
    }
}

impl Workload for DiskWorkload {
    fn name(&self) -> String {
        "disk".into()
    }

    /// Job `j` is segment `j mod N`'s, with the offsets of that job of the whole load; `ops` are
    /// split to sum to the whole.
    fn segment(&mut self, segment: crate::model::Segment) -> Result<(), String> {
        self.p = self.p.segmented(segment)?;
        Ok(())
    }

    fn facts(&self) -> Option<String> {
        let p = &self.p;
        let engine = match super::engine::choose(p) {
            Ok(e) => e.note().map_or(e.name().to_string(), |n| format!("sync ({n})")),
            Err(e) => format!("{e:#}"),
        };
        let keep = if p.keep { "kept" } else { "removed after the run" };
        Some(format!(
            "{} of {} B × QD {} × {} job(s) on {} ({}, {} = {} B, {}, laid out before the run and {keep}), engine {engine}",
            p.rw.name(),
            p.bs,
            p.iodepth,
            p.jobs,
            p.target.path().display(),
            p.fs,
            crate::workload::mem::size::human(p.size),
            p.size,
            if p.direct { "direct" } else { "buffered" },
        ))
    }

    fn primary(&self) -> Primary {
        if self.p.rw.reads() {
            Primary {
                throughput: &["iops"],
                latency: &["read_lat_p99_us"],
                latency_histogram: Some("read"),
            }
        } else {
            Primary {
                throughput: &["iops"],
                latency: &["write_lat_p99_us"],
                latency_histogram: Some("write"),
            }
        }
    }

    fn metrics(&self) -> Produces {
        Produces::only([METRICS])
    }

    fn preflight(&self) -> Result<(), Unmet> {
        super::engine::choose(&self.p).map(drop).map_err(|error| Unmet {
            key: Some("engine"),
            error,
        })
    }

    fn run(&mut self, spec: RunSpec, cancel: &Cancel, on_load_start: &mut dyn FnMut()) -> anyhow::Result<WorkloadResult> {
        let report = Hooks::cutover_only(on_load_start, |hooks| {
            super::engine::run(&self.p, spec.warmup, spec.load, cancel, hooks)
        })?;
        Ok(report.to_result().with_summary(&report.summary()))
    }
}
