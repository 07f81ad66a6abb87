//! Cost per operation: what one operation of the workload (a request, a transaction, an I/O) cost
//! the target, from one trial's monitor samples of the target's process tree and the workload's
//! throughput (docs/metrics.md, "Cost per operation").
//!
//! Over the samples of the load phase, each sample standing for the interval since the one before
//! it (Δt):
//! - CPU µs per operation = Σ `proc_target_cpu_pct` / 100 × Δt ÷ (throughput × Σ Δt) × 10^6, the
//!   target's CPU time divided by the operations done in the same seconds;
//! - context switches per operation = Σ (`proc_target_cswch_per_s` + `proc_target_nvcswch_per_s`)
//!   × Δt ÷ (throughput × Σ Δt);
//! - memory per operation in flight = (the load phase's mean `proc_target_rss_mb` − the
//!   baseline's) × 2^20 ÷ the operations in flight (throughput × mean latency, Little's law; or the
//!   concurrency of a closed model when the workload has no mean latency): what each operation
//!   under way held of the target's memory.
//!
//! The report adds them to each trial's metrics, so the point's figure is their mean over the
//! repetitions with its 95 % CI, and compared variants get Δ % and a verdict as any metric does.

use super::table::SampleTable;

/// The target's CPU, in % of one core.
pub const CPU_PCT: &str = "proc_target_cpu_pct";
/// The target's voluntary and involuntary context switches per second.
pub const CSWCH: &str = "proc_target_cswch_per_s";
pub const NVCSWCH: &str = "proc_target_nvcswch_per_s";
/// The target's resident memory, MiB.
pub const RSS_MB: &str = "proc_target_rss_mb";

/// The metrics the report adds to a trial.
pub const CPU_US_PER_OP: &str = "target_cpu_us_per_op";
pub const CSWITCHES_PER_OP: &str = "target_cswitches_per_op";
pub const MEM_BYTES_PER_OP: &str = "target_mem_bytes_per_op";

/// Whether a sampled metric is one the cost reads.
pub fn reads(metric: &str) -> bool {
    matches!(metric, CPU_PCT | CSWCH | NVCSWCH | RSS_MB)
}

/// One trial's cost per operation; each figure None where the samples lack what it needs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cost {
    pub cpu_us: Option<f64>,
    pub cswitches: Option<f64>,
    pub mem_bytes: Option<f64>,
}

impl Cost {
    pub fn is_empty(&self) -> bool {
        self.cpu_us.is_none() && self.cswitches.is_none() && self.mem_bytes.is_none()
    }
}

/// Σ value × Δt and Σ Δt over the load-phase samples that have every one of `cols`, summed.
fn integral(t: &SampleTable, cols: &[usize]) -> Option<(f64, f64)> {
    let (mut area, mut secs) = (0.0, 0.0);
    for row in 1..t.len() {
        if t.phase(row) != "load" {
            continue;
        }
        let dt = t.t_s(row) - t.t_s(row - 1);
        if dt <= 0.0 {
            continue;
        }
        let vals: Option<Vec<f64>> = cols.iter().map(|c| t.value(row, *c)).collect();
        if let Some(v) = vals {
            area += v.iter().sum::<f64>() * dt;
            secs += dt;
        }
    }
    (secs > 0.0).then_some((area, secs))
}

/// The mean of a column over the samples of `phase` that have it.
fn mean_in(t: &SampleTable, c: usize, phase: &str) -> Option<f64> {
    let v: Vec<f64> = (0..t.len())
        .filter(|r| t.phase(*r) == phase)
        .filter_map(|r| t.value(r, c))
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The cost per operation of one trial: its samples (`t`, the target's process-tree figures on
/// the host it ran on), its throughput in operations per second and the operations it had in
/// flight (None when unknown).
pub fn of_trial(t: &SampleTable, ops_per_s: f64, in_flight: Option<f64>) -> Cost {
    if !(ops_per_s.is_finite() && ops_per_s > 0.0) {
        return Cost::default();
    }
    let per_op = |cols: &[usize], scale: f64| integral(t, cols).map(|(area, secs)| area * scale / (ops_per_s * secs));
    let cpu_us = t.col(CPU_PCT).and_then(|c| per_op(&[c], 1e6 / 100.0));
    let cswitches = t.col(CSWCH).zip(t.col(NVCSWCH)).and_then(|(a, b)| per_op(&[a, b], 1.0));
    let mem_bytes = t.col(RSS_MB).and_then(|c| {
        let grown = mean_in(t, c, "load")? - mean_in(t, c, "baseline")?;
        let n = in_flight.filter(|n| n.is_finite() && *n > 0.0)?;
        Some(grown * 1_048_576.0 / n)
    });
    Cost {
        cpu_us,
        cswitches,
        mem_bytes,
    }
}

/// Operations in flight by Little's law: throughput (1/s) × mean latency (ms).
pub fn in_flight(ops_per_s: f64, mean_latency_ms: f64) -> f64 {
    ops_per_s * mean_latency_ms / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[(f64, &str, f64, f64, f64, f64)]) -> SampleTable {
        let mut t = SampleTable::new();
        for (ts, phase, cpu, vcs, nvcs, rss) in rows {
            t.push_row(*ts, phase, [(CPU_PCT, *cpu), (CSWCH, *vcs), (NVCSWCH, *nvcs), (RSS_MB, *rss)]);
        }
        t
    }

    #[test]
    fn cpu_time_and_switches_over_the_operations_of_the_same_seconds() {
        // Baseline at 0 and 1 s; load samples at 2, 3 and 5 s (a late tick: 2 s interval).
        let t = table(&[
            (0.0, "baseline", 1.0, 10.0, 0.0, 10.0),
            (1.0, "baseline", 1.0, 10.0, 0.0, 10.0),
            (2.0, "load", 50.0, 900.0, 100.0, 12.0),
            (3.0, "load", 50.0, 900.0, 100.0, 12.0),
            (5.0, "load", 100.0, 1900.0, 100.0, 14.0),
            (6.0, "recovery", 1.0, 10.0, 0.0, 10.0),
        ]);
        // CPU: 0.5 + 0.5 + 1.0 × 2 = 3 CPU-s over 4 s at 1000 ops/s = 4000 ops: 750 µs per op.
        // Switches: 1000 + 1000 + 2000 × 2 = 6000 over 4000 ops = 1.5 per op.
        // Memory: load mean 38/3 MiB − baseline 10 MiB over 10 in flight.
        let c = of_trial(&t, 1000.0, Some(10.0));
        assert!((c.cpu_us.unwrap() - 750.0).abs() < 1e-9, "{c:?}");
        assert!((c.cswitches.unwrap() - 1.5).abs() < 1e-12, "{c:?}");
        let want = (38.0 / 3.0 - 10.0) * 1_048_576.0 / 10.0;
        assert!((c.mem_bytes.unwrap() - want).abs() < 1e-6, "{c:?}");
        assert_eq!(of_trial(&t, 1000.0, None).mem_bytes, None);
        assert!(of_trial(&t, 0.0, Some(1.0)).is_empty());
        assert!((in_flight(333.0, 30.0) - 9.99).abs() < 1e-9);
    }

    #[test]
    fn no_target_samples_no_cost() {
        let mut t = SampleTable::new();
        t.push_row(0.0, "baseline", [("cpu_busy_pct", 5.0)]);
        t.push_row(1.0, "load", [("cpu_busy_pct", 50.0)]);
        assert!(of_trial(&t, 100.0, Some(4.0)).is_empty());
    }
}
