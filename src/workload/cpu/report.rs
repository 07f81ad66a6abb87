//! What a `cpu` run measured: the load asked and achieved (per worker and in total), the work done
//! per method, the operations' latency; as a human summary, JSON (`perflab.load.cpu/1`,
//! docs/load.md) and a plan trial's metrics.

use super::config::Prepared;
use super::methods::{ALL, VERSION};
use super::op::CpuOp;
use crate::workload::driver::interval::Tick;
use crate::workload::driver::ops::{OpStats, Run};
use crate::workload::{Better, Metric, MetricKind, NamedHistogram, SeriesPoint, WorkloadResult};
use std::fmt::Write;
use std::time::Duration;

/// The JSON schema's name and version.
pub const SCHEMA: &str = "perflab.load.cpu/1";

/// Mean and standard deviation of a load, in percent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Load {
    pub mean_pct: f64,
    pub sd_pct: f64,
}

/// One method's work.
#[derive(Clone, Debug)]
pub struct MethodWork {
    pub name: &'static str,
    pub ops: u64,
    pub ops_per_s: f64,
    pub ops_per_cpu_s: f64,
}

pub struct CpuReport {
    pub workers: usize,
    pub asked_pct: f64,
    pub method: &'static str,
    pub cpus: usize,
    pub per_worker: Vec<Load>,
    pub total: Load,
    /// The workers' CPU time over the load phase, in % of the CPUs this process may use.
    pub machine_pct: f64,
    pub methods: Vec<MethodWork>,
    pub stats: OpStats,
    pub series: Vec<Tick>,
    pub measured: Duration,
    pub cpu_s: f64,
    pub interrupted: bool,
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
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
        let cpu: Duration = ops.iter().map(|o| o.measured_cpu()).sum();
        let wall = run.measured.as_secs_f64().max(1e-9);
        let methods = ALL
            .iter()
            .filter_map(|m| {
                let (n, t): (u64, Duration) = ops
                    .iter()
                    .map(|o| o.per_method[m.index()])
                    .fold((0, Duration::ZERO), |a, b| (a.0 + b.0, a.1 + b.1));
                (n > 0).then(|| MethodWork {
                    name: m.name(),
                    ops: n,
                    ops_per_s: n as f64 / wall,
                    ops_per_cpu_s: n as f64 / t.as_secs_f64().max(1e-9),
                })
            })
            .collect();
        CpuReport {
            workers: p.workers,
            asked_pct: p.load_pct,
            method: p.method.name(),
            cpus: p.cpus,
            per_worker,
            total: Load {
                mean_pct: mean,
                sd_pct: mean_sd(&totals).1 * 100.0,
            },
            machine_pct: cpu.as_secs_f64() / (wall * p.cpus as f64) * 100.0,
            methods,
            stats: run.total,
            series: run.series,
            measured: run.measured,
            cpu_s: cpu.as_secs_f64(),
            interrupted,
        }
    }

    pub fn ops_per_s(&self) -> f64 {
        self.stats.ops as f64 / self.measured.as_secs_f64().max(1e-9)
    }

    pub fn ops_per_cpu_s(&self) -> f64 {
        self.stats.ops as f64 / self.cpu_s.max(1e-9)
    }

    fn us(&self, q: f64) -> f64 {
        self.stats.latency.value_at_quantile(q) as f64
    }

    pub fn summary(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "cpu load: {} worker(s) at {} % each, method {} (methods v{VERSION}), {:.1} s measured{}",
            self.workers,
            self.asked_pct,
            self.method,
            self.measured.as_secs_f64(),
            if self.interrupted { " (interrupted)" } else { "" }
        );
        let _ = writeln!(s, "  load asked:     {:.1} % per worker", self.asked_pct);
        let _ = writeln!(
            s,
            "  load achieved:  {:.1} ± {:.1} % per worker (mean ± sd of each second, all workers)",
            self.total.mean_pct, self.total.sd_pct
        );
        for (i, l) in self.per_worker.iter().enumerate() {
            let _ = writeln!(s, "    worker {i}:     {:.1} ± {:.1} %", l.mean_pct, l.sd_pct);
        }
        let _ = writeln!(
            s,
            "  machine:        {:.1} % of the {} CPU(s) this process may use",
            self.machine_pct, self.cpus
        );
        let _ = writeln!(
            s,
            "  work:           {:.0} ops/s, {:.0} ops per CPU-second ({} ops)",
            self.ops_per_s(),
            self.ops_per_cpu_s(),
            self.stats.ops
        );
        for m in &self.methods {
            let _ = writeln!(
                s,
                "    {:<8}      {:.0} ops/s, {:.0} ops per CPU-second",
                m.name, m.ops_per_s, m.ops_per_cpu_s
            );
        }
        if !self.stats.latency.is_empty() {
            let _ = writeln!(
                s,
                "  op latency:     p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
                self.us(0.5),
                self.us(0.99),
                self.stats.latency.max() as f64
            );
        }
        s
    }

    pub fn json(&self) -> serde_json::Value {
        let load = |l: &Load| serde_json::json!({ "mean_pct": finite(l.mean_pct), "sd_pct": finite(l.sd_pct) });
        serde_json::json!({
            "schema": SCHEMA,
            "workers": self.workers,
            "method": self.method,
            "methods_version": VERSION,
            "cpus": self.cpus,
            "measured_s": self.measured.as_secs_f64(),
            "interrupted": self.interrupted,
            "load": {
                "asked_pct": self.asked_pct,
                "achieved": load(&self.total),
                "per_worker": self.per_worker.iter().map(load).collect::<Vec<_>>(),
                "machine_pct": finite(self.machine_pct),
            },
            "work": {
                "ops": self.stats.ops,
                "ops_per_s": self.ops_per_s(),
                "ops_per_cpu_s": self.ops_per_cpu_s(),
                "methods": self.methods.iter().map(|m| serde_json::json!({
                    "name": m.name, "ops": m.ops, "ops_per_s": m.ops_per_s, "ops_per_cpu_s": m.ops_per_cpu_s,
                })).collect::<Vec<_>>(),
            },
            "op_latency_us": {
                "p50": self.us(0.5), "p90": self.us(0.9), "p99": self.us(0.99), "max": self.stats.latency.max(),
            },
            "errors": self.stats.errors,
        })
    }

    pub fn to_result(&self) -> WorkloadResult {
        let mut r = WorkloadResult::default();
        let m = &mut r.metrics;
        let rate = |name: String, v: f64| Metric::new(name, "ops/s", v, Better::Higher);
        let per_cpu = |name: String, v: f64| Metric::new(name, "ops/CPU-s", v, Better::Higher).with_kind(MetricKind::Rate);
        m.push(rate("ops_per_s".into(), self.ops_per_s()));
        m.push(per_cpu("ops_per_cpu_s".into(), self.ops_per_cpu_s()));
        m.push(Metric::new("load_asked_pct", "%", self.asked_pct, Better::Neither));
        m.push(Metric::new("load_achieved_pct", "%", self.total.mean_pct, Better::Neither));
        m.push(Metric::new("load_achieved_sd_pct", "%", self.total.sd_pct, Better::Lower));
        m.push(Metric::new("machine_busy_pct", "%", self.machine_pct, Better::Neither));
        for (i, l) in self.per_worker.iter().enumerate() {
            m.push(Metric::new(format!("worker{i}_load_pct"), "%", l.mean_pct, Better::Neither));
        }
        for w in &self.methods {
            m.push(rate(format!("{}_ops_per_s", w.name), w.ops_per_s));
            m.push(per_cpu(format!("{}_ops_per_cpu_s", w.name), w.ops_per_cpu_s));
        }
        m.push(Metric::new("methods_version", "", f64::from(VERSION), Better::Neither).with_kind(MetricKind::Gauge));
        m.push(Metric::new("ops", "", self.stats.ops as f64, Better::Neither));
        m.push(Metric::new("errors", "", self.stats.errors as f64, Better::Lower));
        if !self.stats.latency.is_empty() {
            for (name, q) in [("op_p50_us", 0.5), ("op_p99_us", 0.99)] {
                m.push(Metric::new(name, "us", self.us(q), Better::Lower));
            }
            r.histograms.push(NamedHistogram {
                name: "op".into(),
                hist: self.stats.latency.clone(),
            });
        }
        r.metrics.retain(|m| m.value.is_finite());
        for t in &self.series {
            r.series.push(SeriesPoint {
                t_s: t.t_s,
                name: "ops_per_s".into(),
                value: t.requests_per_s,
            });
        }
        r
    }
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

impl crate::workload::driver::live::LoadOutcome for CpuReport {
    fn json(&self) -> serde_json::Value {
        CpuReport::json(self)
    }
    fn summary(&self) -> String {
        CpuReport::summary(self)
    }
    fn failed(&self) -> bool {
        self.stats.errors > 0 || self.stats.ops == 0
    }
}
