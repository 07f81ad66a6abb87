//! `/metrics` rendered from events and read back with a strict OpenMetrics reader.

use super::*;
use crate::live::event::{PlannedPoint, PlannedTrial};

/// A one-trial run's start, its point labelled `label` with `params`.
fn run_start(label: &str, params: serde_json::Value) -> Event {
    Event::RunStart {
        plan: "p".into(),
        dir: "d".into(),
        trials: vec![PlannedTrial {
            trial: 0,
            point: 0,
            repetition: 1,
        }],
        points: vec![PlannedPoint {
            point: 0,
            label: label.into(),
            params,
        }],
        done: vec![],
        baseline_s: 1.0,
        warmup_s: 1.0,
        load_s: 1.0,
        recovery_s: 1.0,
        interval_s: 1.0,
    }
}

#[test]
fn metrics_carry_the_latest_second_and_the_stored_figures_with_their_labels() {
    let events = vec![
        run_start("c=2", serde_json::json!({"connections": 2, "model": "pool"})),
        Event::TrialStart {
            trial: 0,
            point: 0,
            repetition: 1,
            label: "c=2".into(),
            asked_per_s: None,
        },
        Event::Phase {
            trial: 0,
            phase: "load".into(),
            t_s: 2.0,
        },
        Event::Second {
            trial: 0,
            t_s: 0.0,
            span_s: 0.5,
            responses: 200,
            errors: 1,
            p50_ms: Some(0.25),
            p99_ms: Some(3.5),
            p999_ms: None,
            host: Some(HostNow {
                cpu_pct: Some(40.5),
                ..HostNow::default()
            }),
        },
        Event::Probes {
            trial: 0,
            probes: vec![ProbeNow {
                name: "ssh".into(),
                kind: "command".into(),
                n: 12,
                lost: 1,
                failed: 2,
                seq: Some(11),
                phase: Some("load".into()),
                outcome: Some("reply".into()),
                rtt_ms: Some(4.25),
            }],
        },
        Event::Host {
            trial: 0,
            host: "db1".into(),
            t_s: 2.5,
            figures: HostNow {
                cpu_pct: Some(12.5),
                target_rss_mb: Some(30.0),
                ..HostNow::default()
            },
        },
    ];
    let mut s = LiveState::fold(events);
    for passed in [true, false] {
        s.apply(Event::Threshold {
            expr: "latency_p99_ms < 5".into(),
            point: 0,
            observed: Some(7.25),
            basis: "mean of 2 trials".into(),
            passed,
        });
    }
    let text = render(&s, None, "vm");
    assert!(
        text.contains("perflab_live_threshold_passed{run=\"p\",expr=\"latency_p99_ms < 5\",point=\"0\"} 0\n"),
        "{text}"
    );
    assert!(
        text.contains("perflab_live_host{run=\"p\",trial=\"0\",host=\"db1\",name=\"cpu_busy_pct\"} 12.5\n"),
        "{text}"
    );
    assert!(
        text.contains("perflab_live_host{run=\"p\",trial=\"0\",host=\"db1\",name=\"proc_target_rss_mb\"} 30\n"),
        "{text}"
    );
    let at = r#"{run="p",trial="0",connections="2",model="pool",host="vm",phase="load"}"#;
    assert!(text.contains(&format!("perflab_live_responses_per_second{at} 400\n")), "{text}");
    assert!(text.contains(&format!("perflab_live_errors_per_second{at} 2\n")), "{text}");
    assert!(text.contains(
        r#"perflab_live_latency_milliseconds{run="p",trial="0",connections="2",model="pool",host="vm",phase="load",quantile="0.99"} 3.5"#
    ));
    assert!(text.contains(&format!("perflab_live_host_cpu_busy_percent{at} 40.5\n")));
    assert!(text.contains("perflab_live_trials{run=\"p\",state=\"planned\"} 1\n"));
    let probe = r#"{run="p",trial="0",connections="2",model="pool",host="vm",phase="load",probe="ssh",kind="command"}"#;
    for (family, v) in [("samples", "12"), ("lost", "1"), ("failed", "2"), ("rtt_milliseconds", "4.25")] {
        assert!(
            text.contains(&format!("perflab_live_probe_{family}{probe} {v}\n")),
            "{family}: {text}"
        );
    }
    assert!(text.ends_with("# EOF\n"));
    strict(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    // Every family is declared once, before its samples.
    let types: Vec<&str> = text.lines().filter(|l| l.starts_with("# TYPE ")).collect();
    let mut uniq = types.clone();
    uniq.dedup();
    assert_eq!(types, uniq);
}

/// A strict reading of OpenMetrics text (what a scraper checks): families declared once,
/// `TYPE` before their samples, samples of a family together, label names valid and unique,
/// values numbers, `# EOF` last. The samples: (name, labels, value).
type Parsed = (String, Vec<(String, String)>, f64);

pub(crate) fn strict(text: &str) -> Result<Vec<Parsed>, String> {
    let valid =
        |n: &str| !n.is_empty() && !n.starts_with(|c: char| c.is_ascii_digit()) && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let (mut families, mut current, mut out) = (Vec::<String>::new(), String::new(), Vec::new());
    let body = text.strip_suffix("# EOF\n").ok_or("no `# EOF` at the end")?;
    for line in body.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').ok_or(format!("TYPE: {line}"))?;
            if families.iter().any(|f| f == name) || !valid(name) || kind != "gauge" {
                return Err(format!("family declared twice or badly: {line}"));
            }
            families.push(name.to_string());
            current = name.to_string();
        } else if let Some(rest) = line.strip_prefix("# HELP ") {
            if !rest.starts_with(&format!("{current} ")) {
                return Err(format!("HELP of another family: {line}"));
            }
        } else {
            let (head, value) = line.rsplit_once(' ').ok_or(format!("no value: {line}"))?;
            let value: f64 = match value {
                "+Inf" => f64::INFINITY,
                "-Inf" => f64::NEG_INFINITY,
                v => v.parse().map_err(|_| format!("not a number: {line}"))?,
            };
            let (name, rest) = head.split_once('{').ok_or(format!("no labels: {line}"))?;
            if name != current {
                return Err(format!("a sample outside its family: {line}"));
            }
            let inner = rest.strip_suffix('}').ok_or(format!("labels unclosed: {line}"))?;
            let mut labels: Vec<(String, String)> = Vec::new();
            for kv in inner.split("\",").filter(|kv| !kv.is_empty()) {
                let (k, v) = kv.split_once("=\"").ok_or(format!("label: {kv} in {line}"))?;
                if !valid(k) || labels.iter().any(|(n, _)| n == k) {
                    return Err(format!("label name {k} invalid or twice: {line}"));
                }
                labels.push((k.to_string(), v.trim_end_matches('"').to_string()));
            }
            out.push((name.to_string(), labels, value));
        }
    }
    Ok(out)
}

