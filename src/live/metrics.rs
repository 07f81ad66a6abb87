//! `/metrics`: the run's current state, folded from its events, in the OpenMetrics text format
//! (docs/live.md names the families). Labels: `run` (the plan's name), the current point's
//! parameters, `host` (this machine), `phase`.

use super::event::{Event, Figure, HostNow, ProbeNow};
use super::feed::LatestSample;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::{Arc, Mutex};

/// What the events say so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveState {
    pub run: String,
    pub planned: usize,
    /// Trials stored ok / failed (the run's and, resumed, those stored before).
    pub ok: usize,
    pub failed: usize,
    /// Each point's parameters, by point id.
    pub params: BTreeMap<usize, Vec<(String, String)>>,
    /// The trial running (or the last one) and its point.
    pub trial: Option<(usize, usize)>,
    pub phase: String,
    /// The current trial's latest second.
    pub second: Option<Second>,
    /// The rate the current trial's open-model load asks.
    pub asked_per_s: Option<f64>,
    /// The current trial's probes' figures so far (its latest `probes` event).
    pub probes: Vec<ProbeNow>,
    /// The last stored trial: its id and headline figures.
    pub last_end: Option<(usize, Vec<Figure>)>,
    /// `complete`, `interrupted`, `failed` once the run ended.
    pub status: Option<String>,
}

/// One second of the load, as `/metrics` shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Second {
    pub per_s: f64,
    pub errors_per_s: f64,
    pub quantiles: Vec<(&'static str, f64)>,
    pub host: Option<HostNow>,
}

impl LiveState {
    pub fn fold(events: impl IntoIterator<Item = Event>) -> LiveState {
        let mut s = LiveState::default();
        for e in events {
            s.apply(e);
        }
        s
    }

    pub fn apply(&mut self, e: Event) {
        match e {
            Event::RunStart {
                plan,
                trials,
                points,
                done,
                ..
            } => {
                self.run = plan;
                self.planned = trials.len() + done.len();
                for p in points {
                    let kv = match p.params {
                        serde_json::Value::Object(m) => m
                            .into_iter()
                            .map(|(k, v)| (param_label(&k), v.as_str().map_or_else(|| v.to_string(), str::to_string)))
                            .collect(),
                        _ => Vec::new(),
                    };
                    self.params.insert(p.point, kv);
                }
                self.ok = done.len();
            }
            Event::TrialStart {
                trial, point, asked_per_s, ..
            } => {
                self.trial = Some((trial, point));
                self.second = None;
                self.probes.clear();
                self.asked_per_s = asked_per_s;
            }
            Event::Phase { phase, .. } => self.phase = phase,
            Event::Second {
                span_s,
                responses,
                errors,
                p50_ms,
                p99_ms,
                p999_ms,
                host,
                ..
            } => {
                let span = if span_s > 0.0 { span_s } else { 1.0 };
                let q = [("0.5", p50_ms), ("0.99", p99_ms), ("0.999", p999_ms)];
                self.second = Some(Second {
                    per_s: responses as f64 / span,
                    errors_per_s: errors as f64 / span,
                    quantiles: q.iter().filter_map(|(n, v)| v.map(|v| (*n, v))).collect(),
                    host,
                });
            }
            Event::Probes { probes, .. } => self.probes = probes,
            Event::TrialEnd { trial, ok, figures, .. } => {
                if ok {
                    self.ok += 1;
                } else {
                    self.failed += 1;
                }
                self.last_end = Some((trial, figures));
            }
            Event::RunEnd { status, .. } => self.status = Some(status),
            Event::Ci { .. } | Event::Skipped { .. } => {}
        }
    }
}

