//! Knee detection on a synthetic curve, and the phase table with recovery time.

use perflab::analysis::phases::{metric_phases, pool, refs, trial_phases, Sample};
use perflab::analysis::scaling::{analyze, ScalingPoint};
use perflab::analysis::stats::Summary;

fn point(x: f64, tput: f64, lat: f64, cpu: f64) -> ScalingPoint {
    ScalingPoint {
        x,
        throughput: Summary::of(&[tput * 0.99, tput, tput * 1.01]).expect("values"),
        latency: Some(lat),
        system: vec![("cpu_busy_pct".into(), cpu), ("mem_used_pct".into(), 20.0)],
    }
}

#[test]
fn knee_on_a_synthetic_curve() {
    // Linear to 8, then flat (+2 %) while latency doubles: the knee is at 8, where the CPU is full.
    let pts = vec![
        point(16.0, 8160.0, 2.0, 99.0),
        point(1.0, 1000.0, 1.0, 12.0),
        point(2.0, 2000.0, 1.0, 24.0),
        point(4.0, 4000.0, 1.0, 48.0),
        point(8.0, 8000.0, 1.0, 95.0),
        point(32.0, 8200.0, 4.0, 99.0),
    ];
    let a = analyze(&pts, 8);
    let xs: Vec<f64> = a.rows.iter().map(|r| r.x).collect();
    assert_eq!(xs, vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0]);
    let r4 = &a.rows[2];
    assert!((r4.speedup.expect("x0 > 0") - 4.0).abs() < 1e-9);
    assert!((r4.efficiency.expect("x0 > 0") - 1.0).abs() < 1e-9);
    let r16 = &a.rows[4];
    assert!((r16.efficiency.expect("x0 > 0") - 8.16 / 16.0).abs() < 1e-9);
    let knee = a.knee.expect("a knee");
    assert_eq!((knee.x, knee.next_x), (8.0, 16.0));
    assert!((knee.gain_pct - 2.0).abs() < 1e-9);
    assert!((knee.latency_growth_pct.expect("latency known") - 100.0).abs() < 1e-9);
    let sat: Vec<&str> = knee.saturated.iter().map(|s| s.metric.as_str()).collect();
    assert_eq!(sat, vec!["cpu_busy_pct"]);
    assert_eq!(knee.saturated[0].value, 99.0);
}

#[test]
fn no_knee_while_scaling_or_latency_flat() {
    let pts: Vec<ScalingPoint> = [1.0, 2.0, 4.0].iter().map(|&x| point(x, 1000.0 * x, 1.0, 10.0 * x)).collect();
    assert!(analyze(&pts, 4).knee.is_none());
    // A plateau with falling latency is not a knee (the system got faster per request).
    let flat = vec![point(1.0, 1000.0, 2.0, 50.0), point(2.0, 1010.0, 1.0, 50.0)];
    assert!(analyze(&flat, 4).knee.is_none());
}

fn sample(t: f64, phase: &str, cpu: f64) -> Sample {
    (t, phase.to_string(), vec![("cpu_busy_pct".to_string(), cpu)])
}

/// Baseline 5 % for 5 s, load 80 % (peak 90 %) for 10 s ending at t = 15, then recovery
/// 50, 20, 5.4, 5: back within 10 % of 5 (5.4 ≤ 5.5) at t = 18, i.e. 3 s after the load.
fn trial(recover_to: f64) -> Vec<Sample> {
    let mut s = Vec::new();
    for i in 1..=5 {
        s.push(sample(i as f64, "baseline", 5.0));
    }
    for i in 6..=15 {
        s.push(sample(i as f64, "load", if i == 10 { 90.0 } else { 80.0 }));
    }
    for (i, v) in [50.0, 20.0, recover_to, 5.0].iter().enumerate() {
        s.push(sample(16.0 + i as f64, "recovery", if i == 3 { recover_to } else { *v }));
    }
    s
}

#[test]
fn phase_table_and_recovery_time() {
    let rows = trial(5.4);
    let p = metric_phases("cpu_busy_pct", &refs(&rows), Some(15.0));
    assert_eq!(p.baseline, Some(5.0));
    assert_eq!(p.under_load, Some(81.0));
    assert_eq!(p.peak, Some(90.0));
    assert_eq!(p.recovery, Some((50.0 + 20.0 + 5.4 + 5.4) / 4.0));
    assert_eq!(p.recovery_s, Some(3.0));
    assert!(!p.never_recovered);
    // Without an explicit end, the last load sample (t = 15) is the end.
    assert_eq!(trial_phases(&refs(&rows), None), vec![p.clone()]);
    // Never back: stays at 30 %.
    let stuck = trial(30.0);
    let q = metric_phases("cpu_busy_pct", &refs(&stuck), Some(15.0));
    assert_eq!(q.recovery_s, None);
    assert!(q.never_recovered);
    // Pooling: worst recovery, None if any trial never recovered; means over all samples.
    let pooled = pool(&[p.clone(), p.clone()]).expect("rows");
    assert_eq!(pooled.recovery_s, Some(3.0));
    assert_eq!(pooled.n_load, 20);
    let mixed = pool(&[p, q]).expect("rows");
    assert_eq!(mixed.recovery_s, None);
    assert!(mixed.never_recovered);
    // A metric absent from the samples has an empty row.
    let none = metric_phases("mem_used_pct", &refs(&rows), Some(15.0));
    assert_eq!((none.baseline, none.under_load, none.recovery_s), (None, None, None));
}
