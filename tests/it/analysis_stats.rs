//! Known answers for summaries and percentiles.

use perflab::analysis::percentiles::{self, min_count};
use perflab::analysis::stats::{ci_half_width_pct, t975, Summary};
use perflab::workload::result::latency_histogram;

#[test]
fn summary_hand_computed() {
    // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, median 4.5, sample sd = sqrt(32 / 7) = 2.13809,
    // t(0.975, 7) = 2.364624 (t table), CI half-width = 2.364624 · 2.13809 / sqrt(8) = 1.78748,
    // CV = 42.76 % → noisy.
    let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).expect("values");
    assert_eq!(s.n, 8);
    assert_eq!(s.mean, 5.0);
    assert_eq!(s.median, 4.5);
    assert!((s.sd - 2.13809).abs() < 1e-5, "{}", s.sd);
    assert!((s.ci95.expect("n > 1") - 1.78748).abs() < 1e-4);
    let (lo, hi) = s.ci95_bounds().expect("n > 1");
    assert!((lo - 3.21252).abs() < 1e-4 && (hi - 6.78748).abs() < 1e-4);
    assert!((s.cv_pct.expect("mean != 0") - 42.762).abs() < 1e-3);
    assert!(s.noisy);
    assert!(!s.small);
    assert_eq!((s.min, s.max), (2.0, 9.0));
}

#[test]
fn t_quantiles_match_the_table() {
    // Student t table, two-sided 95 %: df 1 → 12.706, 2 → 4.303, 9 → 2.262, 30 → 2.042.
    for (df, t) in [(1.0, 12.706), (2.0, 4.303), (9.0, 2.262), (30.0, 2.042)] {
        assert!((t975(df) - t).abs() < 1e-3, "df {df}: {}", t975(df));
    }
}

#[test]
fn small_and_quiet_flags() {
    let s = Summary::of(&[100.0, 101.0]).expect("values");
    assert!(s.small);
    assert!(!s.noisy);
    let one = Summary::of(&[7.0]).expect("value");
    assert_eq!((one.sd, one.ci95, one.cv_pct), (0.0, None, None));
    assert!(Summary::of(&[]).is_none());
    assert!(Summary::of(&[f64::NAN]).is_none());
}

#[test]
fn ci_half_width_for_adaptive_repetitions() {
    // 10, 12, 14: mean 12, sd 2, se 2 / sqrt(3), t(0.975, 2) = 4.303 → 4.968 → 41.40 % of 12.
    let hw = ci_half_width_pct(&[10.0, 12.0, 14.0]).expect("defined");
    assert!((hw - 41.40).abs() < 0.01, "{hw}");
    assert!(ci_half_width_pct(&[5.0]).is_none());
    assert!(ci_half_width_pct(&[-1.0, 1.0]).is_none(), "zero mean has no relative width");
    let v: Vec<f64> = vec![10.0, 12.0, 14.0];
    assert_eq!(ci_half_width_pct(&v), Summary::of(&v).and_then(|s| s.ci95_pct()));
}

#[test]
fn percentile_support_rule() {
    assert_eq!(min_count(0.5), 2);
    assert_eq!(min_count(0.9), 10);
    assert_eq!(min_count(0.99), 100);
    assert_eq!(min_count(0.999), 1000);
    for (_, q, need) in percentiles::PERCENTILES {
        assert_eq!(min_count(q), need);
    }
}

#[test]
fn percentiles_from_merged_histograms() {
    // 1..=1000 µs split over two trials; below 2048 a 3-digit HDR histogram is exact.
    let (mut a, mut b) = (latency_histogram(), latency_histogram());
    for v in 1..=500u64 {
        a.record(v).expect("in range");
    }
    for v in 501..=1000u64 {
        b.record(v).expect("in range");
    }
    let merged = percentiles::merge([&a, &b]).expect("two histograms");
    let p = percentiles::of(&merged).expect("not empty");
    assert_eq!(p.count, 1000);
    assert_eq!(p.get("p50"), Some(500.0));
    assert_eq!(p.get("p90"), Some(900.0));
    assert_eq!(p.get("p99"), Some(990.0));
    assert_eq!(p.get("p99.9"), Some(999.0));
    assert_eq!(p.max, 1000.0);
    assert!(p.omitted.is_empty());
    // Trial a alone: 500 values cannot support p99.9.
    let pa = percentiles::of(&a).expect("not empty");
    assert_eq!(pa.get("p99"), Some(495.0));
    assert_eq!(pa.get("p99.9"), None);
    assert_eq!(pa.omitted, vec!["p99.9 needs >= 1000 values".to_string()]);
    // 99 values: p99 left out too.
    let mut small = latency_histogram();
    for v in 1..=99u64 {
        small.record(v).expect("in range");
    }
    let ps = percentiles::of(&small).expect("not empty");
    assert_eq!(ps.values.len(), 2);
    assert_eq!(ps.max, 99.0);
    assert!(percentiles::of(&latency_histogram()).is_none());
}
