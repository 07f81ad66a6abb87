//! Property: for every sampled rule, over random trials (random metrics present or absent in
//! each sample, values around every threshold, random run facts), the gate never hides a sample
//! where the rule's condition holds, nor a finding the full evaluation gives.

use super::super::eval::{Compiled, Scope};
use super::super::rule::{tests, val_metrics};
use super::super::rules::sampled;
use super::super::{evaluate_trials, Context};
use super::may_hold;
use crate::analysis::phases::{refs, trial_phases, Sample, LOAD};
use crate::analysis::table::SampleTable;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::cell::Cell;
use std::collections::BTreeMap;

/// Every metric some rule reads (from the declarations), a name with a bound part once per
/// middle a pattern may match (CPUs 0 and 1, a disk, an interface and loopback, a cgroup).
fn metrics() -> Vec<String> {
    const MIDDLES: [&str; 6] = ["0", "1", "vda", "eth0", "lo", "proc_target_"];
    let mut names: Vec<&'static str> = Vec::new();
    for rule in sampled() {
        let cond = rule.cond().unwrap();
        let mut ts = Vec::new();
        tests(cond, None, &mut ts);
        for (t, _) in &ts {
            val_metrics(&t.lhs, &mut names);
            val_metrics(&t.rhs, &mut names);
        }
    }
    let mut out: Vec<String> = Vec::new();
    for n in names {
        let all: Vec<String> = if n.contains("{}") {
            MIDDLES.iter().map(|m| n.replace("{}", m)).collect()
        } else {
            vec![n.to_string()]
        };
        for a in all {
            if !out.contains(&a) {
                out.push(a);
            }
        }
    }
    out
}

/// Values near the thresholds the rules use, and some anywhere.
fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        prop::sample::select(vec![
            0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 9.99, 10.0, 10.01, 18.0, 20.0, 45.0, 50.0, 60.0, 70.0, 75.0, 89.99, 90.0, 90.01, 100.0,
            110.0, 180.0, 200.0, 500.0, 900.0, 1000.0
        ]),
        0.0..1200.0f64,
    ]
}

/// One sample: every metric present with probability 3/4.
fn sample_values() -> impl Strategy<Value = Vec<(String, f64)>> {
    let names = metrics();
    prop::collection::vec((any::<u8>(), value()), names.len()).prop_map(move |v| {
        names
            .iter()
            .zip(v)
            .filter(|(_, (keep, _))| keep % 4 != 0)
            .map(|(m, (_, x))| (m.clone(), x))
            .collect()
    })
}

/// A trial: 2 to 6 baseline samples then 1 to 12 load samples.
fn trial() -> impl Strategy<Value = Vec<Sample>> {
    (
        prop::collection::vec(sample_values(), 2..6),
        prop::collection::vec(sample_values(), 1..12),
    )
        .prop_map(|(b, l)| {
            let mut out: Vec<Sample> = Vec::new();
            for (i, v) in b.into_iter().enumerate() {
                out.push((i as f64, "baseline".into(), v));
            }
            let n = out.len();
            for (i, v) in l.into_iter().enumerate() {
                out.push(((n + i) as f64, LOAD.into(), v));
            }
            out
        })
}

fn context() -> impl Strategy<Value = Context> {
    (
        1u32..9,
        prop::option::of(100.0..2000.0f64),
        prop::option::of(0.5..8.0f64),
        any::<bool>(),
    )
        .prop_map(|(ncpu, line, cores, unsampled)| Context {
            ncpu,
            line_rate_mbitps: line,
            loadgen_cores: cores,
            loadgen_unsampled: unsampled,
        })
}

fn cases() -> u32 {
    std::env::var("PERFLAB_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(400)
}

#[test]
fn the_gate_never_hides_a_sample_where_a_rule_holds() {
    let seed: [u8; 32] = *b"perflab bottleneck gate property";
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases: cases(),
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed),
    );
    let held_somewhere = std::cell::RefCell::new(BTreeMap::<String, usize>::new());
    runner
        .run(&(trial(), context()), |(rows, ctx)| {
            let summaries = trial_phases(&refs(&rows), None);
            let table = SampleTable::from_refs(&refs(&rows));
            // The baseline the rules compare with: this trial's own (the gate must not rely on it).
            let mut baseline = BTreeMap::new();
            for (_, phase, v) in rows.iter().filter(|r| r.1 == "baseline") {
                debug_assert_eq!(phase, "baseline");
                for (k, x) in v {
                    let e: &mut (f64, usize) = baseline.entry(k.clone()).or_insert((0.0, 0));
                    e.0 += x;
                    e.1 += 1;
                }
            }
            let baseline: BTreeMap<String, f64> = baseline.into_iter().map(|(k, (s, n))| (k, s / n as f64)).collect();
            let scope = Scope {
                table: &table,
                baseline: &baseline,
                ctx: &ctx,
            };
            for rule in sampled() {
                let compiled = Compiled::new(rule.cond().unwrap(), &scope);
                let gate = may_hold(rule, &summaries, &ctx);
                for row in (0..table.len()).filter(|&r| table.phase(r) == LOAD) {
                    let mut quotes = Vec::new();
                    if compiled.judge(&table, row, &Cell::new(false), &mut quotes) == Some(true) {
                        *held_somewhere.borrow_mut().entry(rule.id.to_string()).or_default() += 1;
                        prop_assert!(
                            gate,
                            "{}: holds in load row {row} but the gate says it cannot: {rows:?} {ctx:?}",
                            rule.id
                        );
                    }
                }
            }
            // And the findings the full evaluation gives.
            let mut read = |_: usize, wanted: &dyn Fn(&str) -> bool, t: &mut SampleTable| {
                for (ts, phase, v) in &rows {
                    t.push_row(*ts, phase, v.iter().filter(|(k, _)| wanted(k)).map(|(k, x)| (k.as_str(), *x)));
                }
                Ok(())
            };
            let found = evaluate_trials("p", 1, false, &ctx, &mut read).unwrap();
            for f in found {
                let rule = sampled().find(|r| r.id == f.rule).unwrap();
                prop_assert!(may_hold(rule, &summaries, &ctx), "{} fired but the gate hid it", f.rule);
            }
            Ok(())
        })
        .unwrap();
    // Every rule held somewhere: the property was exercised for each.
    let held_somewhere = held_somewhere.into_inner();
    for rule in sampled() {
        assert!(
            held_somewhere.contains_key(&rule.id.to_string()),
            "{} never held in {} cases: {held_somewhere:?}",
            rule.id,
            cases()
        );
    }
}
