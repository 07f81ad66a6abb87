//! Cost per operation in the report (`crate::analysis::cost`): each ok trial with samples of its
//! target and a throughput that counts operations gets three more metrics (the target's CPU µs,
//! context switches and memory bytes per operation), computed from its stored samples when the
//! report is made; the points, the comparisons (`perflab compare` too) and the answer table's
//! cost cell read them as any metric. Imports nothing else from `report/` but `loaded` and `model`.

use super::loaded::Loaded;
use super::model::{MetricRow, PointReport};
use crate::analysis::cost::{self, Cost};
use crate::analysis::table::SampleTable;
use crate::model::{figures, Better, Metric};
use crate::store::{Store, LOCAL_HOST};
use std::rc::Rc;

/// Throughputs that count operations, where the workload declares none (in order of preference).
const OPERATION_RATES: &[&str] = &["requests_per_s", "transactions_per_s", "iops", "ops_per_s", "events_per_s"];
/// The workload's mean latency, ms (for the operations in flight), in order of preference.
pub const MEAN_LATENCY_MS: &[&str] = &["latency_mean_ms", "total_mean_ms", "latency_avg_ms"];
/// The closed model's concurrency, where no mean latency is known.
pub const CONCURRENCY: &[&str] = &["connections", "concurrency"];

/// Whether a throughput counts operations (requests/s, IOPS), not bytes or bits.
fn counts_operations(name: &str, unit: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let u = unit.to_ascii_lowercase();
    let bytes_or_bits = ["mib", "mb_", "kib", "gbit", "mbit", "bytes"].iter().any(|b| n.contains(b))
        || ["b/s", "bit", "byte"].iter().any(|b| u.contains(b));
    !bytes_or_bits
}

/// The trial's throughput in operations per second: (metric, value).
pub fn operation_rate(l: &Loaded) -> Option<(String, f64)> {
    let t = &l.trial;
    let declared: Vec<&str> = figures::of(&t.workload).map(|f| f.primary.throughput.to_vec()).unwrap_or_default();
    let names: Vec<&str> = declared.into_iter().chain(OPERATION_RATES.iter().copied()).collect();
    names.iter().find_map(|want| {
        t.metrics
            .iter()
            .find(|m| figures::shows(want, &m.name) && counts_operations(&m.name, &m.unit))
            .filter(|m| m.value.is_finite() && m.value > 0.0)
            .map(|m| (m.name.clone(), m.value))
    })
}

/// What one operation is, from the throughput's name: "request", "transaction", "I/O".
pub fn noun(rate_metric: &str) -> &'static str {
    let n = rate_metric.to_ascii_lowercase();
    if n.contains("request") {
        "request"
    } else if n.contains("transaction") {
        "transaction"
    } else if n.contains("iops") {
        "I/O"
    } else if n.contains("quer") {
        "query"
    } else if n.contains("event") {
        "event"
    } else {
        "operation"
    }
}

/// The operations a trial had in flight: throughput × mean latency, else its concurrency.
fn in_flight(l: &Loaded, ops_per_s: f64) -> Option<f64> {
    let t = &l.trial;
    MEAN_LATENCY_MS
        .iter()
        .find_map(|m| t.metric(m))
        .map(|ms| cost::in_flight(ops_per_s, ms))
        .or_else(|| CONCURRENCY.iter().find_map(|m| t.metric(m)))
}

/// The hosts a store has samples of, this machine first (cached per store).
fn hosts_of(cache: &mut Vec<(*const Store, Vec<String>)>, store: &Rc<Store>) -> anyhow::Result<Vec<String>> {
    let key = Rc::as_ptr(store);
    if let Some((_, h)) = cache.iter().find(|(k, _)| *k == key) {
        return Ok(h.clone());
    }
    let hosts = store.sample_hosts()?;
    cache.push((key, hosts.clone()));
    Ok(hosts)
}

/// One trial's cost: from the samples of the host its target ran on (this machine, else the
/// first host whose samples have the target).
fn trial_cost(l: &Loaded, hosts: &[String], ops_per_s: f64) -> anyhow::Result<Cost> {
    let mut order: Vec<&str> = vec![LOCAL_HOST];
    order.extend(hosts.iter().map(String::as_str).filter(|h| *h != LOCAL_HOST));
    for host in order {
        let mut t = SampleTable::new();
        l.store.read_sample_table(l.trial.id, host, &cost::reads, &mut t)?;
        if t.col(cost::CPU_PCT).is_some() {
            return Ok(cost::of_trial(&t, ops_per_s, in_flight(l, ops_per_s)));
        }
    }
    Ok(Cost::default())
}

