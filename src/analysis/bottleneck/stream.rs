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

use super::eval::{Compiled, Quote, Scope};
use super::rule::{patterns, tests, val_metrics, Op, Pattern, Rule, When};
use super::rules::sampled;
use super::{Context, Evidence, Fired, Hit, FIRE_FRACTION};
use crate::analysis::phases::{BASELINE, LOAD};
use crate::analysis::stats::quantile_sorted;
use crate::analysis::table::SampleTable;
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// Reads trial `i` of a point into the table: `read(i, wanted, table)` appends its samples, at
/// least those of the metrics `wanted` accepts.
pub type Read<'r> = dyn FnMut(usize, &dyn Fn(&str) -> bool, &mut SampleTable) -> anyhow::Result<()> + 'r;

/// What the rules read: exact names, and (prefix, suffix) of the names with a bound part.
struct ReadSet {
    exact: BTreeSet<&'static str>,
    forms: Vec<(&'static str, &'static str)>,
}

fn read_set() -> &'static ReadSet {
    static SET: OnceLock<ReadSet> = OnceLock::new();
    SET.get_or_init(|| {
        let mut set = ReadSet {
            exact: BTreeSet::new(),
            forms: Vec::new(),
        };
        for rule in sampled() {
            let cond = rule.cond().expect("a sampled rule has a condition");
            let mut ts = Vec::new();
            tests(cond, None, &mut ts);
            let mut names = Vec::new();
            for (t, _) in &ts {
                val_metrics(&t.lhs, &mut names);
                val_metrics(&t.rhs, &mut names);
            }
            let mut forms: Vec<(&'static str, &'static str)> = Vec::new();
            for n in names {
                match n.split_once("{}") {
                    Some(form) => forms.push(form),
                    None => {
                        set.exact.insert(n);
                    }
                }
            }
            let mut ps: Vec<Pattern> = Vec::new();
            patterns(cond, &mut ps);
            forms.extend(ps.iter().map(|p| (p.prefix, p.suffix)));
            for f in forms {
                if !set.forms.contains(&f) {
                    set.forms.push(f);
                }
            }
        }
        set
    })
}

/// Whether a rule may read this metric (what a trial's table needs for the rules; the evidence
/// reads the metrics the rules named).
pub fn reads(name: &str) -> bool {
    let set = read_set();
    set.exact.contains(name)
        || set
            .forms
            .iter()
            .any(|(pre, suf)| name.len() > pre.len() + suf.len() && name.starts_with(pre) && name.ends_with(suf))
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

/// Where each sampled rule fired at one point (indexed as [`sampled`]), its trials read one at a
/// time.
pub(super) fn point(label: &str, trials: usize, oom_killed: bool, ctx: &Context, read: &mut Read<'_>) -> anyhow::Result<Vec<Fired>> {
    let rules: Vec<&Rule> = sampled().collect();
    let mut table = SampleTable::new();
    let mut acc: Vec<Acc> = rules.iter().map(|_| Acc::default()).collect();
    let all: Vec<usize> = (0..rules.len()).collect();
    let none = BTreeMap::new();
    let mut sums: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for i in 0..trials {
        table.clear_rows();
        read(i, &reads, &mut table)?;
        add_baseline(&table, &mut sums);
        judge(&rules, &all, &mut acc, &table, &none, ctx);
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
            judge(&rules, &again, &mut acc, &table, &baseline, ctx);
        }
    }
    let fired: Vec<bool> = rules
        .iter()
        .zip(&acc)
        .map(|(rule, a)| match rule.when {
            When::Event { oom, .. } => a.held > 0 || (oom && oom_killed),
            _ => a.evaluable > 0 && a.held as f64 >= FIRE_FRACTION * a.evaluable as f64,
        })
        .collect();
    let mut quoted: BTreeSet<String> = acc
        .iter()
        .zip(&fired)
        .filter(|(_, f)| **f)
        .flat_map(|(a, _)| a.culprits.keys().cloned())
        .collect();
    for (rule, f) in rules.iter().zip(&fired) {
        if let (true, Some(fig)) = (*f, rule.figure) {
            quoted.insert(fig.metric.to_string());
        }
    }
    let values = if quoted.is_empty() {
        BTreeMap::new()
    } else {
        load_values(trials, &quoted, read)?
    };
    Ok(rules
        .iter()
        .zip(acc)
        .zip(fired)
        .map(|((rule, a), fired)| fired.then(|| finish(label, rule, a, &baseline, &values)))
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
fn judge(rules: &[&Rule], which: &[usize], acc: &mut [Acc], t: &SampleTable, baseline: &BTreeMap<String, f64>, ctx: &Context) {
    let load: Vec<usize> = (0..t.len()).filter(|&r| t.phase(r) == LOAD).collect();
    let scope = Scope { table: t, baseline, ctx };
    for &ri in which {
        let a = &mut acc[ri];
        let Some(cond) = rules[ri].cond() else { continue };
        let compiled = Compiled::new(cond, &scope);
        let used = Cell::new(false);
        let mut quotes: Vec<Quote> = Vec::new();
        for &row in &load {
            quotes.clear();
            let Some(holds) = compiled.judge(t, row, &used, &mut quotes) else {
                continue;
            };
            a.evaluable += 1;
            if holds {
                a.held += 1;
                for q in &quotes {
                    if !a.culprits.contains_key(q.metric) {
                        a.culprits.insert(q.metric.to_string(), (q.op, q.threshold, q.source));
                    }
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
    rule: &Rule,
    a: Acc,
    baseline: &BTreeMap<String, f64>,
    values: &BTreeMap<String, Vec<f64>>,
) -> (Hit, Vec<Evidence>, bool) {
    let event = matches!(rule.when, When::Event { .. });
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
    let figure = rule.figure.and_then(|fig| {
        let vals = values.get(fig.metric).filter(|v| !v.is_empty())?;
        Some(fig.scale * vals.iter().sum::<f64>() / vals.len() as f64)
    });
    let hit = Hit {
        point: label.to_string(),
        held: a.held,
        samples: a.evaluable,
        figure,
    };
    (hit, evidence, critical)
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
