//! Bottleneck findings: the USE-method rules R1–R12 (listed with their thresholds and sources in
//! docs/metrics.md) as data, evaluated per point over the load phase against the baseline phase.
//!
//! A rule fires at a point when its condition holds in ≥ 50 % of the load-phase samples where it
//! can be evaluated (a sample lacking the rule's metrics does not count; a metric the machine
//! lacks is absent, never zero). R8 (OOM kill) is an event and fires on any sample or when the
//! caller says the target was OOM-killed. Each `Finding` names the resource, its USE kind, a
//! severity, the points where it fired and quotes its evidence: per metric the load-phase mean and
//! p95, the baseline mean, the threshold, how many samples crossed it and where the threshold
//! comes from ("(p)" marks a proposal with no published anchor).
//!
//! Plus two findings from outside the monitor samples: errors that appear above some value of the
//! swept parameter ([`errors_by_parameter`]) and the rules' caveats ([`CAVEATS`]).

mod errors;
pub mod gate;
pub mod oltp_errors;
mod probes;
mod rules;
pub mod stream;

pub use errors::errors_by_parameter;
pub use probes::{latency_under_load, ProbeMedians, INFLATION_FACTOR, MIN_INCREASE_MS};

use super::table::SampleTable;
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

/// The caveats to print with the findings.
pub const CAVEATS: [&str; 5] = [
    "%util on SSD, NVMe, virtio or RAID devices is not capacity: 100 % only means always busy.",
    "iowait is idle time: a CPU waiting on I/O could have run other work.",
    "Load average includes tasks in uninterruptible (D) sleep, not only runnable ones.",
    "NIC line rate and thermal throttling cannot be observed here unless a line rate is given.",
    "Kernel work for loopback traffic (softirq) is charged to no process; it shows as other CPU.",
];

/// A rule fires when its condition holds in at least this fraction of load-phase samples.
pub const FIRE_FRACTION: f64 = 0.5;

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Utilization,
    Saturation,
    Errors,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Utilization => "utilization",
            Kind::Saturation => "saturation",
            Kind::Errors => "errors",
        }
    }
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Fired, but held in fewer than 90 % of the load samples.
    Warning,
    /// Held in ≥ 90 % of the load samples at some point, or an OOM kill, or errors.
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

/// The samples of one point of the matrix (all its trials pooled), on one host.
#[derive(Clone, Debug)]
pub struct PointSamples {
    pub label: String,
    /// Monitor samples of every phase; only `baseline` and `load` are used.
    pub samples: SampleTable,
    /// The target was OOM-killed (exit 137 or a cgroup oom_kill) in one of the point's trials.
    pub oom_killed: bool,
}

/// Facts about the machine the rules need.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Context {
    /// Online CPUs the run could use.
    pub ncpu: u32,
    /// NIC line rate in Mbit/s for R9 (unknown here unless given).
    pub line_rate_mbitps: Option<f64>,
    /// Cores the load generator may use for R12; None = min(ncpu, proc_loadgen_threads).
    pub loadgen_cores: Option<f64>,
}

/// One quoted figure.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Evidence {
    pub point: String,
    pub metric: String,
    /// Mean over the point's load-phase samples that have the metric.
    pub mean: f64,
    /// 95th percentile over the same samples (linear interpolation).
    pub p95: f64,
    /// Baseline-phase mean, if there was a baseline.
    pub baseline: Option<f64>,
    /// The comparison and threshold, e.g. ">=" 90.
    pub op: String,
    pub threshold: f64,
    /// Load samples whose value crossed the threshold, of `samples`.
    pub crossed: usize,
    pub samples: usize,
    /// Where the threshold comes from.
    pub source: String,
}

