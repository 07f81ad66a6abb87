//! What a `mem` run measured, per mode. [`MemReport`] is the result: serialized, it is the
//! `--json` document (`perflab.load.mem/1`, docs/load.md); the human summary and a plan trial's
//! metrics are read from the same fields.

use super::config::{Method, Mode};
use super::op::{MemOp, PatternResult};
use super::patterns::PATTERNS;
use super::size::human;
use super::stream::KERNELS;
use crate::workload::driver::interval::Tick;
use crate::workload::driver::ops::OpTail;
use crate::workload::driver::ops::Run;
use crate::workload::{Better, Metric, MetricKind, WorkloadResult};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

/// The JSON schema's name and version.
pub const SCHEMA: &str = "perflab.load.mem/1";

const MIB: f64 = (1u64 << 20) as f64;

/// A figure as JSON gives it: null when not measured (NaN, infinite).
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// What one mem run measured; its serialization is the JSON schema.
#[derive(Clone, Debug, Serialize)]
pub struct MemReport {
    pub schema: &'static str,
    pub mode: &'static str,
    pub workers: usize,
    pub measured_s: f64,
    pub interrupted: bool,
    /// The mode's figures, under the mode's name.
    #[serde(flatten)]
    pub found: Found,
    pub ops: u64,
    pub errors: u64,
    /// Each operation's time (µs).
    #[serde(skip)]
    pub latency: Histogram<u64>,
    #[serde(skip)]
    pub series: Vec<Tick>,
}

/// What each mode found, under its name (`touch`, `bandwidth`, `latency`).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Found {
    Touch(Touch),
    Bandwidth(Bandwidth),
    Latency(Latency),
}

/// touch: the region allocated, touched and held (and verified).
#[derive(Clone, Debug, Serialize)]
pub struct Touch {
    pub bytes: u64,
    pub touched_bytes: u64,
    /// Time spent touching.
    pub touch_s: f64,
    pub touch_mib_per_s: Option<f64>,
    pub verify: bool,
    /// Every pattern with `verify` (those not run: `errors` and `ok` null); empty without.
    pub patterns: Vec<Pattern>,
}

/// One verify pattern.
#[derive(Clone, Debug, Serialize)]
pub struct Pattern {
    pub name: &'static str,
    /// Words found different; null when not run or cut short.
    pub errors: Option<u64>,
    pub ok: Option<bool>,
    pub seconds: f64,
}

/// bandwidth: the STREAM kernels, or a sequential read or write.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Bandwidth {
    Stream(Stream),
    Sequential(Sequential),
}

/// bandwidth with method stream.
#[derive(Clone, Debug, Serialize)]
pub struct Stream {
    /// Always `stream`.
    pub method: &'static str,
    pub array_bytes: u64,
    pub last_level_cache_bytes: Option<u64>,
    /// Iterations timed (the fewest of any worker).
    pub iterations: u64,
    /// Per kernel: the workers' best rates summed.
    pub best_mib_per_s: BTreeMap<&'static str, Option<f64>>,
    /// Over every timed kernel, all workers.
    pub read_mib_per_s: Option<f64>,
    pub write_mib_per_s: Option<f64>,
}

/// bandwidth with method read or write.
#[derive(Clone, Debug, Serialize)]
pub struct Sequential {
    pub method: &'static str,
    pub block_bytes: u64,
    pub last_level_cache_bytes: Option<u64>,
    /// Passes timed and bytes they read (or wrote), all workers.
    pub passes: u64,
    pub bytes: u64,
    /// The time the passes took, summed over the workers.
    pub seconds: f64,
    /// The workers' rates summed, under `read_mib_per_s` or `write_mib_per_s` (the method's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_mib_per_s: Option<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_mib_per_s: Option<Option<f64>>,
}

impl Sequential {
    /// The method's rate, MiB/s (NaN when not measured).
    pub fn mib_per_s(&self) -> f64 {
        self.read_mib_per_s.or(self.write_mib_per_s).flatten().unwrap_or(f64::NAN)
    }
}

