//! What a `mem` run measured, per mode; as a human summary, JSON (`perflab.load.mem/1`,
//! docs/load.md) and a plan trial's metrics.

use super::config::{Method, Mode};
use super::op::{MemOp, PatternResult};
use super::patterns::PATTERNS;
use super::size::human;
use super::stream::KERNELS;
use crate::workload::driver::interval::Tick;
use crate::workload::driver::ops::{OpStats, Run};
use crate::workload::result::quantile_metrics;
use crate::workload::{Better, Metric, MetricKind, NamedHistogram, SeriesPoint, WorkloadResult};
use serde_json::json;
use std::fmt::Write;
use std::time::Duration;

/// The JSON schema's name and version.
pub const SCHEMA: &str = "perflab.load.mem/1";

const MIB: f64 = (1u64 << 20) as f64;

/// What each mode found.
pub enum Found {
    Touch {
        bytes: u64,
        touched: u64,
        touch_time: Duration,
        verify: bool,
        patterns: Vec<PatternResult>,
    },
    Bandwidth {
        array_bytes: u64,
        llc: Option<u64>,
        /// Per kernel: the workers' best rates summed, bytes/s.
        best: [f64; 4],
        /// Bytes read and written per second over every timed kernel, all workers.
        read: f64,
        write: f64,
        /// Iterations timed (the fewest of any worker).
        iterations: u64,
    },
    /// bandwidth with method read or write.
    Sequential {
        method: Method,
        block_bytes: u64,
        llc: Option<u64>,
        /// Passes timed and bytes they read (or wrote), all workers.
        passes: u64,
        bytes: u64,
        /// The workers' rates (their bytes over their passes' time) summed, bytes/s.
        rate: f64,
        /// The time the passes took, summed over the workers.
        seconds: f64,
    },
    Latency {
        bytes: u64,
        /// ns per access: the median and the least of the chases.
        median_ns: f64,
        min_ns: f64,
        chases: usize,
    },
}

pub struct MemReport {
    pub mode: &'static str,
    pub workers: usize,
    pub found: Found,
    pub stats: OpStats,
    pub series: Vec<Tick>,
    pub measured: Duration,
    pub interrupted: bool,
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

impl MemReport {
    pub fn new(mode: &Mode, run: Run<MemOp>, interrupted: bool) -> MemReport {
        let ops: Vec<&MemOp> = run.workers.iter().map(|w| &w.stats.op).collect();
        let found = match (mode, ops.first()) {
            (Mode::Touch { bytes, verify }, Some(MemOp::Touch { region, patterns, .. })) => {
                let mut all = patterns.clone();
                for name in PATTERNS.iter().skip(all.len()) {
                    all.push(PatternResult {
                        name,
                        errors: None,
                        time: Duration::ZERO,
                    });
                }
                Found::Touch {
                    bytes: *bytes,
                    touched: region.touched_bytes(),
                    touch_time: region.touch_time,
                    verify: *verify,
                    patterns: if *verify { all } else { Vec::new() },
                }
            }
            (
                Mode::Bandwidth {
                    array_bytes,
                    llc,
                    method: method @ (Method::Read | Method::Write),
                    ..
                },
                _,
            ) => {
                let (mut passes, mut bytes, mut rate, mut seconds) = (0, 0, 0.0, 0.0);
                for op in &ops {
                    if let MemOp::Sequential { seq, .. } = op {
                        passes += seq.passes;
                        bytes += seq.bytes();
                        rate += seq.rate();
                        seconds += seq.time.as_secs_f64();
                    }
                }
                Found::Sequential {
                    method: *method,
                    block_bytes: (*array_bytes / 8) * 8,
                    llc: *llc,
                    passes,
                    bytes,
                    rate,
                    seconds,
                }
            }
            (Mode::Bandwidth { array_bytes, llc, .. }, _) => {
                let mut best = [0.0; 4];
                let (mut read, mut write, mut iterations) = (0.0, 0.0, u64::MAX);
                for op in &ops {
                    if let MemOp::Bandwidth { stream, .. } = op {
                        (0..4).for_each(|k| best[k] += stream.best_rate(k));
                        let (r, w) = stream.mean_rates();
                        read += r;
                        write += w;
                        iterations = iterations.min(stream.iterations);
                    }
                }
                Found::Bandwidth {
                    array_bytes: *array_bytes,
                    llc: *llc,
                    best,
                    read,
                    write,
                    iterations: iterations.min(u64::MAX - 1),
                }
            }
            (Mode::Latency { bytes }, Some(MemOp::Latency { ns, .. })) => {
                let mut v = ns.clone();
                let min_ns = v.iter().copied().fold(f64::NAN, f64::min);
                Found::Latency {
                    bytes: *bytes,
                    median_ns: median(&mut v),
                    min_ns,
                    chases: v.len(),
                }
            }
            _ => Found::Latency {
                bytes: 0,
                median_ns: f64::NAN,
                min_ns: f64::NAN,
                chases: 0,
            },
        };
        MemReport {
            mode: mode.name(),
            workers: mode.workers(),
            found,
            stats: run.total,
            series: run.series,
            measured: run.measured,
            interrupted,
        }
    }