/// Add the cost per operation to every ok, sampled trial that has an operation throughput.
pub fn add_to_trials(loaded: &mut [Loaded]) -> anyhow::Result<()> {
    let mut cache = Vec::new();
    for l in loaded.iter_mut().filter(|l| l.sampled && l.trial.ok()) {
        let Some((_, ops)) = operation_rate(l) else { continue };
        if l.trial.metric(cost::CPU_US_PER_OP).is_some() {
            continue;
        }
        let hosts = hosts_of(&mut cache, &l.store)?;
        let c = trial_cost(l, &hosts, ops)?;
        let m = &mut l.trial.metrics;
        if let Some(v) = c.cpu_us {
            m.push(Metric::new(cost::CPU_US_PER_OP, "µs", v, Better::Lower));
        }
        if let Some(v) = c.cswitches {
            m.push(Metric::new(cost::CSWITCHES_PER_OP, "", v, Better::Lower));
        }
        if let Some(v) = c.mem_bytes {
            m.push(Metric::new(cost::MEM_BYTES_PER_OP, "B", v, Better::Lower));
        }
    }
    Ok(())
}

fn row<'a>(p: &'a PointReport, name: &str) -> Option<&'a MetricRow> {
    p.metrics.iter().find(|m| m.name == name)
}

/// "1.2 KiB", "340 B", "-2.0 KiB".
fn bytes(v: f64) -> String {
    let a = v.abs();
    if a >= 1_048_576.0 {
        format!("{:.1} MiB", v / 1_048_576.0)
    } else if a >= 1024.0 {
        format!("{:.1} KiB", v / 1024.0)
    } else {
        format!("{v:.0} B")
    }
}

/// Δ % of a figure against the baseline point's, as " (+12 %)".
fn delta(v: f64, before: Option<f64>) -> String {
    match before {
        Some(b) if b != 0.0 && b.is_finite() => format!(" ({:+.0} %)", 100.0 * (v - b) / b.abs()),
        _ => String::new(),
    }
}

/// The answer table's cost cell: "38 µs CPU (+12 %), 2.1 switches (+150 %), 12 KiB in flight",
/// each against the baseline point's where there is one (`before`): the target's CPU, context
/// switches and memory per operation (in flight).
pub fn cell_text(p: &PointReport, before: Option<&PointReport>) -> Option<String> {
    let figure = |name: &str| row(p, name).map(|r| (r.summary.mean, r.summary.ci95));
    let was = |name: &str| before.and_then(|b| row(b, name)).map(|r| r.summary.mean);
    let (cpu, ci) = figure(cost::CPU_US_PER_OP)?;
    let mut parts = vec![format!(
        "{} µs CPU{}",
        super::fmt::num_ci(cpu, ci),
        delta(cpu, was(cost::CPU_US_PER_OP))
    )];
    if let Some((cs, ci)) = figure(cost::CSWITCHES_PER_OP) {
        parts.push(format!(
            "{} switches{}",
            super::fmt::num_ci(cs, ci),
            delta(cs, was(cost::CSWITCHES_PER_OP))
        ));
    }
    if let Some((mem, _)) = figure(cost::MEM_BYTES_PER_OP) {
        parts.push(format!(
            "{} memory in flight{}",
            bytes(mem),
            delta(mem, was(cost::MEM_BYTES_PER_OP))
        ));
    }
    Some(parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_are_counted_not_bytes() {
        assert!(counts_operations("requests_per_s", "req/s"));
        assert!(counts_operations("read_iops", "IOPS"));
        assert!(!counts_operations("received_mbitps", "Mbit/s"));
        assert!(!counts_operations("touch_mib_per_s", "MiB/s"));
        assert!(!counts_operations("transfer_mb_s", "MB/s"));
        assert_eq!(noun("requests_per_s"), "request");
        assert_eq!(noun("write_iops"), "I/O");
        assert_eq!(noun("transactions_per_s"), "transaction");
        assert_eq!(bytes(12_800.0), "12.5 KiB");
        assert_eq!(delta(3.0, Some(2.0)), " (+50 %)");
    }
}
