//! What a `disk` run measured: per direction the operations, IOPS, MiB/s and the latency from
//! submission to completion (HDR histograms), the engine used, the CPU per I/O and the kernel's
//! own count of the bytes the jobs moved; as a human summary, JSON (`perflab.load.disk/1`,
//! docs/load.md) and a plan trial's metrics.

use super::config::Prepared;
use super::job::{Dir, JobStats, KernelIo};
use crate::workload::driver::interval::Tick;
use crate::workload::mem::size::human;
use crate::workload::result::{quantile_metrics, value_at};
use crate::workload::{Better, Metric, MetricKind, NamedHistogram, SeriesPoint, WorkloadResult};
use serde::Serialize;
use std::fmt::Write;
use std::time::Duration;

/// The JSON schema's name and version.
pub const SCHEMA: &str = "perflab.load.disk/1";

/// The engine a run used.
#[derive(Clone, Debug, PartialEq)]
pub enum Engine {
    IoUring,
    /// Synchronous pread/pwrite, one thread per operation in flight; `reason` when io_uring was
    /// asked for (`auto`) but not allowed.
    Sync {
        reason: Option<String>,
    },
}

impl Engine {
    pub fn name(&self) -> &'static str {
        match self {
            Engine::IoUring => "io_uring",
            Engine::Sync { .. } => "sync",
        }
    }

    pub fn note(&self) -> Option<&str> {
        match self {
            Engine::Sync { reason: Some(r) } => Some(r),
            _ => None,
        }
    }
}

pub struct DiskReport {
    pub p: Prepared,
    pub engine: Engine,
    pub threads: usize,
    pub stats: JobStats,
    pub series: Vec<Tick>,
    pub measured: Duration,
    /// The process's CPU time over warm-up and load.
    pub cpu: Duration,
    /// Bytes the layout wrote before the run (0 when the file was whole). `threads` is 0 when the run was
    /// interrupted during the layout, before any job started.
    pub laid_out: u64,
    pub kept: bool,
    pub interrupted: bool,
}

const MIB: f64 = (1u64 << 20) as f64;

/// The `--json` document: this struct is the schema (`perflab.load.disk/1`, docs/load.md).
#[derive(Serialize)]
pub struct DiskJson<'a> {
    pub schema: &'static str,
    pub rw: &'static str,
    pub read_pct: f64,
    pub bs: u64,
    pub iodepth: usize,
    pub jobs: usize,
    pub size: u64,
    pub file: String,
    pub fs: &'a str,
    pub direct: bool,
    pub fsync_every: u64,
    pub engine: &'static str,
    pub engine_note: Option<&'a str>,
    pub threads: usize,
    pub measured_s: f64,
    pub interrupted: bool,
    pub laid_out_bytes: u64,
    pub kept: bool,
    pub read: DirJson,
    pub write: DirJson,
    pub iops: f64,
    pub fsyncs: u64,
    pub cpu_us_per_io: f64,
    pub kernel: KernelIo,
    pub series: Vec<SecondJson>,
    pub errors: u64,
    pub first_error: Option<&'a str>,
}

/// One direction's operations, rates and latency (null when it did none).
#[derive(Serialize)]
pub struct DirJson {
    pub ops: u64,
    pub bytes: u64,
    pub iops: f64,
    pub mib_per_s: f64,
    pub lat_us: Option<LatencyUs>,
}

/// Submission-to-completion latency, µs.
#[derive(Serialize)]
pub struct LatencyUs {
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
    pub mean: f64,
    pub count: u64,
}

/// One second of the series.
#[derive(Serialize)]
pub struct SecondJson {
    pub t_s: f64,
    pub iops: f64,
    pub errors: u64,
}

impl DiskReport {
    fn secs(&self) -> f64 {
        self.measured.as_secs_f64().max(1e-9)
    }

    pub fn iops(&self, d: &Dir) -> f64 {
        d.ops as f64 / self.secs()
    }

    pub fn mib_per_s(&self, d: &Dir) -> f64 {
        d.bytes as f64 / MIB / self.secs()
    }

    /// CPU time of the whole process per operation (warm-up included), in µs.
    pub fn cpu_us_per_io(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.stats.all_ops.max(1) as f64
    }

