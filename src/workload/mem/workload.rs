//! The `mem` workload of a plan (`type = "mem"`).

use super::config::{prepare, MemConfig, Method, Mode};
use super::size::{available, human};
use crate::util::Cancel;
use crate::workload::driver::coordinator::Hooks;
use crate::workload::{Primary, Produces, RunSpec, Workload, WorkloadResult};

/// The names of a mem trial's metrics (`MemReport::to_result`), every mode.
const METRICS: &[&str] = &[
    "touched_mib",
    "touch_mib_per_s",
    "verify_errors",
    "verify_patterns_run",
    "verify_patterns_failed",
    "pattern_*_errors",
    "copy_mib_per_s",
    "scale_mib_per_s",
    "add_mib_per_s",
    "triad_mib_per_s",
    "read_mib_per_s",
    "write_mib_per_s",
    "array_mib",
    "block_mib",
    "passes",
    "access_latency_ns",
    "access_latency_min_ns",
    "accesses_per_s",
    "working_set_mib",
    "ops",
    "errors",
    "op_p*_ms",
    "op_p*_us",
    "op_max_ms",
    "op_max_us",
];

pub struct MemWorkload {
    mode: Mode,
}

impl MemWorkload {
    pub fn new(cfg: &MemConfig) -> anyhow::Result<MemWorkload> {
        Ok(MemWorkload {
            mode: prepare(cfg, available())?,
        })
    }
}

impl Workload for MemWorkload {
    fn name(&self) -> String {
        format!("mem:{}", self.mode.name())
    }

    /// Bandwidth: worker `j` is segment `j mod N`'s; touch and latency run one worker, which
    /// only the whole load has.
    fn segment(&mut self, segment: crate::model::Segment) -> Result<(), String> {
        if segment.is_whole() {
            return Ok(());
        }
        let super::config::Mode::Bandwidth { workers, .. } = &mut self.mode else {
            return Err(format!(
                "mode = \"{}\" runs one worker: it cannot be split into segments",
                self.mode.name()
            ));
        };
        let n = segment.share(*workers as u64) as usize;
        if n == 0 {
            return Err(format!(
                "{workers} workers cannot be split into {} segments: each segment needs at least one",
                segment.count
            ));
        }
        *workers = n;
        Ok(())
    }

    fn facts(&self) -> Option<String> {
        Some(match &self.mode {
            Mode::Touch { bytes, verify } => format!(
                "touch: allocate and touch {}, hold it through the load phase{}",
                human(*bytes),
                if *verify { ", then memtester's pattern tests over it" } else { "" }
            ),
            Mode::Bandwidth {
                workers,
                array_bytes,
                method: m @ (Method::Read | Method::Write),
                ..
            } => format!(
                "bandwidth: a sequential {} of every 8-byte word of one block of {} per worker, {workers} worker(s), one pass per operation",
                m.name(),
                human(*array_bytes)
            ),
            Mode::Bandwidth {
                workers, array_bytes, llc, ..
            } => format!(
                "bandwidth: STREAM copy/scale/add/triad, {workers} worker(s) × 3 arrays of {} (last-level cache {}), best of the iterations",
                human(*array_bytes),
                llc.map_or("unknown".into(), human)
            ),
            Mode::Latency { bytes } => format!("latency: a dependent random pointer chase over {}", human(*bytes)),
        })
    }

    fn primary(&self) -> Primary {
        let (throughput, latency): (&'static [&'static str], &'static [&'static str]) = match self.mode {
            Mode::Touch { .. } => (&["touch_mib_per_s"], &[]),
            Mode::Bandwidth { method: Method::Read, .. } => (&["read_mib_per_s"], &[]),
            Mode::Bandwidth { method: Method::Write, .. } => (&["write_mib_per_s"], &[]),
            Mode::Bandwidth { .. } => (&["triad_mib_per_s"], &[]),
            Mode::Latency { .. } => (&["accesses_per_s"], &["access_latency_ns"]),
        };
        Primary {
            throughput,
            latency,
            latency_histogram: None,
        }
    }

    fn metrics(&self) -> Produces {
        Produces::only([METRICS])
    }

    fn run(&mut self, spec: RunSpec, cancel: &Cancel, on_load_start: &mut dyn FnMut()) -> anyhow::Result<WorkloadResult> {
        let report = Hooks::cutover_only(on_load_start, |hooks| {
            super::engine::run(&self.mode, spec.warmup, spec.load, cancel, hooks)
        })?;
        Ok(report.to_result().with_summary(&report.summary()))
    }
}
