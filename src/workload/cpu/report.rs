//! What a `cpu` run measured: the load asked and achieved (per worker and in total), the work done
//! per method, the operations' latency. [`CpuReport`] is the result: serialized, it is the `--json`
//! document (`perflab.load.cpu/1`, docs/load.md); the human summary and a plan trial's metrics are
//! read from the same fields.

use super::config::Prepared;
use super::methods::{ALL, VERSION};
use super::op::CpuOp;
use crate::workload::driver::interval::Tick;
use crate::workload::driver::ops::OpTail;
use crate::workload::driver::ops::Run;
use crate::workload::result::quantile;
use crate::workload::{Better, Metric, MetricKind, WorkloadResult};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::fmt::Write;

/// The JSON schema's name and version.
pub const SCHEMA: &str = "perflab.load.cpu/1";

/// Mean and standard deviation of a load, in percent (null in JSON when not measured).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Load {
    pub mean_pct: f64,
    pub sd_pct: f64,
}

impl Load {
    /// "97.9 ± 1.2 %", or "97.9 % (fewer than 2 whole seconds, so no sd)" for a run shorter than
    /// two seconds (the spread of the seconds does not exist then).
    pub fn text(&self) -> String {
        if self.sd_pct.is_finite() {
            format!("{:.1} ± {:.1} %", self.mean_pct, self.sd_pct)
        } else {
            format!("{:.1} % (fewer than 2 whole seconds, so no sd)", self.mean_pct)
        }
    }
}

/// One method's work.
#[derive(Clone, Debug, Serialize)]
pub struct MethodWork {
    pub name: &'static str,
    pub ops: u64,
    pub ops_per_s: f64,
    pub ops_per_cpu_s: f64,
}

/// The load asked and achieved.
#[derive(Clone, Debug, Serialize)]
pub struct LoadFigures {
    pub asked_pct: f64,
    /// Mean ± sd of each second's mean over the workers.
    pub achieved: Load,
    pub per_worker: Vec<Load>,
    /// The workers' CPU time over the load phase, in % of the CPUs this process may use.
    pub machine_pct: f64,
}

/// The work done.
#[derive(Clone, Debug, Serialize)]
pub struct Work {
    pub ops: u64,
    pub ops_per_s: f64,
    pub ops_per_cpu_s: f64,
    pub methods: Vec<MethodWork>,
}

/// One operation's time, µs (from the merged `op` histogram).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct OpLatency {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: u64,
}

/// What one cpu run measured; its serialization is the JSON schema.
#[derive(Clone, Debug, Serialize)]
pub struct CpuReport {
    pub schema: &'static str,
    pub workers: usize,
    pub method: &'static str,
    pub methods_version: u32,
    pub cpus: usize,
    pub measured_s: f64,
    pub interrupted: bool,
    pub load: LoadFigures,
    pub work: Work,
    pub op_latency_us: OpLatency,
    pub errors: u64,
    #[serde(skip)]
    pub latency: Histogram<u64>,
    #[serde(skip)]
    pub series: Vec<Tick>,
}

/// Mean and standard deviation of the per-second values; the sd is NaN (null in JSON, "no sd" in
/// text) below 2 values, where a spread does not exist.
fn mean_sd(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    if v.len() < 2 {
        return (m, f64::NAN);
    }
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64;
    (m, var.sqrt())
}

impl CpuReport {
    pub fn new(p: &Prepared, run: Run<CpuOp>, interrupted: bool) -> CpuReport {
        let ops: Vec<&CpuOp> = run.workers.iter().map(|w| &w.stats.op).collect();
        let per_worker: Vec<Load> = ops
            .iter()
            .map(|o| Load {
                mean_pct: o.achieved().unwrap_or(f64::NAN) * 100.0,
                sd_pct: mean_sd(&o.seconds).1 * 100.0,
            })
            .collect();
        // The total in each whole second: the workers' mean load in that second.
        let secs = ops.iter().map(|o| o.seconds.len()).min().unwrap_or(0);
        let totals: Vec<f64> = (0..secs)
            .map(|i| ops.iter().map(|o| o.seconds[i]).sum::<f64>() / ops.len() as f64)
            .collect();
        let mean = per_worker.iter().map(|l| l.mean_pct).sum::<f64>() / per_worker.len().max(1) as f64;
        let cpu: std::time::Duration = ops.iter().map(|o| o.measured_cpu()).sum();
        let wall = run.measured.as_secs_f64().max(1e-9);
        let methods = ALL
            .iter()
            .filter_map(|m| {
                let (n, t): (u64, std::time::Duration) = ops
                    .iter()
                    .map(|o| o.per_method[m.index()])
                    .fold((0, std::time::Duration::ZERO), |a, b| (a.0 + b.0, a.1 + b.1));
                (n > 0).then(|| MethodWork {
                    name: m.name(),
                    ops: n,
                    ops_per_s: n as f64 / wall,
                    ops_per_cpu_s: n as f64 / t.as_secs_f64().max(1e-9),
                })
            })
            .collect();
        let lat = &run.total.latency;
        let total_ops = run.total.ops;
        CpuReport {
            schema: SCHEMA,
            workers: p.workers,
            method: p.method.name(),
            methods_version: VERSION,
            cpus: p.cpus,
            measured_s: run.measured.as_secs_f64(),
            interrupted,
            load: LoadFigures {
                asked_pct: p.load_pct,
                achieved: Load {
                    mean_pct: mean,
                    sd_pct: mean_sd(&totals).1 * 100.0,
                },
                per_worker,
                machine_pct: cpu.as_secs_f64() / (wall * p.cpus as f64) * 100.0,
            },
            work: Work {
                ops: total_ops,
                ops_per_s: total_ops as f64 / wall,
                ops_per_cpu_s: total_ops as f64 / cpu.as_secs_f64().max(1e-9),
                methods,
            },
            op_latency_us: OpLatency {
                p50: quantile(lat, 0.5, 1.0),
                p90: quantile(lat, 0.9, 1.0),
                p99: quantile(lat, 0.99, 1.0),
                max: lat.max(),
            },
            errors: run.total.errors,
            latency: lat.clone(),
            series: run.series,
        }
    }