/// latency: the pointer chases.
#[derive(Clone, Debug, Serialize)]
pub struct Latency {
    /// The working set.
    pub bytes: u64,
    /// ns per access: the median and the least of the chases.
    pub ns_per_access: Option<f64>,
    pub min_ns_per_access: Option<f64>,
    pub chases: usize,
    pub accesses_per_chase: u64,
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

fn touch(bytes: u64, verify: bool, ops: &[&MemOp]) -> Touch {
    let Some(MemOp::Touch { region, patterns, .. }) = ops.first() else {
        return Touch {
            bytes,
            touched_bytes: 0,
            touch_s: 0.0,
            touch_mib_per_s: Some(0.0),
            verify,
            patterns: Vec::new(),
        };
    };
    let mut all = patterns.clone();
    for name in PATTERNS.iter().skip(all.len()) {
        all.push(PatternResult {
            name,
            errors: None,
            time: Duration::ZERO,
        });
    }
    let touched = region.touched_bytes();
    let touch_s = region.touch_time.as_secs_f64();
    Touch {
        bytes,
        touched_bytes: touched,
        touch_s,
        touch_mib_per_s: finite(touched as f64 / MIB / touch_s.max(1e-9)),
        verify,
        patterns: if verify {
            all.iter()
                .map(|p| Pattern {
                    name: p.name,
                    errors: p.errors,
                    ok: p.errors.map(|e| e == 0),
                    seconds: p.time.as_secs_f64(),
                })
                .collect()
        } else {
            Vec::new()
        },
    }
}

fn sequential(method: Method, array_bytes: u64, llc: Option<u64>, ops: &[&MemOp]) -> Sequential {
    let (mut passes, mut bytes, mut rate, mut seconds) = (0, 0, 0.0, 0.0);
    for op in ops {
        if let MemOp::Sequential { seq, .. } = op {
            passes += seq.passes;
            bytes += seq.bytes();
            rate += seq.rate();
            seconds += seq.time.as_secs_f64();
        }
    }
    let mib_per_s = Some(finite(rate / MIB));
    Sequential {
        method: method.name(),
        block_bytes: (array_bytes / 8) * 8,
        last_level_cache_bytes: llc,
        passes,
        bytes,
        seconds,
        read_mib_per_s: mib_per_s.filter(|_| method == Method::Read),
        write_mib_per_s: mib_per_s.filter(|_| method != Method::Read),
    }
}

fn stream(array_bytes: u64, llc: Option<u64>, ops: &[&MemOp]) -> Stream {
    let mut best = [0.0; 4];
    let (mut read, mut write, mut iterations) = (0.0, 0.0, u64::MAX);
    for op in ops {
        if let MemOp::Bandwidth { stream, .. } = op {
            (0..4).for_each(|k| best[k] += stream.best_rate(k));
            let (r, w) = stream.mean_rates();
            read += r;
            write += w;
            iterations = iterations.min(stream.iterations);
        }
    }
    Stream {
        method: "stream",
        array_bytes,
        last_level_cache_bytes: llc,
        iterations: iterations.min(u64::MAX - 1),
        best_mib_per_s: KERNELS.iter().zip(best).map(|(k, v)| (*k, finite(v / MIB))).collect(),
        read_mib_per_s: finite(read / MIB),
        write_mib_per_s: finite(write / MIB),
    }
}

fn latency(bytes: u64, ns: Option<&Vec<f64>>) -> Latency {
    let mut v = ns.cloned().unwrap_or_default();
    let min_ns = v.iter().copied().fold(f64::NAN, f64::min);
    Latency {
        bytes,
        ns_per_access: finite(median(&mut v)),
        min_ns_per_access: finite(min_ns),
        chases: v.len(),
        accesses_per_chase: super::chase::ACCESSES,
    }
}

impl MemReport {
    pub fn new(mode: &Mode, run: Run<MemOp>, interrupted: bool) -> MemReport {
        let ops: Vec<&MemOp> = run.workers.iter().map(|w| &w.stats.op).collect();
        let found = match mode {
            Mode::Touch { bytes, verify } => Found::Touch(touch(*bytes, *verify, &ops)),
            Mode::Bandwidth {
                array_bytes,
                llc,
                method: method @ (Method::Read | Method::Write),
                ..
            } => Found::Bandwidth(Bandwidth::Sequential(sequential(*method, *array_bytes, *llc, &ops))),
            Mode::Bandwidth { array_bytes, llc, .. } => Found::Bandwidth(Bandwidth::Stream(stream(*array_bytes, *llc, &ops))),
            Mode::Latency { bytes } => Found::Latency(latency(
                *bytes,
                ops.first().and_then(|o| match o {
                    MemOp::Latency { ns, .. } => Some(ns),
                    _ => None,
                }),
            )),
        };
        MemReport {
            schema: SCHEMA,
            mode: mode.name(),
            workers: mode.workers(),
            measured_s: run.measured.as_secs_f64(),
            interrupted,
            found,
            ops: run.total.ops,
            errors: run.total.errors,
            latency: run.total.latency,
            series: run.series,
        }
    }

    /// Whether the run measured anything (exit code 1 when not).
    pub fn measured_something(&self) -> bool {
        match &self.found {
            Found::Touch(t) => t.touched_bytes == t.bytes,
            Found::Bandwidth(Bandwidth::Stream(b)) => b.iterations > 0,
            Found::Bandwidth(Bandwidth::Sequential(b)) => b.passes > 0,
            Found::Latency(l) => l.chases > 0,
        }
    }