/// Where a rule fired: its condition held in `held` of `samples` load-phase samples.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Hit {
    pub point: String,
    pub held: usize,
    pub samples: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    /// "R1".."R12", or "E1" for errors along the swept parameter.
    pub rule: String,
    /// e.g. "CPU saturated".
    pub title: String,
    /// e.g. "CPU", "disk", "memory", "network", "load generator".
    pub resource: String,
    pub kind: Kind,
    pub severity: Severity,
    /// Labels of the points where it fired, in input order.
    pub points: Vec<String>,
    /// Per point, how many load samples the condition held in (empty for E1).
    pub hits: Vec<Hit>,
    pub evidence: Vec<Evidence>,
    /// Caveats that apply to this finding.
    pub caveats: Vec<String>,
}

fn fmt_num(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

impl Evidence {
    /// e.g. "c=10: cpu_busy_pct mean 96.50, p95 99 (baseline 3.10) >= 90 in 28/30 samples \[atop\]";
    /// a single value (E1) prints as "c=10: error rate 0.50".
    pub fn text(&self) -> String {
        if self.samples == 1 {
            return format!("{}: {} {}", self.point, self.metric, fmt_num(self.mean));
        }
        format!(
            "{}: {} mean {}, p95 {}{} {} {} in {}/{} samples [{}]",
            self.point,
            self.metric,
            fmt_num(self.mean),
            fmt_num(self.p95),
            self.baseline.map_or(String::new(), |b| format!(" (baseline {})", fmt_num(b))),
            self.op,
            fmt_num(self.threshold),
            self.crossed,
            self.samples,
            self.source
        )
    }
}

impl Finding {
    /// The evidence as one line, items separated by "; ".
    pub fn evidence_text(&self) -> String {
        let mut parts: Vec<String> = self
            .hits
            .iter()
            .map(|h| format!("{}: held in {}/{} load samples", h.point, h.held, h.samples))
            .collect();
        parts.extend(self.evidence.iter().map(Evidence::text));
        parts.join("; ")
    }
}

/// One sample plus what the rules need to judge it.
pub(crate) struct Env<'a> {
    table: &'a SampleTable,
    row: usize,
    matches: &'a Matches,
    baseline: &'a BTreeMap<String, f64>,
    /// Set when the rule read a baseline mean (see [`stream`]: such a rule is judged again once
    /// every trial's baseline is known).
    used_baseline: &'a Cell<bool>,
    pub ncpu: f64,
    pub ctx: &'a Context,
}

impl<'a> Env<'a> {
    pub fn get(&self, k: &str) -> Option<f64> {
        self.table.col(k).and_then(|c| self.table.value(self.row, c))
    }

    /// The baseline mean of a metric over the point's samples (every trial's).
    pub fn baseline(&self, k: &str) -> Option<f64> {
        self.used_baseline.set(true);
        self.baseline.get(k).copied()
    }

    /// (middle part, value) of every metric named `{prefix}{middle}{suffix}`, in column order.
    pub fn matching<'s>(&'s self, prefix: &'s str, suffix: &'s str) -> impl Iterator<Item = (&'a str, f64)> + 's {
        let m = self.matches.get(self.table, prefix, suffix);
        let (t, row) = (self.table, self.row);
        (0..m.len()).filter_map(move |i| {
            let (c, a, b) = m[i];
            t.value(row, c).map(|v| (&t.names()[c][a..b], v))
        })
    }
}

/// Columns whose names match a pattern: (column, start and end of the middle part).
type Matched = Rc<[(usize, usize, usize)]>;

/// Where a rule fired at a point: the hit, its evidence, and whether it is critical.
type Fired = Option<(Hit, Vec<Evidence>, bool)>;

/// The columns whose names match a (prefix, suffix), found once per point.
#[derive(Default)]
pub(crate) struct Matches(RefCell<Vec<(String, String, Matched)>>);

impl Matches {
    fn get(&self, t: &SampleTable, prefix: &str, suffix: &str) -> Matched {
        if let Some(e) = self.0.borrow().iter().find(|e| e.0 == prefix && e.1 == suffix) {
            return e.2.clone();
        }
        let m: Matched = t
            .names()
            .iter()
            .enumerate()
            .filter_map(|(c, n)| {
                let mid = n.strip_prefix(prefix)?.strip_suffix(suffix)?;
                (!mid.is_empty()).then_some((c, prefix.len(), prefix.len() + mid.len()))
            })
            .collect();
        self.0.borrow_mut().push((prefix.to_string(), suffix.to_string(), m.clone()));
        m
    }
}