    /// Whether the run measured anything (exit code 1 when not).
    pub fn measured_something(&self) -> bool {
        match &self.found {
            Found::Touch { bytes, touched, .. } => touched == bytes,
            Found::Bandwidth { iterations, .. } => *iterations > 0,
            Found::Sequential { passes, .. } => *passes > 0,
            Found::Latency { chases, .. } => *chases > 0,
        }
    }

    pub fn summary(&self) -> String {
        let mut s = String::new();
        let note = if self.interrupted { " (interrupted)" } else { "" };
        let _ = writeln!(s, "mem {}: {:.1} s measured{note}", self.mode, self.measured.as_secs_f64());
        match &self.found {
            Found::Touch {
                bytes,
                touched,
                touch_time,
                verify,
                patterns,
            } => {
                let rate = *touched as f64 / MIB / touch_time.as_secs_f64().max(1e-9);
                let _ = writeln!(
                    s,
                    "  region:   {} allocated, {} touched in {:.2} s ({rate:.0} MiB/s), held to the end",
                    human(*bytes),
                    human(*touched),
                    touch_time.as_secs_f64()
                );
                if *verify {
                    for p in patterns {
                        let verdict = match p.errors {
                            Some(0) => "ok".to_string(),
                            Some(n) => format!("FAILED: {n} word(s) differ"),
                            None => "not run or cut short (the load phase ended first)".to_string(),
                        };
                        let _ = writeln!(s, "  {:<22} {verdict}", p.name);
                    }
                }
            }
            Found::Bandwidth {
                array_bytes,
                llc,
                best,
                read,
                write,
                iterations,
            } => {
                let llc = llc.map_or("unknown".to_string(), human);
                let _ = writeln!(
                    s,
                    "  arrays:   3 × {} per worker, {} worker(s), last-level cache {llc}, best of {iterations} iteration(s)",
                    human(*array_bytes),
                    self.workers
                );
                for (k, name) in KERNELS.iter().enumerate() {
                    let _ = writeln!(s, "  {name:<8}  {:>10.0} MiB/s  {:>7.2} GB/s", best[k] / MIB, best[k] / 1e9);
                }
                let _ = writeln!(
                    s,
                    "  read      {:>10.0} MiB/s, write {:.0} MiB/s (over every timed kernel)",
                    read / MIB,
                    write / MIB
                );
            }
            Found::Sequential {
                method,
                block_bytes,
                passes,
                bytes,
                rate,
                seconds,
                ..
            } => {
                let _ = writeln!(
                    s,
                    "  {:<8}  {:>10.0} MiB/s  {:>7.2} GB/s  (a sequential {} of a {} block per worker, {} worker(s): {passes} pass(es), {} in {seconds:.2} s)",
                    method.name(),
                    rate / MIB,
                    rate / 1e9,
                    method.name(),
                    human(*block_bytes),
                    self.workers,
                    human(*bytes)
                );
            }
            Found::Latency {
                bytes,
                median_ns,
                min_ns,
                chases,
            } => {
                let _ = writeln!(
                    s,
                    "  working set {}: {median_ns:.1} ns per access (median of {chases} chase(s) of {} loads; least {min_ns:.1} ns)",
                    human(*bytes),
                    super::chase::ACCESSES
                );
            }
        }
        s
    }

    pub fn json(&self) -> serde_json::Value {
        let f = |v: f64| v.is_finite().then_some(v);
        let found = match &self.found {
            Found::Touch {
                bytes,
                touched,
                touch_time,
                verify,
                patterns,
            } => json!({
                "bytes": bytes, "touched_bytes": touched, "touch_s": touch_time.as_secs_f64(),
                "touch_mib_per_s": f(*touched as f64 / MIB / touch_time.as_secs_f64().max(1e-9)),
                "verify": verify,
                "patterns": patterns.iter().map(|p| json!({ "name": p.name, "errors": p.errors, "ok": p.errors.map(|e| e == 0), "seconds": p.time.as_secs_f64() })).collect::<Vec<_>>(),
            }),
            Found::Bandwidth {
                array_bytes,
                llc,
                best,
                read,
                write,
                iterations,
            } => json!({
                "array_bytes": array_bytes, "last_level_cache_bytes": llc, "iterations": iterations,
                "best_mib_per_s": KERNELS.iter().zip(best).map(|(k, v)| (k.to_string(), json!(f(v / MIB)))).collect::<serde_json::Map<_, _>>(),
                "method": "stream",
                "read_mib_per_s": f(read / MIB), "write_mib_per_s": f(write / MIB),
            }),
            Found::Sequential {
                method,
                block_bytes,
                llc,
                passes,
                bytes,
                rate,
                seconds,
            } => json!({
                "method": method.name(), "block_bytes": block_bytes, "last_level_cache_bytes": llc,
                "passes": passes, "bytes": bytes, "seconds": seconds,
                format!("{}_mib_per_s", method.name()): f(rate / MIB),
            }),
            Found::Latency {
                bytes,
                median_ns,
                min_ns,
                chases,
            } => json!({
                "bytes": bytes, "ns_per_access": f(*median_ns), "min_ns_per_access": f(*min_ns), "chases": chases,
                "accesses_per_chase": super::chase::ACCESSES,
            }),
        };
        json!({
            "schema": SCHEMA,
            "mode": self.mode,
            "workers": self.workers,
            "measured_s": self.measured.as_secs_f64(),
            "interrupted": self.interrupted,
            self.mode: found,
            "ops": self.stats.ops,
            "errors": self.stats.errors,
        })
    }

