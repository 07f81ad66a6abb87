use super::*;
use crate::model::{latency_histogram, Better, PhaseSpan, TrialInfo};

/// The quantile `q` of `h` in ms, as every workload reads it (1: the largest value).
fn quantile_ms(h: &Histogram<u64>, q: f64) -> f64 {
    (if q >= 1.0 { h.max() } else { h.value_at_quantile(q) }) as f64 / 1000.0
}

/// A segment's trial of an http load: its latencies (µs), as the http workload stores them
/// (quantiles read from its histogram), its counts, its per-second series from `load_at` (Unix s).
fn segment(latencies_us: &[u64], errors: u64, load_at: f64, per_second: &[f64]) -> StoredTrial {
    let mut h = latency_histogram();
    for v in latencies_us {
        h.record(*v).unwrap();
    }
    let n = latencies_us.len() as f64;
    let q = |q: f64| quantile_ms(&h, q);
    let ms = |name: &str, v: f64, kind: MetricKind| Metric::new(name, "ms", v, Better::Lower).with_kind(kind);
    let metrics = vec![
        Metric::new("requests_per_s", "req/s", n / 2.0, Better::Higher),
        ms("latency_p50_ms", q(0.5), MetricKind::Quantile(0.5)),
        ms("latency_p99_ms", q(0.99), MetricKind::Quantile(0.99)),
        ms("latency_max_ms", q(1.0), MetricKind::Quantile(1.0)),
        Metric::new("latency_mean_ms", "ms", h.mean() / 1000.0, Better::Lower),
        Metric::new("requests", "", n, Better::Neither),
        Metric::new("errors", "", errors as f64, Better::Lower),
        Metric::new("error_rate_pct", "%", 100.0 * errors as f64 / (n + errors as f64), Better::Lower),
        Metric::new("target_rate_per_s", "req/s", 1000.0, Better::Neither),
        Metric::new("total_time_s", "s", 2.0 + load_at.fract(), Better::Neither),
        Metric::new("ops_per_cpu_s", "ops/CPU-s", 7.0, Better::Higher).with_kind(MetricKind::Rate),
        // A quantile that has no histogram to merge (no `connect` histogram is kept here).
        ms("connect_p99_ms", 0.3, MetricKind::Quantile(0.99)),
    ];
    let mut series = Vec::new();
    for (i, v) in per_second.iter().enumerate() {
        for (name, value) in [("requests_per_s", *v), ("latency_p99_ms", 1.0)] {
            series.push(SeriesPoint {
                t_s: i as f64,
                name: name.into(),
                value,
            });
        }
    }
    let started = load_at - 0.5;
    StoredTrial {
        info: TrialInfo {
            started_unix: started,
            ended_unix: started + 3.0,
            phases: vec![PhaseSpan::new(Phase::Baseline, 0.0, 0.5), PhaseSpan::new(Phase::Load, 0.5, 2.5)],
            ..TrialInfo::default()
        },
        metrics,
        histograms: vec![NamedHistogram {
            name: "latency".into(),
            hist: h,
        }],
        series,
        errors: vec![("connect_refused".into(), errors)],
    }
}

fn metric(f: &MergedFigures, name: &str) -> f64 {
    f.metrics.iter().find(|m| m.name == name).map(|m| m.value).unwrap_or(f64::NAN)
}

#[test]
fn two_segments_merge_to_the_figures_of_one_histogram_of_every_value() {
    // A skewed load: segment 0 took the fast requests, segment 1 a slow tail. The average of the
    // two p99s would be about 25 ms; the p99 of the union is the union's.
    let fast: Vec<u64> = (0..990).map(|k| 1_000 + k).collect();
    let slow: Vec<u64> = (0..10).map(|k| 50_000 + 1_000 * k).collect();
    let (a, b) = (
        segment(&fast, 10, 1_800_000_000.0, &[300.0, 200.0]),
        segment(&slow, 0, 1_800_000_000.004, &[5.0, 5.0]),
    );
    let merged = merge_trial(&[&a, &b]);

    let mut whole = latency_histogram();
    for v in fast.iter().chain(&slow) {
        whole.record(*v).unwrap();
    }
    let q = |q: f64| quantile_ms(&whole, q);
    assert_eq!(metric(&merged, "latency_p50_ms"), q(0.5));
    assert_eq!(metric(&merged, "latency_p99_ms"), q(0.99));
    assert_eq!(metric(&merged, "latency_max_ms"), q(1.0));
    assert!((metric(&merged, "latency_mean_ms") - whole.mean() / 1000.0).abs() < 1e-9);
    let h = &merged.histograms.iter().find(|h| h.name == "latency").unwrap().hist;
    let buckets = |h: &Histogram<u64>| {
        h.iter_recorded()
            .map(|b| (b.value_iterated_to(), b.count_at_value()))
            .collect::<Vec<_>>()
    };
    assert_eq!(buckets(h), buckets(&whole), "bucket for bucket");

    assert_eq!(metric(&merged, "requests"), 1000.0);
    assert_eq!(metric(&merged, "errors"), 10.0);
    assert_eq!(metric(&merged, "requests_per_s"), 500.0);
    // 10 failures of 1010 attempts: the segments' rates weighted by their attempts.
    assert!((metric(&merged, "error_rate_pct") - 100.0 * 10.0 / 1010.0).abs() < 1e-9);
    // Every segment states the whole load's target rate: kept, not summed.
    assert_eq!(metric(&merged, "target_rate_per_s"), 1000.0);
    // An efficiency (work per CPU-second) is no sum: both segments did 7 per CPU-second.
    assert!((metric(&merged, "ops_per_cpu_s") - 7.0).abs() < 1e-9);
    assert_eq!(merged.errors, vec![("connect_refused".to_string(), 10)]);
    // A quantile with no histogram cannot be merged exactly: left out, and said.
    assert!(metric(&merged, "connect_p99_ms").is_nan());
    assert!(merged.left_out.contains(&"connect_p99_ms".to_string()), "{:?}", merged.left_out);
}