#[test]
fn a_monitor_sample_reads_back_strictly_as_its_figures() {
    let values = vec![
        ("cpu_busy_pct".to_string(), 12.5),
        ("mem_used_mb".to_string(), 2048.25),
        ("temp_c".to_string(), f64::NAN),
        ("net_lo_rx_bytes_per_s".to_string(), 1.5e-7),
    ];
    let text = render_sample(&values, 1_764_000_000.25, "vm");
    let samples = strict(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(
        samples[0],
        (
            "perflab_monitor_sample_time_seconds".into(),
            vec![("host".into(), "vm".into())],
            1_764_000_000.25
        )
    );
    let read: Vec<(String, f64)> = samples[1..]
        .iter()
        .map(|(n, l, v)| {
            assert_eq!(n, "perflab_monitor_sample");
            assert_eq!(l[0], ("host".to_string(), "vm".to_string()));
            (l[1].1.clone(), *v)
        })
        .collect();
    let finite: Vec<(String, f64)> = values.into_iter().filter(|(_, v)| v.is_finite()).collect();
    assert_eq!(read, finite, "every finite figure, exactly");
}

#[test]
fn parameters_named_as_perflabs_own_labels_are_kept_apart() {
    let start = run_start("x", serde_json::json!({"host": "db1", "1st": 1, "phase": "x"}));
    let tstart = Event::TrialStart {
        trial: 0,
        point: 0,
        repetition: 1,
        label: "x".into(),
        asked_per_s: None,
    };
    let second = Event::Second {
        trial: 0,
        t_s: 0.0,
        span_s: 1.0,
        responses: 10,
        errors: 0,
        p50_ms: Some(f64::INFINITY),
        p99_ms: None,
        p999_ms: None,
        host: None,
    };
    let text = render(&LiveState::fold([start, tstart, second]), None, "vm");
    let samples = strict(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let rps = samples.iter().find(|s| s.0 == "perflab_live_responses_per_second").expect("rps");
    assert!(
        rps.1.contains(&("param_host".into(), "db1".into())) && rps.1.contains(&("host".into(), "vm".into())),
        "{text}"
    );
    assert!(
        rps.1.contains(&("param_1st".into(), "1".into())) && rps.1.contains(&("param_phase".into(), "x".into())),
        "{text}"
    );
    assert!(text.contains("quantile=\"0.5\"} +Inf\n"), "{text}");
}