    pub fn to_result(&self) -> WorkloadResult {
        let mut r = WorkloadResult::default();
        let m = &mut r.metrics;
        let mibps = |name: String, v: f64| Metric::new(name, "MiB/s", v, Better::Higher);
        match &self.found {
            Found::Touch {
                touched,
                touch_time,
                verify,
                patterns,
                ..
            } => {
                m.push(Metric::new("touched_mib", "MiB", *touched as f64 / MIB, Better::Neither).with_kind(MetricKind::Gauge));
                m.push(mibps(
                    "touch_mib_per_s".into(),
                    *touched as f64 / MIB / touch_time.as_secs_f64().max(1e-9),
                ));
                if *verify {
                    let run: Vec<&PatternResult> = patterns.iter().filter(|p| p.errors.is_some()).collect();
                    let errors: u64 = run.iter().filter_map(|p| p.errors).sum();
                    m.push(Metric::new("verify_errors", "", errors as f64, Better::Lower));
                    m.push(Metric::new("verify_patterns_run", "", run.len() as f64, Better::Neither));
                    m.push(Metric::new(
                        "verify_patterns_failed",
                        "",
                        run.iter().filter(|p| p.errors != Some(0)).count() as f64,
                        Better::Lower,
                    ));
                    for p in run {
                        m.push(Metric::new(
                            format!("pattern_{}_errors", p.name),
                            "",
                            p.errors.unwrap_or(0) as f64,
                            Better::Lower,
                        ));
                    }
                }
            }
            Found::Bandwidth {
                array_bytes,
                best,
                read,
                write,
                ..
            } => {
                for (k, name) in KERNELS.iter().enumerate() {
                    m.push(mibps(format!("{name}_mib_per_s"), best[k] / MIB));
                }
                m.push(mibps("read_mib_per_s".into(), read / MIB));
                m.push(mibps("write_mib_per_s".into(), write / MIB));
                m.push(Metric::new("array_mib", "MiB", *array_bytes as f64 / MIB, Better::Neither).with_kind(MetricKind::Gauge));
            }
            Found::Sequential {
                method,
                block_bytes,
                passes,
                rate,
                ..
            } => {
                m.push(mibps(format!("{}_mib_per_s", method.name()), rate / MIB));
                m.push(Metric::new("passes", "", *passes as f64, Better::Neither));
                m.push(Metric::new("block_mib", "MiB", *block_bytes as f64 / MIB, Better::Neither).with_kind(MetricKind::Gauge));
            }
            Found::Latency {
                median_ns, min_ns, bytes, ..
            } => {
                m.push(Metric::new("access_latency_ns", "ns", *median_ns, Better::Lower));
                m.push(Metric::new("access_latency_min_ns", "ns", *min_ns, Better::Lower));
                m.push(Metric::new("accesses_per_s", "accesses/s", 1e9 / median_ns, Better::Higher));
                m.push(Metric::new("working_set_mib", "MiB", *bytes as f64 / MIB, Better::Neither).with_kind(MetricKind::Gauge));
            }
        }
        m.push(Metric::new("ops", "", self.stats.ops as f64, Better::Neither));
        m.push(Metric::new("errors", "", self.stats.errors as f64, Better::Lower));
        m.extend(quantile_metrics(&self.stats.latency, [("op_p99_ms", 0.99)], "ms", 1000.0));
        if !self.stats.latency.is_empty() {
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

impl crate::workload::driver::live::LoadOutcome for MemReport {
    fn json(&self) -> serde_json::Value {
        MemReport::json(self)
    }
    fn summary(&self) -> String {
        MemReport::summary(self)
    }
    fn failed(&self) -> bool {
        self.stats.errors > 0 || !self.measured_something()
    }
}