    /// Something was measured.
    pub fn measured_something(&self) -> bool {
        self.stats.ops() > 0
    }

    fn dirs(&self) -> Vec<(&'static str, &Dir)> {
        let mut v = Vec::new();
        if self.p.rw.reads() {
            v.push(("read", &self.stats.read));
        }
        if self.p.rw.writes() {
            v.push(("write", &self.stats.write));
        }
        v
    }

    /// `randread 4.0 KiB × QD 32 × 1 job(s) on /tmp/x (ext4, 1.00 GiB, direct), io_uring`.
    pub fn job_line(&self) -> String {
        let p = &self.p;
        let mix = if p.rw == super::config::Rw::RandRw {
            format!(" ({:.0} % reads)", p.read_pct)
        } else {
            String::new()
        };
        format!(
            "{}{mix} {} × QD {} × {} job(s) on {} ({}, {}, {}), {}",
            p.rw.name(),
            human(p.bs),
            p.iodepth,
            p.jobs,
            p.target.path().display(),
            p.fs,
            human(p.size),
            if p.direct { "direct" } else { "buffered" },
            self.engine.name()
        )
    }

    pub fn summary(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "disk load: {}, {:.1} s measured{}",
            self.job_line(),
            self.measured.as_secs_f64(),
            if self.interrupted { " (interrupted)" } else { "" }
        );
        if self.interrupted && self.threads == 0 {
            let _ = writeln!(
                s,
                "  interrupted while laying out the file ({} written): nothing measured",
                crate::workload::mem::size::human(self.laid_out)
            );
            return s;
        }
        if let Some(n) = self.engine.note() {
            let _ = writeln!(s, "  engine:  synchronous I/O, {} thread(s): {n}", self.threads);
        }
        if self.p.fs == "tmpfs" {
            let _ = writeln!(s, "  note:    the file is on tmpfs: this measures memory, not a disk");
        }
        for (name, d) in self.dirs() {
            let _ = writeln!(
                s,
                "  {name:<5}    {:.0} IOPS, {:.1} MiB/s ({} ops)",
                self.iops(d),
                self.mib_per_s(d),
                d.ops
            );
            if !d.latency.is_empty() {
                let q = |x| value_at(&d.latency, x);
                let _ = writeln!(
                    s,
                    "    lat      p50 {} µs, p90 {} µs, p99 {} µs, p99.9 {} µs, max {} µs",
                    q(0.5),
                    q(0.9),
                    q(0.99),
                    q(0.999),
                    d.latency.max()
                );
            }
        }
        if self.stats.fsyncs > 0 {
            let _ = writeln!(s, "  fsync    {} (one per {} writes of a job)", self.stats.fsyncs, self.p.fsync);
        }
        let k = &self.stats.kernel;
        let _ = writeln!(
            s,
            "  kernel   {} read, {} written by the job threads (/proc/thread-self/io)",
            human(k.read_bytes),
            human(k.write_bytes)
        );
        let _ = writeln!(
            s,
            "  cpu      {:.1} µs per I/O ({} I/Os, warm-up included)",
            self.cpu_us_per_io(),
            self.stats.all_ops
        );
        if let Some(e) = &self.stats.first_error {
            let _ = writeln!(s, "  errors   {}: {e}", self.stats.errors);
        }
        s
    }

    /// The `--json` document (`perflab.load.disk/1`).
    pub fn json(&self) -> DiskJson<'_> {
        let dir = |d: &Dir| DirJson {
            ops: d.ops,
            bytes: d.bytes,
            iops: self.iops(d),
            mib_per_s: self.mib_per_s(d),
            lat_us: (!d.latency.is_empty()).then(|| LatencyUs {
                p50: value_at(&d.latency, 0.5),
                p90: value_at(&d.latency, 0.9),
                p99: value_at(&d.latency, 0.99),
                p999: value_at(&d.latency, 0.999),
                max: d.latency.max(),
                mean: d.latency.mean(),
                count: d.latency.len(),
            }),
        };
        let p = &self.p;
        DiskJson {
            schema: SCHEMA,
            rw: p.rw.name(),
            read_pct: p.read_pct,
            bs: p.bs,
            iodepth: p.iodepth,
            jobs: p.jobs,
            size: p.size,
            file: p.target.path().display().to_string(),
            fs: &p.fs,
            direct: p.direct,
            fsync_every: p.fsync,
            engine: self.engine.name(),
            engine_note: self.engine.note(),
            threads: self.threads,
            measured_s: self.measured.as_secs_f64(),
            interrupted: self.interrupted,
            laid_out_bytes: self.laid_out,
            kept: self.kept,
            read: dir(&self.stats.read),
            write: dir(&self.stats.write),
            iops: self.stats.ops() as f64 / self.secs(),
            fsyncs: self.stats.fsyncs,
            cpu_us_per_io: self.cpu_us_per_io(),
            kernel: self.stats.kernel,
            series: self
                .series
                .iter()
                .map(|t| SecondJson {
                    t_s: t.t_s,
                    iops: t.requests_per_s,
                    errors: t.errors,
                })
                .collect(),
            errors: self.stats.errors,
            first_error: self.stats.first_error.as_deref(),
        }
    }

    pub fn to_result(&self) -> WorkloadResult {
        let mut r = WorkloadResult::default();
        let m = &mut r.metrics;
        m.push(Metric::new("iops", "ops/s", self.stats.ops() as f64 / self.secs(), Better::Higher));
        let mib = (self.stats.read.bytes + self.stats.write.bytes) as f64 / MIB / self.secs();
        m.push(Metric::new("mib_per_s", "MiB/s", mib, Better::Higher).with_kind(MetricKind::Rate));
        for (name, d) in self.dirs() {
            m.push(Metric::new(format!("{name}_iops"), "ops/s", self.iops(d), Better::Higher));
            m.push(Metric::new(format!("{name}_mib_per_s"), "MiB/s", self.mib_per_s(d), Better::Higher).with_kind(MetricKind::Rate));
            m.push(Metric::new(format!("{name}_ops"), "", d.ops as f64, Better::Neither));
            if !d.latency.is_empty() {
                let qs = [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)];
                m.extend(quantile_metrics(
                    &d.latency,
                    qs.map(|(q, v)| (format!("{name}_lat_{q}_us"), v)),
                    "us",
                    1.0,
                ));
                r.histograms.push(NamedHistogram {
                    name: name.into(),
                    hist: d.latency.clone(),
                });
            }
        }
        m.push(Metric::new("fsyncs", "", self.stats.fsyncs as f64, Better::Neither));
        m.push(Metric::new("cpu_us_per_io", "us", self.cpu_us_per_io(), Better::Lower).with_kind(MetricKind::Gauge));
        m.push(Metric::new("errors", "", self.stats.errors as f64, Better::Lower));
        m.push(
            Metric::new("io_uring", "", f64::from(u8::from(self.engine == Engine::IoUring)), Better::Neither).with_kind(MetricKind::Gauge),
        );
        r.metrics.retain(|m| m.value.is_finite());
        r.raw.push(format!("disk: {}", self.job_line()));
        if let Some(n) = self.engine.note() {
            r.raw.push(format!("disk: synchronous I/O with {} thread(s): {n}", self.threads));
        }
        let bs = self.p.bs as f64;
        for t in &self.series {
            r.series.push(SeriesPoint {
                t_s: t.t_s,
                name: "iops".into(),
                value: t.requests_per_s,
            });
            r.series.push(SeriesPoint {
                t_s: t.t_s,
                name: "mib_per_s".into(),
                value: t.requests_per_s * bs / MIB,
            });
        }
        if let Some(e) = &self.stats.first_error {
            r.errors.push(("io_error".into(), self.stats.errors));
            r.failure = Some(format!("{} I/O error(s), the first: {e}", self.stats.errors));
        }
        r
    }
}

impl crate::workload::driver::live::LoadOutcome for DiskReport {
    fn json(&self) -> serde_json::Value {
        serde_json::to_value(DiskReport::json(self)).unwrap_or_default()
    }
    fn summary(&self) -> String {
        DiskReport::summary(self)
    }
    fn failed(&self) -> bool {
        self.stats.errors > 0 || !self.measured_something()
    }
}
