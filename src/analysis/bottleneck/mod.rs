//! Bottleneck findings: the USE-method rules (docs/metrics.md, "Bottleneck rules"), each declared
//! once as data in `rules.rs` ([`RULES`]), evaluated per point over the load phase against the
//! baseline phase.
//!
//! A rule fires at a point when its condition holds in ≥ 50 % of the load-phase samples where the
//! sample's metrics decide it (a metric the machine lacks is absent, never zero). R8 (OOM kill) is
//! an event and fires on any sample or when the caller says the target was OOM-killed. Each
//! `Finding` names the resource, its USE kind, a severity, the points where it fired and quotes its
//! evidence: per metric the load-phase mean and p95, the baseline mean, the threshold, how many
//! samples crossed it and where the threshold comes from ("(p)" marks a proposal with no published
//! anchor). [`rank`] orders findings by whom they blame ([`Culprit`]).
//!
//! Plus findings from outside the monitor samples: errors that appear above some value of the
//! swept parameter ([`errors_by_parameter`], E1; [`oltp_errors`], E2), latency probes (P1), the
//! diagnoses from the workload's own figures ([`diagnoses`]: round-trip bound D1, load generator
//! too weak D2, headroom D3) and the rules' caveats ([`CAVEATS`]).

pub mod diagnoses;
pub mod docs;
mod errors;
mod eval;
pub mod gate;
pub mod knee;
pub mod oltp_errors;
mod probes;
pub mod rule;
mod rules;
pub mod stream;

pub use errors::errors_by_parameter;
pub use probes::{latency_under_load, ProbeMedians, INFLATION_FACTOR, MIN_INCREASE_MS};
pub use rule::{Culprit, RuleId};
pub use rules::{culprit_of, rule_of, RULES};

use super::table::SampleTable;
use serde::{Deserialize, Serialize};

/// The caveats to print with the findings.
pub const CAVEATS: [&str; 5] = [
    "%util on SSD, NVMe, virtio or RAID devices is not capacity: 100 % only means always busy.",
    "iowait is idle time: a CPU waiting on I/O could have run other work.",
    "Load average includes tasks in uninterruptible (D) sleep, not only runnable ones.",
    "NIC line rate and thermal throttling cannot be observed here unless a line rate is given.",
    "Kernel work for loopback traffic (softirq) is not always charged to a process: the others' share counts it with the target and the load generator.",
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
    /// The host judged is the load generator's own machine, but its samples do not have the load
    /// generator's processes (a host in a network namespace of this machine): R14 instead of R11.
    #[serde(default)]
    pub loadgen_unsampled: bool,
}

impl Context {
    /// A machine of `ncpu` CPUs, no line rate, the load generator's cores unknown.
    pub fn of(ncpu: u32) -> Context {
        Context {
            ncpu,
            line_rate_mbitps: None,
            loadgen_cores: None,
            loadgen_unsampled: false,
        }
    }
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
    /// The figure the rule's title names at this point (R13: the target's CPU limit in CPUs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure: Option<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    /// The rule: "R1".."R14" (monitor samples), "E1"/"E2" (errors along the swept parameter),
    /// "P1" (latency probes), "D1".."D3" (diagnoses).
    pub rule: RuleId,
    /// The host whose samples fired it, when the report covers several hosts (`local`, `server`);
    /// absent when it covers only this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
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
    /// What the profiles of the points it fired at say (`[profile]`): "c=50: 62 % of the on-CPU
    /// samples of process tree of PID 12 in `deflate_slow`".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profile: Vec<String>,
}