/// A metric a rule points at in one sample, with the threshold it was held to.
pub(crate) struct Culprit {
    pub metric: String,
    pub op: Op,
    pub threshold: f64,
    pub source: &'static str,
}

#[derive(Clone, Copy)]
pub(crate) enum Op {
    Ge,
    Gt,
    Lt,
}

impl Op {
    fn holds(self, v: f64, th: f64) -> bool {
        match self {
            Op::Ge => v >= th,
            Op::Gt => v > th,
            Op::Lt => v < th,
        }
    }
    fn as_str(self) -> &'static str {
        match self {
            Op::Ge => ">=",
            Op::Gt => ">",
            Op::Lt => "<",
        }
    }
}

/// One rule: its condition over a sample (None when the sample lacks its metrics) and, when it
/// holds, the culprit metrics to quote.
pub(crate) struct Rule {
    pub id: &'static str,
    pub title: &'static str,
    pub resource: &'static str,
    pub kind: Kind,
    /// Fires on any single sample (events such as OOM kills).
    pub event: bool,
    pub check: fn(&Env) -> Option<Vec<Culprit>>,
    pub caveats: &'static [usize],
}

/// Evaluate R1–R12 at every point. Findings come in rule order; points in input order.
///
/// Each point is the samples of one host (the caller loops over hosts): the rules compare a
/// host's load phase with its own baseline.
pub fn evaluate(points: &[PointSamples], ctx: &Context) -> Vec<Finding> {
    // Per point, per rule: where it fired (each point read as one "trial", whole).
    let fired: Vec<Vec<Fired>> = points
        .iter()
        .map(|p| {
            let mut read = |_: usize, _: &dyn Fn(&str) -> bool, t: &mut SampleTable| {
                t.append(&p.samples);
                Ok(())
            };
            stream::point(&p.label, 1, p.oom_killed, ctx, &mut read).unwrap_or_default()
        })
        .collect();
    let labels: Vec<&str> = points.iter().map(|p| p.label.as_str()).collect();
    assemble(&labels, &fired)
}

/// The findings of points whose rules were judged (`fired[point][rule]`), in rule order.
fn assemble(labels: &[&str], fired: &[Vec<Fired>]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (ri, rule) in rules::RULES.iter().enumerate() {
        let mut f = Finding {
            rule: rule.id.into(),
            title: rule.title.into(),
            resource: rule.resource.into(),
            kind: rule.kind,
            severity: Severity::Warning,
            points: Vec::new(),
            hits: Vec::new(),
            evidence: Vec::new(),
            caveats: rule.caveats.iter().map(|&i| CAVEATS[i].to_string()).collect(),
        };
        for (label, per_rule) in labels.iter().zip(fired) {
            if let Some((hit, ev, critical)) = per_rule.get(ri).cloned().flatten() {
                f.points.push(label.to_string());
                f.hits.push(hit);
                f.evidence.extend(ev);
                if critical {
                    f.severity = Severity::Critical;
                }
            }
        }
        if !f.points.is_empty() {
            out.push(f);
        }
    }
    out
}

/// Evaluate R1–R12 at one point whose trials are read one at a time: `read(i, wanted, table)`
/// appends trial `i`'s samples (at least the metrics `wanted` accepts) to `table`, which is
/// emptied of rows before each trial. The same findings as [`evaluate`] over the trials pooled,
/// with the memory of one trial's samples (the metrics the rules read) and the load-phase values
/// of the metrics the findings quote. `oom_killed`: the target was OOM-killed in one of them.
pub fn evaluate_trials(
    label: &str,
    trials: usize,
    oom_killed: bool,
    ctx: &Context,
    read: &mut stream::Read<'_>,
) -> anyhow::Result<Vec<Finding>> {
    let fired = stream::point(label, trials, oom_killed, ctx, read)?;
    Ok(assemble(&[label], &[fired]))
}
