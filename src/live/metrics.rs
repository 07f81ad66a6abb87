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
    /// The current trial's remote hosts' latest key figures (their `host` events), by host.
    pub hosts: BTreeMap<String, HostNow>,
    /// Each threshold at each point as it stands (its latest `threshold` event): passed or not.
    pub thresholds: BTreeMap<(String, usize), bool>,
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
                self.hosts.clear();
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
            Event::Host { host, figures, .. } => {
                self.hosts.insert(host, figures);
            }
            Event::TrialEnd { trial, ok, figures, .. } => {
                if ok {
                    self.ok += 1;
                } else {
                    self.failed += 1;
                }
                self.last_end = Some((trial, figures));
            }
            Event::RunEnd { status, .. } => self.status = Some(status),
            Event::Threshold { expr, point, passed, .. } => {
                self.thresholds.insert((expr, point), passed);
            }
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
    if !s.hosts.is_empty() {
        family(
            &mut out,
            "perflab_live_host",
            "Each remote host's latest sample's key figures, named as its monitor's columns (the busiest of a kind busiest_...).",
        );
        for (h, figures) in &s.hosts {
            for (name, v) in figures.named() {
                let mut l = run.clone();
                if let Some((trial, _)) = s.trial {
                    l.push(("trial".into(), trial.to_string()));
                }
                l.push(("host".into(), h.clone()));
                l.push(("name".into(), name.into()));
                let _ = writeln!(out, "perflab_live_host{} {}", labels(&l), num(v));
            }
        }
    }
    if !s.thresholds.is_empty() {
        family(
            &mut out,
            "perflab_live_threshold_passed",
            "Each threshold at each point as it stands over the point's trials stored so far: 1 held, 0 broken.",
        );
        for ((expr, point), passed) in &s.thresholds {
            let mut l = run.clone();
            l.push(("expr".into(), expr.clone()));
            l.push(("point".into(), point.to_string()));
            let _ = writeln!(out, "perflab_live_threshold_passed{} {}", labels(&l), u8::from(*passed));
        }
    }
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
#[path = "metrics_tests.rs"]
mod tests;