    pub fn summary(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "cpu load: {} worker(s) at {} % each, method {} (methods v{VERSION}), {:.1} s measured{}",
            self.workers,
            self.load.asked_pct,
            self.method,
            self.measured_s,
            if self.interrupted { " (interrupted)" } else { "" }
        );
        let _ = writeln!(s, "  load asked:     {:.1} % per worker", self.load.asked_pct);
        let _ = writeln!(
            s,
            "  load achieved:  per worker, all workers (mean ± sd of each second): {}",
            self.load.achieved.text()
        );
        for (i, l) in self.load.per_worker.iter().enumerate() {
            let _ = writeln!(s, "    worker {i}:     {}", l.text());
        }
        let _ = writeln!(
            s,
            "  machine:        {:.1} % of the {} CPU(s) this process may use",
            self.load.machine_pct, self.cpus
        );
        let _ = writeln!(
            s,
            "  work:           {:.0} ops/s, {:.0} ops per CPU-second ({} ops)",
            self.work.ops_per_s, self.work.ops_per_cpu_s, self.work.ops
        );
        for m in &self.work.methods {
            let _ = writeln!(
                s,
                "    {:<8}      {:.0} ops/s, {:.0} ops per CPU-second",
                m.name, m.ops_per_s, m.ops_per_cpu_s
            );
        }
        if !self.latency.is_empty() {
            let _ = writeln!(
                s,
                "  op latency:     p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
                self.op_latency_us.p50, self.op_latency_us.p99, self.op_latency_us.max
            );
        }
        s
    }

    pub fn to_result(&self) -> WorkloadResult {
        let mut r = WorkloadResult::default();
        let m = &mut r.metrics;
        let rate = |name: String, v: f64| Metric::new(name, "ops/s", v, Better::Higher);
        let per_cpu = |name: String, v: f64| Metric::new(name, "ops/CPU-s", v, Better::Higher).with_kind(MetricKind::Rate);
        m.push(rate("ops_per_s".into(), self.work.ops_per_s));
        m.push(per_cpu("ops_per_cpu_s".into(), self.work.ops_per_cpu_s));
        m.push(Metric::new("load_asked_pct", "%", self.load.asked_pct, Better::Neither));
        m.push(Metric::new("load_achieved_pct", "%", self.load.achieved.mean_pct, Better::Neither));
        m.push(Metric::new("load_achieved_sd_pct", "%", self.load.achieved.sd_pct, Better::Lower));
        m.push(Metric::new("machine_busy_pct", "%", self.load.machine_pct, Better::Neither));
        for (i, l) in self.load.per_worker.iter().enumerate() {
            m.push(Metric::new(format!("worker{i}_load_pct"), "%", l.mean_pct, Better::Neither));
        }
        for w in &self.work.methods {
            m.push(rate(format!("{}_ops_per_s", w.name), w.ops_per_s));
            m.push(per_cpu(format!("{}_ops_per_cpu_s", w.name), w.ops_per_cpu_s));
        }
        m.push(Metric::new("methods_version", "", f64::from(VERSION), Better::Neither).with_kind(MetricKind::Gauge));
        let tail = OpTail {
            ops: self.work.ops,
            errors: self.errors,
            latency: &self.latency,
            series: &self.series,
        };
        tail.finish(&mut r, &[("op_p50_us", 0.5), ("op_p99_us", 0.99)], "us", 1.0);
        r
    }
}

impl crate::workload::driver::live::LoadOutcome for CpuReport {
    fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
    fn summary(&self) -> String {
        CpuReport::summary(self)
    }
    fn failed(&self) -> bool {
        self.errors > 0 || self.work.ops == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_under_two_whole_seconds_says_so_instead_of_nan_or_zero() {
        let l = Load {
            mean_pct: 97.94,
            sd_pct: f64::NAN,
        };
        assert_eq!(l.text(), "97.9 % (fewer than 2 whole seconds, so no sd)");
        assert!(mean_sd(&[0.97]).1.is_nan() && mean_sd(&[0.97]).0 == 0.97);
        let l = Load {
            mean_pct: 97.94,
            sd_pct: 1.23,
        };
        assert_eq!(l.text(), "97.9 ± 1.2 %");
    }
}