    pub fn summary(&self) -> String {
        let mut s = String::new();
        let note = if self.interrupted { " (interrupted)" } else { "" };
        let _ = writeln!(s, "mem {}: {:.1} s measured{note}", self.mode, self.measured_s);
        let nan = |v: Option<f64>| v.unwrap_or(f64::NAN);
        match &self.found {
            Found::Touch(t) => {
                let _ = writeln!(
                    s,
                    "  region:   {} allocated, {} touched in {:.2} s ({:.0} MiB/s), held to the end",
                    human(t.bytes),
                    human(t.touched_bytes),
                    t.touch_s,
                    nan(t.touch_mib_per_s)
                );
                for p in &t.patterns {
                    let verdict = match p.errors {
                        Some(0) => "ok".to_string(),
                        Some(n) => format!("FAILED: {n} word(s) differ"),
                        None => "not run or cut short (the load phase ended first)".to_string(),
                    };
                    let _ = writeln!(s, "  {:<22} {verdict}", p.name);
                }
            }
            Found::Bandwidth(Bandwidth::Stream(b)) => {
                let llc = b.last_level_cache_bytes.map_or("unknown".to_string(), human);
                let _ = writeln!(
                    s,
                    "  arrays:   3 × {} per worker, {} worker(s), last-level cache {llc}, best of {} iteration(s)",
                    human(b.array_bytes),
                    self.workers,
                    b.iterations
                );
                for name in KERNELS {
                    let v = nan(b.best_mib_per_s[name]);
                    let _ = writeln!(s, "  {name:<8}  {v:>10.0} MiB/s  {:>7.2} GB/s", v * MIB / 1e9);
                }
                let _ = writeln!(
                    s,
                    "  read      {:>10.0} MiB/s, write {:.0} MiB/s (over every timed kernel)",
                    nan(b.read_mib_per_s),
                    nan(b.write_mib_per_s)
                );
            }
            Found::Bandwidth(Bandwidth::Sequential(b)) => {
                let rate = b.mib_per_s();
                let _ = writeln!(
                    s,
                    "  {:<8}  {rate:>10.0} MiB/s  {:>7.2} GB/s  (a sequential {} of a {} block per worker, {} worker(s): {} pass(es), {} in {:.2} s)",
                    b.method,
                    rate * MIB / 1e9,
                    b.method,
                    human(b.block_bytes),
                    self.workers,
                    b.passes,
                    human(b.bytes),
                    b.seconds
                );
            }
            Found::Latency(l) => {
                let _ = writeln!(
                    s,
                    "  working set {}: {:.1} ns per access (median of {} chase(s) of {} loads; least {:.1} ns)",
                    human(l.bytes),
                    nan(l.ns_per_access),
                    l.chases,
                    l.accesses_per_chase,
                    nan(l.min_ns_per_access)
                );
            }
        }
        s
    }

    /// The mode's metrics.
    fn found_metrics(&self, m: &mut Vec<Metric>) {
        let mibps = |name: String, v: Option<f64>| Metric::new(name, "MiB/s", v.unwrap_or(f64::NAN), Better::Higher);
        let gauge = |name: &str, unit: &str, v: f64| Metric::new(name, unit, v, Better::Neither).with_kind(MetricKind::Gauge);
        match &self.found {
            Found::Touch(t) => {
                m.push(gauge("touched_mib", "MiB", t.touched_bytes as f64 / MIB));
                m.push(mibps("touch_mib_per_s".into(), t.touch_mib_per_s));
                if t.verify {
                    let run: Vec<&Pattern> = t.patterns.iter().filter(|p| p.errors.is_some()).collect();
                    let errors: u64 = run.iter().filter_map(|p| p.errors).sum();
                    m.push(Metric::new("verify_errors", "", errors as f64, Better::Lower));
                    m.push(Metric::new("verify_patterns_run", "", run.len() as f64, Better::Neither));
                    let failed = run.iter().filter(|p| p.errors != Some(0)).count();
                    m.push(Metric::new("verify_patterns_failed", "", failed as f64, Better::Lower));
                    for p in run {
                        let errors = p.errors.unwrap_or(0) as f64;
                        m.push(Metric::new(format!("pattern_{}_errors", p.name), "", errors, Better::Lower));
                    }
                }
            }
            Found::Bandwidth(Bandwidth::Stream(b)) => {
                for name in KERNELS {
                    m.push(mibps(format!("{name}_mib_per_s"), b.best_mib_per_s[name]));
                }
                m.push(mibps("read_mib_per_s".into(), b.read_mib_per_s));
                m.push(mibps("write_mib_per_s".into(), b.write_mib_per_s));
                m.push(gauge("array_mib", "MiB", b.array_bytes as f64 / MIB));
            }
            Found::Bandwidth(Bandwidth::Sequential(b)) => {
                m.push(mibps(format!("{}_mib_per_s", b.method), Some(b.mib_per_s())));
                m.push(Metric::new("passes", "", b.passes as f64, Better::Neither));
                m.push(gauge("block_mib", "MiB", b.block_bytes as f64 / MIB));
            }
            Found::Latency(l) => {
                let ns = l.ns_per_access.unwrap_or(f64::NAN);
                m.push(Metric::new("access_latency_ns", "ns", ns, Better::Lower));
                let min = l.min_ns_per_access.unwrap_or(f64::NAN);
                m.push(Metric::new("access_latency_min_ns", "ns", min, Better::Lower));
                m.push(Metric::new("accesses_per_s", "accesses/s", 1e9 / ns, Better::Higher));
                m.push(gauge("working_set_mib", "MiB", l.bytes as f64 / MIB));
            }
        }
    }