/// A figure as the findings print it: whole above 100 or when whole, else 3 significant digits
/// at most (81.33 → 81.3, 2.456 → 2.46).
pub fn fmt_num(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

impl Evidence {
    /// The unit the metric's figures print with: " %" for a percentage, else none.
    fn unit(&self) -> &'static str {
        if self.metric.ends_with("_pct") {
            " %"
        } else {
            ""
        }
    }

    /// What met the rule, e.g. "cpu_busy_pct ≥ 90 % in 10 of 18 samples, mean 81.3 %"; a single
    /// value (E1, E2, P1) as "errors per trial 0.50".
    pub fn statement(&self) -> String {
        let u = self.unit();
        if self.samples == 1 {
            return format!("{} {}{u}", self.metric, fmt_num(self.mean));
        }
        format!(
            "{} {} {}{u} in {} of {} samples, mean {}{u}",
            self.metric,
            self.sign(),
            fmt_num(self.threshold),
            self.crossed,
            self.samples,
            fmt_num(self.mean)
        )
    }

    /// The comparison as printed ("≥").
    fn sign(&self) -> &str {
        match self.op.as_str() {
            ">=" => "≥",
            "<=" => "≤",
            other => other,
        }
    }

    /// e.g. "c=10: cpu_busy_pct ≥ 90 % in 28 of 30 samples, mean 96.5 % (p95 99 %, baseline
    /// 3.10 %) \[atop\]"; a single value (E1) prints as "c=10: errors per trial 0.50".
    pub fn text(&self) -> String {
        if self.samples == 1 {
            return format!("{}: {}", self.point, self.statement());
        }
        let u = self.unit();
        format!(
            "{}: {} (p95 {}{u}{}) [{}]",
            self.point,
            self.statement(),
            fmt_num(self.p95),
            self.baseline.map_or(String::new(), |b| format!(", baseline {}{u}", fmt_num(b))),
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
            .map(|h| format!("{}: held in {} of {} load samples", h.point, h.held, h.samples))
            .collect();
        parts.extend(self.evidence.iter().map(Evidence::text));
        parts.extend(self.profile.iter().map(|q| format!("profile: {q}")));
        parts.join("; ")
    }

    /// Its title with the host it was found on, when the report has several: "server: CPU
    /// saturated".
    pub fn name(&self) -> String {
        match &self.host {
            Some(h) => format!("{h}: {}", self.title),
            None => self.title.clone(),
        }
    }

    /// Whom it blames (the rank it has among the findings).
    pub fn culprit(&self) -> Culprit {
        culprit_of(self.rule)
    }
}

/// Where a rule fired at a point: the hit, its evidence, and whether it is critical.
type Fired = Option<(Hit, Vec<Evidence>, bool)>;

/// Order findings as the report lists them: errors and the target's own limits first, then the
/// system under test's resources, then the load generator and the host ([`Culprit`]); within
/// each, critical before warning, then by rule id (stable: one rule's hosts keep their order).
pub fn rank(findings: &mut [Finding]) {
    findings.sort_by_key(|f| (f.culprit(), f.severity != Severity::Critical, f.rule));
}

/// A rule's title, with the figure it names at the points where it fired ("(1 CPU)").
fn title_of(rule: &rule::Rule, hits: &[Hit]) -> String {
    let Some(fig) = rule.figure else {
        return rule.title.to_string();
    };
    let mut vals: Vec<f64> = hits.iter().filter_map(|h| h.figure).collect();
    vals.sort_by(|a, b| a.total_cmp(b));
    vals.dedup_by(|a, b| fmt_num(*a) == fmt_num(*b));
    let short = |v: f64| {
        let s = fmt_num(v);
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    let unit = |v: f64| if short(v) == "1" { fig.unit } else { fig.units };
    match vals.as_slice() {
        [] => rule.title.to_string(),
        [v] => format!("{} ({} {})", rule.title, short(*v), unit(*v)),
        [lo, .., hi] => format!("{} ({} to {} {})", rule.title, short(*lo), short(*hi), fig.units),
    }
}

/// Give a finding merged from several points' its title again (the figures of all its hits).
pub fn retitle(f: &mut Finding) {
    if let Some(rule) = rule_of(f.rule).filter(|r| r.figure.is_some()) {
        f.title = title_of(rule, &f.hits);
    }
}

/// Evaluate the sampled rules at every point. Findings come in rule order; points in input order.
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
    for (ri, rule) in rules::sampled().enumerate() {
        let mut f = Finding {
            rule: rule.id,
            host: None,
            title: rule.title.into(),
            resource: rule.resource.into(),
            kind: rule.kind,
            severity: Severity::Warning,
            points: Vec::new(),
            hits: Vec::new(),
            evidence: Vec::new(),
            caveats: rule.caveats.iter().map(|&i| CAVEATS[i].to_string()).collect(),
            profile: Vec::new(),
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
            f.title = title_of(rule, &f.hits);
            out.push(f);
        }
    }
    out
}

/// Evaluate the sampled rules at one point whose trials are read one at a time: `read(i, wanted, table)`
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

/// Where the load generator itself saturated (rule R12, with its own threshold: its CPU at 90 % or
/// more of the cores it could use in the load phase) over the `trials` trials of point `label`
/// that `read` gives: "at c=100 (its CPU 196 % in the load phase, the limit 180 %)", one line for
/// each time it fired; empty when it never did.
pub fn load_generator_saturated(label: &str, trials: usize, ctx: &Context, read: &mut stream::Read<'_>) -> anyhow::Result<Vec<String>> {
    let findings = evaluate_trials(label, trials, false, ctx, read)?;
    Ok(findings
        .iter()
        .filter(|f| f.rule == RuleId::r(12))
        .flat_map(|f| &f.evidence)
        .map(|e| {
            format!(
                "at {} (its CPU {:.0} % in the load phase, the limit {:.0} %)",
                e.point, e.mean, e.threshold
            )
        })
        .collect())
}