/// A label value as OpenMetrics writes it.
fn esc(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// A metric name's characters (a sample's name, a parameter's).
fn name_part(n: &str) -> String {
    n.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
        .collect()
}

/// The labels perflab itself writes: a point's parameter of the same name is written `param_NAME`
/// (a label twice is no OpenMetrics).
const OWN_LABELS: [&str; 11] = [
    "run", "trial", "host", "phase", "quantile", "state", "status", "name", "unit", "probe", "kind",
];

/// A parameter's label name: OpenMetrics' `[a-zA-Z_][a-zA-Z0-9_]*`, clear of perflab's own.
fn param_label(k: &str) -> String {
    let n = name_part(k);
    if n.is_empty() || n.starts_with(|c: char| c.is_ascii_digit()) || n.starts_with("__") || OWN_LABELS.contains(&n.as_str()) {
        format!("param_{n}")
    } else {
        n
    }
}

fn labels(pairs: &[(String, String)]) -> String {
    let inner: Vec<String> = pairs.iter().map(|(k, v)| format!("{}=\"{}\"", name_part(k), esc(v))).collect();
    format!("{{{}}}", inner.join(","))
}

/// A value as OpenMetrics writes it (`+Inf`, `-Inf`, `NaN`; Rust's shortest exact form otherwise).
fn num(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// The `perflab_*_sample` family: each figure of a monitor sample, by its name (as `perflab
/// monitor` names them), after `base`'s labels; non-finite figures are left out.
fn sample_family(out: &mut String, family_name: &str, help: &str, base: &[(String, String)], values: &[(String, f64)]) {
    family(out, family_name, help);
    for (n, v) in values {
        if v.is_finite() {
            let mut l = base.to_vec();
            l.push(("name".into(), n.clone()));
            let _ = writeln!(out, "{family_name}{} {}", labels(&l), num(*v));
        }
    }
}

/// One monitor sample as OpenMetrics text (`perflab monitor --listen`): `perflab_monitor_sample`
/// with `host` and `name` labels, and the sample's time (`perflab_monitor_sample_time_seconds`,
/// Unix seconds), so that a scrape says which sample it read.
pub fn render_sample(values: &[(String, f64)], unix_s: f64, host: &str) -> String {
    let mut out = String::new();
    let base = vec![("host".to_string(), host.to_string())];
    family(
        &mut out,
        "perflab_monitor_sample_time_seconds",
        "When the latest sample was taken, Unix seconds.",
    );
    let _ = writeln!(out, "perflab_monitor_sample_time_seconds{} {}", labels(&base), num(unix_s));
    sample_family(
        &mut out,
        "perflab_monitor_sample",
        "The latest sample of this machine, named as perflab monitor names its columns.",
        &base,
        values,
    );
    out.push_str("# EOF\n");
    out
}

/// A gauge family's head.
fn family(out: &mut String, name: &str, help: &str) {
    let _ = writeln!(out, "# TYPE {name} gauge\n# HELP {name} {help}");
}

/// The state as OpenMetrics text; `latest` is the monitor's last sample when the run is in this
/// process; `host` this machine's name.
pub fn render(s: &LiveState, latest: Option<&LatestSample>, host: &str) -> String {
    let mut out = String::new();
    let run = vec![("run".to_string(), s.run.clone())];
    let status = s.status.clone().unwrap_or_else(|| "running".into());
    family(&mut out, "perflab_live_trials", "Trials of the run: planned, ok, failed.");
    for (k, v) in [("planned", s.planned), ("ok", s.ok), ("failed", s.failed)] {
        let mut l = run.clone();
        l.push(("state".into(), k.into()));
        let _ = writeln!(out, "perflab_live_trials{} {v}", labels(&l));
    }
    family(&mut out, "perflab_live_running", "1 while the run runs, 0 once it ended.");
    let mut l = run.clone();
    l.push(("status".into(), status.clone()));
    let _ = writeln!(out, "perflab_live_running{} {}", labels(&l), u8::from(s.status.is_none()));
    let mut at = run.clone();
    if let Some((trial, point)) = s.trial {
        at.push(("trial".into(), trial.to_string()));
        at.extend(s.params.get(&point).cloned().unwrap_or_default());
    }
    at.push(("host".into(), host.to_string()));
    at.push(("phase".into(), s.phase.clone()));
    if let Some(sec) = &s.second {
        family(
            &mut out,
            "perflab_live_responses_per_second",
            "The current trial's latest second: responses per second.",
        );
        let _ = writeln!(out, "perflab_live_responses_per_second{} {}", labels(&at), num(sec.per_s));
        if let Some(a) = s.asked_per_s {
            family(
                &mut out,
                "perflab_live_asked_per_second",
                "The rate the current trial's open-model load asks, per second.",
            );
            let _ = writeln!(out, "perflab_live_asked_per_second{} {}", labels(&at), num(a));
        }
        family(
            &mut out,
            "perflab_live_errors_per_second",
            "The current trial's latest second: errors per second.",
        );
        let _ = writeln!(out, "perflab_live_errors_per_second{} {}", labels(&at), num(sec.errors_per_s));
        family(
            &mut out,
            "perflab_live_latency_milliseconds",
            "The current trial's latest second: latency quantiles, ms.",
        );
        for (q, v) in &sec.quantiles {
            let mut l = at.clone();
            l.push(("quantile".into(), (*q).into()));
            let _ = writeln!(out, "perflab_live_latency_milliseconds{} {}", labels(&l), num(*v));
        }
        if let Some(h) = sec.host {
            let pairs = [
                (
                    "perflab_live_host_cpu_busy_percent",
                    h.cpu_pct,
                    "This machine's CPU busy, % of all CPUs.",
                ),
                (
                    "perflab_live_host_memory_used_mebibytes",
                    h.mem_used_mb,
                    "This machine's memory used (free's used), MiB.",
                ),
                (
                    "perflab_live_loadgen_cpu_percent",
                    h.loadgen_cpu_pct,
                    "perflab's own CPU, % of one CPU.",
                ),
                (
                    "perflab_live_target_cpu_percent",
                    h.target_cpu_pct,
                    "The target's process tree's CPU, % of one CPU.",
                ),
            ];
            for (name, v, help) in pairs {
                if let Some(v) = v {
                    family(&mut out, name, help);
                    let _ = writeln!(out, "{name}{} {}", labels(&at), num(v));
                }
            }
        }
    }
    probe_families(&mut out, &s.probes, &at);
    if let Some((trial, figures)) = &s.last_end {
        family(
            &mut out,
            "perflab_live_trial_figure",
            "The last stored trial's headline figures, as stored.",
        );
        for f in figures {
            let mut l = run.clone();
            l.push(("trial".into(), trial.to_string()));
            l.push(("name".into(), f.name.clone()));
            l.push(("unit".into(), f.unit.clone()));
            let _ = writeln!(out, "perflab_live_trial_figure{} {}", labels(&l), num(f.value));
        }
    }
    if let Some(ls) = latest.filter(|_| s.status.is_none()) {
        let mut base = run.clone();
        base.push(("host".into(), host.to_string()));
        base.push(("phase".into(), ls.phase.clone()));
        sample_family(
            &mut out,
            "perflab_live_sample",
            "The monitor's latest sample of this machine, named as perflab monitor names them.",
            &base,
            &ls.values,
        );
    }
    out.push_str("# EOF\n");
    out
}

/// One of a probe's counts.
type ProbeCount = fn(&ProbeNow) -> u64;

/// The current trial's probes' figures so far: each with `probe` (its name) and `kind` after `at`'s
/// labels.
fn probe_families(out: &mut String, probes: &[ProbeNow], at: &[(String, String)]) {
    let l = |p: &ProbeNow| {
        let mut l = at.to_vec();
        l.push(("probe".into(), p.name.clone()));
        l.push(("kind".into(), p.kind.clone()));
        labels(&l)
    };
    let counts: [(&str, &str, ProbeCount); 3] = [
        ("perflab_live_probe_samples", "Each probe's samples so far in the trial.", |p| p.n),
        ("perflab_live_probe_lost", "Of them, lost (no answer, or an error).", |p| p.lost),
        ("perflab_live_probe_failed", "Of them, answered with a failure.", |p| p.failed),
    ];
    for (name, help, get) in counts.iter().filter(|_| !probes.is_empty()) {
        family(out, name, help);
        for p in probes {
            let _ = writeln!(out, "{name}{} {}", l(p), get(p));
        }
    }
    let rtt: Vec<(&ProbeNow, f64)> = probes.iter().filter_map(|p| p.rtt_ms.map(|v| (p, v))).collect();
    if !rtt.is_empty() {
        let name = "perflab_live_probe_rtt_milliseconds";
        family(out, name, "Each probe's latest round trip, ms (none when it was lost).");
        for (p, v) in rtt {
            let _ = writeln!(out, "{name}{} {}", l(p), num(v));
        }
    }
}

/// The latest sample (its Unix time and figures), shared between the sampler and the server.
#[derive(Clone, Default)]
pub struct Latest(Arc<Mutex<Option<TimedSample>>>);

/// A sample's Unix time and figures.
type TimedSample = (f64, Vec<(String, f64)>);

impl Latest {
    /// Keep this sample as the latest.
    pub fn set(&self, unix_s: f64, values: &[(String, f64)]) {
        if let Ok(mut l) = self.0.lock() {
            *l = Some((unix_s, values.to_vec()));
        }
    }
}

/// The latest sample as OpenMetrics text, once there is one.
pub fn render_latest(latest: &Latest, host: &str) -> Option<String> {
    let l = latest.0.lock().ok()?;
    l.as_ref().map(|(t, v)| render_sample(v, *t, host))
}

#[cfg(test)]
mod tests {
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
        ];
        let s = LiveState::fold(events);
        let text = render(&s, None, "vm");
        let at = r#"{run="p",trial="0",connections="2",model="pool",host="vm",phase="load"}"#;
        assert!(text.contains(&format!("perflab_live_responses_per_second{at} 400\n")), "{text}");
        assert!(text.contains(&format!("perflab_live_errors_per_second{at} 2\n")), "{text}");
        assert!(text.contains(r#"perflab_live_latency_milliseconds{run="p",trial="0",connections="2",model="pool",host="vm",phase="load",quantile="0.99"} 3.5"#));
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
        let valid = |n: &str| {
            !n.is_empty() && !n.starts_with(|c: char| c.is_ascii_digit()) && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
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
}
