//! The rules over one point's trials read one at a time, so that memory holds one trial's samples
//! rather than every repetition's. Every sum runs over the samples in the order the pooled table
//! would hold them (trial after trial), so the findings are the same, bit for bit, as over the
//! pooled table:
//!
//! 1. each trial's load samples are judged by every rule (how many held, how many could be
//!    judged, the culprits first seen) and its baseline samples added to the baseline sums;
//! 2. a rule that read a baseline mean (R6 reads the baseline await) is judged again, trial by
//!    trial, once the baseline means of the whole point are known;
//! 3. for the rules that fired, the load-phase values of the metrics they quote are read (only
//!    those metrics) for the evidence's mean, p95 and crossings.

use super::rules::RULES;
use super::{Context, Env, Evidence, Fired, Hit, Matches, Op, FIRE_FRACTION};
use crate::analysis::phases::{BASELINE, LOAD};
use crate::analysis::stats::quantile_sorted;
use crate::analysis::table::SampleTable;
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};

/// Reads trial `i` of a point into the table: `read(i, wanted, table)` appends its samples, at
/// least those of the metrics `wanted` accepts.
pub type Read<'r> = dyn FnMut(usize, &dyn Fn(&str) -> bool, &mut SampleTable) -> anyhow::Result<()> + 'r;

/// Whether a rule may read this metric (what a trial's table needs for the rules; the evidence
/// reads the metrics the rules named).
pub fn reads(name: &str) -> bool {
    const EXACT: [&str; 20] = [
        "cpu_busy_pct",
        "cpu_user_pct",
        "cpu_system_pct",
        "cpu_iowait_pct",
        "cpu_steal_pct",
        "procs_running",
        "load_1",
        "psi_cpu_some_avg10_pct",
        "psi_io_some_avg10_pct",
        "psi_mem_full_avg10_pct",
        "swap_out_pages_per_s",
        "major_faults_per_s",
        "mem_available_mb",
        "mem_total_mb",
        "oom_kills",
        "oom_kills_per_s",
        "tcp_listen_overflows_per_s",
        "tcp_retrans_per_s",
        "tcp_out_segs_per_s",
        "proc_target_cpu_pct",
    ];
    const DISK: [&str; 4] = ["_util_pct", "_aqu_sz", "_r_await_ms", "_w_await_ms"];
    const NET: [&str; 8] = [
        "_pkts_per_s",
        "_rx_errs_per_s",
        "_tx_errs_per_s",
        "_rx_drops_per_s",
        "_tx_drops_per_s",
        "_rx_mbitps",
        "_tx_mbitps",
        "_errs_per_s",
    ];
    EXACT.contains(&name)
        || matches!(name, "proc_loadgen_cpu_pct" | "proc_loadgen_threads")
        || name.ends_with("throttled_pct")
        || (name.starts_with("cpu") && name.ends_with("_busy_pct"))
        || (name.starts_with("disk_") && DISK.iter().any(|s| name.ends_with(s)))
        || (name.starts_with("net_") && NET.iter().any(|s| name.ends_with(s)))
}