#[test]
fn the_per_second_series_are_aligned_on_the_common_start_and_summed() {
    // Segment 1's load began 4 ms after segment 0's and ran one second longer.
    let a = segment(&[1_000], 0, 1_800_000_000.0, &[100.0, 110.0]);
    let b = segment(&[1_000], 0, 1_800_000_000.004, &[10.0, 11.0, 12.0]);
    let merged = merge_trial(&[&a, &b]);
    let rps: Vec<(f64, f64)> = merged
        .series
        .iter()
        .filter(|p| p.name == "requests_per_s")
        .map(|p| (p.t_s, p.value))
        .collect();
    assert_eq!(rps, vec![(0.0, 110.0), (1.0, 121.0), (2.0, 12.0)]);
    // A per-second p99 of each segment is no p99 of the whole: left out.
    assert!(merged.series.iter().all(|p| p.name != "latency_p99_ms"));
    assert!(
        merged.left_out.iter().any(|l| l.contains("latency_p99_ms")),
        "{:?}",
        merged.left_out
    );
}

#[test]
fn one_segment_merges_to_itself() {
    let a = segment(&[1_000, 2_000, 3_000], 1, 1_800_000_000.0, &[3.0]);
    let merged = merge_trial(&[&a]);
    for m in a.metrics.iter().filter(|m| m.name != "connect_p99_ms") {
        assert!((metric(&merged, &m.name) - m.value).abs() <= 1e-9 * m.value.abs(), "{}", m.name);
    }
}

/// A udp trial of a net segment: `sent` datagrams, `lost` of them, each of `streams` senders
/// sending the same share (its per-stream figure `streamK_gbit_per_s` = 0.1 × (K + 1) here).
fn udp(sent: f64, lost: f64, streams: u64) -> StoredTrial {
    let mut metrics = vec![
        Metric::new("datagrams_sent", "", sent, Better::Neither).with_kind(MetricKind::Count),
        Metric::new("lost", "", lost, Better::Lower).with_kind(MetricKind::Count),
        Metric::new("loss_pct", "%", 100.0 * lost / sent, Better::Lower),
    ];
    for k in 0..streams {
        metrics
            .push(Metric::new(format!("stream{k}_gbit_per_s"), "Gbit/s", 0.1 * (k + 1) as f64, Better::Higher).with_kind(MetricKind::Rate));
    }
    StoredTrial {
        info: TrialInfo::default(),
        metrics,
        histograms: Vec::new(),
        series: Vec::new(),
        errors: Vec::new(),
    }
}

#[test]
fn net_segments_keep_each_stream_apart_and_weigh_the_loss_by_datagrams() {
    use crate::model::Segment;
    let (mut a, mut b) = (udp(23742.0, 54.0, 3), udp(11882.0, 22.0, 2));
    number_globally(&mut a, Segment::new(0, 2).unwrap());
    number_globally(&mut b, Segment::new(1, 2).unwrap());
    let merged = merge_trial(&[&a, &b]);
    // The loss of the whole load: every datagram lost over every one sent (not the mean of the
    // two segments' percentages, 0.206 %).
    assert!((metric(&merged, "loss_pct") - 100.0 * 76.0 / 35624.0).abs() < 1e-9);
    // Segment 0's streams 0, 1, 2 are the whole load's 0, 2, 4; segment 1's 0, 1 are 1, 3.
    let streams: Vec<(String, f64)> = merged
        .metrics
        .iter()
        .filter(|m| m.name.starts_with("stream"))
        .map(|m| (m.name.clone(), m.value))
        .collect();
    let want = [
        ("stream0", 0.1),
        ("stream2", 0.2),
        ("stream4", 0.3),
        ("stream1", 0.1),
        ("stream3", 0.2),
    ];
    assert_eq!(streams.len(), 5, "{streams:?}");
    for (name, v) in want {
        let got = streams.iter().find(|(n, _)| n == &format!("{name}_gbit_per_s")).expect(name).1;
        assert!((got - v).abs() < 1e-12, "{name}: {got}");
    }
    // A level of segments that counted no work to weigh it by: not averaged, left out and named.
    let level = |v: f64| StoredTrial {
        metrics: vec![Metric::new("cpu_pct", "%", v, Better::Lower)],
        ..udp(1.0, 0.0, 0)
    };
    let (c, d) = (level(10.0), level(30.0));
    let merged = merge_trial(&[&c, &d]);
    assert!(merged.left_out.iter().any(|l| l == "cpu_pct"), "{:?}", merged.left_out);
    assert_eq!(metric(&merge_trial(&[&c]), "cpu_pct"), 10.0, "one segment's level is the level");
}
