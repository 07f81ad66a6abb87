//! The rules over trials read one at a time (only the metrics they read) give the findings of the
//! trials pooled, and the summaries' gate never hides a rule that holds.

use super::super::{evaluate, evaluate_trials, gate, Context, PointSamples};
use crate::analysis::phases::trial_phases;
use crate::analysis::table::SampleTable;

/// One sample: its time, phase and values.
type Row = (f64, String, Vec<(String, f64)>);

/// A deterministic pseudo-random value in [0, 1) (no dependency on a generator's version).
fn unit(i: usize, salt: usize) -> f64 {
    let mut x = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (salt as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    x ^= x >> 29;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 32;
    (x % 1_000_000) as f64 / 1e6
}

/// Trial `k` of a point: 40 samples (10 baseline, 25 load, 5 recovery) of metrics that make
/// R1, R2, R3, R6 (against the baseline await), R7 and R10 hold in some samples, and others no
/// rule reads. `hot`: whether the load is heavy at all.
fn trial(k: usize, hot: bool) -> Vec<Row> {
    (0..40)
        .map(|i| {
            let phase = match i {
                0..=9 => "baseline",
                10..=34 => "load",
                _ => "recovery",
            };
            let load = phase == "load" && hot;
            let r = |salt| unit(k * 100 + i, salt);
            let mut v = vec![
                ("cpu_busy_pct".to_string(), if load { 88.0 + 12.0 * r(1) } else { 5.0 + r(1) }),
                ("procs_running".to_string(), if load { 1.0 + 4.0 * r(2) } else { 1.0 }),
                ("psi_cpu_some_avg10_pct".to_string(), if load { 20.0 * r(3) } else { 0.0 }),
                ("cpu0_busy_pct".to_string(), if load { 85.0 + 15.0 * r(4) } else { 3.0 }),
                ("cpu1_busy_pct".to_string(), if load { 85.0 + 15.0 * r(4) } else { 3.0 }),
                ("cpu_iowait_pct".to_string(), if load { 18.0 + 30.0 * r(5) } else { 0.5 }),
                ("disk_vda_util_pct".to_string(), if load { 89.0 + 11.0 * r(6) } else { 1.0 }),
                ("disk_vda_r_await_ms".to_string(), if load { 1.2 + 3.0 * r(7) } else { 0.4 + r(7) }),
                ("disk_vda_w_await_ms".to_string(), 1.0 + r(8)),
                ("mem_used_pct".to_string(), if load { 87.5 + 10.0 * r(9) } else { 25.0 }),
                ("mem_total_mb".to_string(), 2000.0),
                ("net_eth0_rx_pkts_per_s".to_string(), 100.0),
                ("net_eth0_tx_pkts_per_s".to_string(), 100.0),
                ("net_eth0_rx_drops_per_s".to_string(), if load && r(10) < 0.6 { 5.0 } else { 0.0 }),
                ("unread_metric_pct".to_string(), r(11)),
                ("ctx_switches_per_s".to_string(), 1000.0 * r(12)),
            ];
            if k % 2 == 1 {
                // A metric only some trials have, first in their samples.
                v.insert(0, ("tcp_retrans_per_s".to_string(), if load { r(13) } else { 0.0 }));
                v.push(("tcp_out_segs_per_s".to_string(), 10.0));
            }
            (0.05 * i as f64, phase.to_string(), v)
        })
        .collect()
}

fn table(rows: &[Row], wanted: &dyn Fn(&str) -> bool, t: &mut SampleTable) {
    for (ts, phase, v) in rows {
        t.push_row(*ts, phase, v.iter().filter(|(k, _)| wanted(k)).map(|(k, v)| (k.as_str(), *v)));
    }
}

const CTX: Context = Context {
    ncpu: 2,
    line_rate_mbitps: None,
    loadgen_cores: None,
    loadgen_unsampled: false,
};

#[test]
fn trials_one_at_a_time_find_what_the_pooled_samples_find() {
    let trials: Vec<_> = (0..5).map(|k| trial(k, true)).collect();
    let mut pooled = SampleTable::new();
    for t in &trials {
        table(t, &|_| true, &mut pooled);
    }
    let point = PointSamples {
        label: "n=1".into(),
        samples: pooled,
        oom_killed: false,
    };
    let want = evaluate(std::slice::from_ref(&point), &CTX);
    let rules: Vec<String> = want.iter().map(|f| f.rule.to_string()).collect();
    for r in ["R1", "R6", "R7", "R10"] {
        assert!(rules.iter().any(|x| x == r), "{r} should fire in the synthetic point: {rules:?}");
    }
    let mut read = |i: usize, wanted: &dyn Fn(&str) -> bool, t: &mut SampleTable| {
        table(&trials[i], wanted, t);
        Ok(())
    };
    let got = evaluate_trials("n=1", trials.len(), false, &CTX, &mut read).unwrap();
    // Equal as values and as JSON (every f64 bit for bit in its shortest form).
    assert_eq!(got, want);
    assert_eq!(serde_json::to_string(&got).unwrap(), serde_json::to_string(&want).unwrap());
}

#[test]
fn the_gate_passes_every_trial_where_a_rule_holds_and_stops_quiet_ones() {
    for (k, hot) in [(0, true), (1, true), (2, false), (3, false)] {
        let rows = trial(k, hot);
        let refs: Vec<_> = rows.iter().map(|(t, p, v)| (*t, p.as_str(), v.as_slice())).collect();
        let summaries = trial_phases(&refs, None);
        let mut read = |_: usize, wanted: &dyn Fn(&str) -> bool, t: &mut SampleTable| {
            table(&rows, wanted, t);
            Ok(())
        };
        let found = evaluate_trials("p", 1, false, &CTX, &mut read).unwrap();
        let may = gate::may_fire(&summaries, &CTX);
        assert!(may || found.is_empty(), "trial {k}: the gate hid {found:?}");
        assert_eq!(may, hot, "trial {k}: a quiet trial passes the gate, or a loaded one does not");
    }
}