/// One rule at one point so far.
#[derive(Default)]
struct Acc {
    held: usize,
    evaluable: usize,
    /// Culprit metric -> (op, threshold, source), first seen.
    culprits: BTreeMap<String, (Op, f64, &'static str)>,
    used_baseline: bool,
}

/// Where each rule fired at one point (indexed as `RULES`), its trials read one at a time.
pub(super) fn point(label: &str, trials: usize, oom_killed: bool, ctx: &Context, read: &mut Read<'_>) -> anyhow::Result<Vec<Fired>> {
    let mut table = SampleTable::new();
    let mut acc: Vec<Acc> = RULES.iter().map(|_| Acc::default()).collect();
    let all: Vec<usize> = (0..RULES.len()).collect();
    let none = BTreeMap::new();
    let mut sums: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for i in 0..trials {
        table.clear_rows();
        read(i, &reads, &mut table)?;
        add_baseline(&table, &mut sums);
        judge(&all, &mut acc, &table, &none, ctx);
    }
    let baseline: BTreeMap<String, f64> = sums.into_iter().map(|(k, (s, n))| (k, s / n as f64)).collect();
    let again: Vec<usize> = all.iter().copied().filter(|&r| acc[r].used_baseline).collect();
    if !again.is_empty() {
        for &r in &again {
            acc[r] = Acc::default();
        }
        for i in 0..trials {
            table.clear_rows();
            read(i, &reads, &mut table)?;
            judge(&again, &mut acc, &table, &baseline, ctx);
        }
    }
    let fired: Vec<bool> = RULES
        .iter()
        .zip(&acc)
        .map(|(rule, a)| {
            if rule.event {
                a.held > 0 || (rule.id == "R8" && oom_killed)
            } else {
                a.evaluable > 0 && a.held as f64 >= FIRE_FRACTION * a.evaluable as f64
            }
        })
        .collect();
    let quoted: BTreeSet<String> = acc
        .iter()
        .zip(&fired)
        .filter(|(_, f)| **f)
        .flat_map(|(a, _)| a.culprits.keys().cloned())
        .collect();
    let values = if quoted.is_empty() {
        BTreeMap::new()
    } else {
        load_values(trials, &quoted, read)?
    };
    Ok(RULES
        .iter()
        .zip(acc)
        .zip(fired)
        .map(|((rule, a), fired)| fired.then(|| finish(label, rule.event, a, &baseline, &values)))
        .collect())
}

/// Add the baseline samples of one trial to the sums, column by column in sample order.
fn add_baseline(t: &SampleTable, sums: &mut BTreeMap<String, (f64, usize)>) {
    let rows: Vec<usize> = (0..t.len()).filter(|&r| t.phase(r) == BASELINE).collect();
    for (c, name) in t.names().iter().enumerate() {
        for &r in &rows {
            if let Some(v) = t.value(r, c) {
                let e = sums.entry(name.clone()).or_insert((0.0, 0));
                e.0 += v;
                e.1 += 1;
            }
        }
    }
}

/// Judge the load samples of one trial by the rules `which`.
fn judge(which: &[usize], acc: &mut [Acc], t: &SampleTable, baseline: &BTreeMap<String, f64>, ctx: &Context) {
    let load: Vec<usize> = (0..t.len()).filter(|&r| t.phase(r) == LOAD).collect();
    let matches = Matches::default();
    for &ri in which {
        let (rule, a) = (&RULES[ri], &mut acc[ri]);
        let used = Cell::new(false);
        for &row in &load {
            let env = Env {
                table: t,
                row,
                matches: &matches,
                baseline,
                used_baseline: &used,
                ncpu: ctx.ncpu.max(1) as f64,
                ctx,
            };
            let Some(c) = (rule.check)(&env) else {
                continue;
            };
            a.evaluable += 1;
            if !c.is_empty() {
                a.held += 1;
                for k in c {
                    a.culprits.entry(k.metric).or_insert((k.op, k.threshold, k.source));
                }
            }
        }
        a.used_baseline |= used.get();
    }
}

/// The load-phase values of the `quoted` metrics over every trial, in sample order.
fn load_values(trials: usize, quoted: &BTreeSet<String>, read: &mut Read<'_>) -> anyhow::Result<BTreeMap<String, Vec<f64>>> {
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut table = SampleTable::new();
    let wanted = |n: &str| quoted.contains(n);
    for i in 0..trials {
        table.clear_rows();
        read(i, &wanted, &mut table)?;
        let load: Vec<usize> = (0..table.len()).filter(|&r| table.phase(r) == LOAD).collect();
        for m in quoted {
            if let Some(c) = table.col(m) {
                out.entry(m.clone())
                    .or_default()
                    .extend(load.iter().filter_map(|&r| table.value(r, c)));
            }
        }
    }
    Ok(out)
}

/// The hit and evidence of a rule that fired.
fn finish(
    label: &str,
    event: bool,
    a: Acc,
    baseline: &BTreeMap<String, f64>,
    values: &BTreeMap<String, Vec<f64>>,
) -> (Hit, Vec<Evidence>, bool) {
    let critical = event || a.held as f64 >= 0.9 * a.evaluable as f64;
    let evidence = a
        .culprits
        .into_iter()
        .filter_map(|(metric, (op, threshold, source))| {
            let mut vals = values.get(&metric)?.clone();
            if vals.is_empty() {
                return None;
            }
            vals.sort_by(|a, b| a.total_cmp(b));
            let mean = vals.iter().sum::<f64>() / vals.len() as f64;
            Some(Evidence {
                point: label.to_string(),
                baseline: baseline.get(&metric).copied(),
                mean,
                p95: quantile_sorted(&vals, 0.95).unwrap_or(mean),
                op: op.as_str().into(),
                threshold,
                crossed: vals.iter().filter(|v| op.holds(**v, threshold)).count(),
                samples: vals.len(),
                source: source.into(),
                metric,
            })
        })
        .collect();
    let hit = Hit {
        point: label.to_string(),
        held: a.held,
        samples: a.evaluable,
    };
    (hit, evidence, critical)
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