    pub fn to_result(&self) -> WorkloadResult {
        let mut r = WorkloadResult::default();
        self.found_metrics(&mut r.metrics);
        let tail = OpTail {
            ops: self.ops,
            errors: self.errors,
            latency: &self.latency,
            series: &self.series,
        };
        tail.finish(&mut r, &[("op_p99_ms", 0.99)], "ms", 1000.0);
        r
    }
}

impl crate::workload::driver::live::LoadOutcome for MemReport {
    fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
    fn summary(&self) -> String {
        MemReport::summary(self)
    }
    fn failed(&self) -> bool {
        self.errors > 0 || !self.measured_something()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::result::{assert_json_documented, doc_section, latency_histogram};

    fn report(mode: &'static str, found: Found) -> serde_json::Value {
        let r = MemReport {
            schema: SCHEMA,
            mode,
            workers: 1,
            measured_s: 1.0,
            interrupted: false,
            found,
            ops: 1,
            errors: 0,
            latency: latency_histogram(),
            series: Vec::new(),
        };
        crate::workload::driver::live::LoadOutcome::json(&r)
    }

    /// Each mode's document: its figures under the mode's name, every key named in docs/load.md.
    #[test]
    fn every_key_of_the_json_is_documented() {
        let doc = doc_section(include_str!("../../../docs/load.md"), "perflab.load.mem/1");
        let touch = Found::Touch(Touch {
            bytes: 1 << 20,
            touched_bytes: 1 << 20,
            touch_s: 0.5,
            touch_mib_per_s: Some(2.0),
            verify: true,
            patterns: vec![Pattern {
                name: "stuck_address",
                errors: None,
                ok: None,
                seconds: 0.0,
            }],
        });
        let stream = Found::Bandwidth(Bandwidth::Stream(Stream {
            method: "stream",
            array_bytes: 1 << 20,
            last_level_cache_bytes: None,
            iterations: 3,
            best_mib_per_s: KERNELS.iter().map(|k| (*k, Some(1.0))).collect(),
            read_mib_per_s: Some(1.0),
            write_mib_per_s: None,
        }));
        let read = Found::Bandwidth(Bandwidth::Sequential(Sequential {
            method: "read",
            block_bytes: 8,
            last_level_cache_bytes: Some(1),
            passes: 1,
            bytes: 8,
            seconds: 1.0,
            read_mib_per_s: Some(None),
            write_mib_per_s: None,
        }));
        let latency = Found::Latency(Latency {
            bytes: 1,
            ns_per_access: Some(1.0),
            min_ns_per_access: Some(1.0),
            chases: 1,
            accesses_per_chase: super::super::chase::ACCESSES,
        });
        let j = report("touch", touch);
        assert_eq!(j["touch"]["patterns"][0]["ok"], serde_json::Value::Null);
        assert_json_documented(&j, doc, &[]);
        let j = report("bandwidth", stream);
        assert_eq!(j["bandwidth"]["best_mib_per_s"].as_object().map(|o| o.len()), Some(4));
        assert_eq!(j["bandwidth"]["write_mib_per_s"], serde_json::Value::Null);
        assert_json_documented(&j, doc, &[]);
        let j = report("bandwidth", read);
        let b = j["bandwidth"].as_object().expect("bandwidth");
        assert!(b["read_mib_per_s"].is_null() && !b.contains_key("write_mib_per_s"), "{b:?}");
        assert_json_documented(&j, doc, &[]);
        assert_json_documented(&report("latency", latency), doc, &[]);
    }
}
