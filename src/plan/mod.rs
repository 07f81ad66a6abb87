//! Plans: parse a TOML plan, validate it with file:line:column errors, expand the matrix into trials.
//!
//! `parse_str` checks everything that can be checked before a run starts (syntax, keys, types,
//! `${name}` references, durations, signals, CPU sets this machine cannot honour, a ready port already
//! in use) and resolves the target of every matrix point; `expand` lists the trials in execution
//! order. The format is documented in docs/plan.md.

mod expand;
mod hints;
mod host_programs;
mod hosts;
mod matrix;
mod monitor;
mod no_effect;
mod ports;
mod probes;
mod profile;
mod raw;
mod rules;
mod secrets;
mod source;
mod target;
mod tool_durations;
mod validate;
mod values;
mod variant_settings;

pub use expand::{dry_run_listing, dry_run_listing_with, estimate, expand, trial_for};
pub use host_programs::{on_host as programs_on_host, NeededProgram};
pub use hosts::{load_from, HostSpec, HOST_KEYS};
pub use monitor::MonitorHosts;
pub use probes::MAX_PROBES;
pub use profile::{ProfileScope, ProfileSpec};
pub use rules::MAX_REPETITIONS;
pub use secrets::{Secrets, SENSITIVE_HEADERS};
pub use source::Source;
pub use target::{host_named, Limits, LogPattern, Ready, ResolvedTarget};
pub use values::Params;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// The most trials a plan may make: matrix points × repetitions (for adaptive repetitions, their
/// `max`). A plan above it is refused, with its count, before any point is built.
pub const MAX_TRIALS: usize = 100_000;

/// The largest plan file perflab reads (64 MiB).
pub const MAX_PLAN_BYTES: u64 = 64 << 20;

/// A validated plan.
#[derive(Clone, Debug)]
pub struct Plan {
    pub name: String,
    pub description: String,
    /// The plan's text and its label (the path as given), for messages and the copy in the run dir.
    pub source: Source,
    pub has_target: bool,
    /// `restart = "keep"`: one target kept across the trials of the same target configuration.
    pub keep_target: bool,
    pub workload: WorkloadSpec,
    pub matrix: Matrix,
    /// Every matrix point that will run (after `exclude` and skipped points), target resolved.
    pub points: Vec<Point>,
    pub phases: Phases,
    pub repetitions: Repetitions,
    pub order: Order,
    pub seed: u64,
    pub thresholds: Vec<Threshold>,
    /// Setup/teardown hooks for values of the matrix parameter named `variant`.
    pub variants: BTreeMap<String, VariantHooks>,
    /// Notes for the user (points skipped with `skip_unsupported`).
    pub notes: Vec<String>,
    /// What the plan keeps secret: its copy without them, and the redactor for everything else.
    pub secrets: Secrets,
    /// The remote hosts of `[hosts]` (`local` is implied); with matrix values in `[hosts]`, every
    /// distinct host of every point.
    pub hosts: Vec<HostSpec>,
    /// `[monitor] hosts`: the machines sampled during every trial (default: all of them).
    pub monitor_hosts: MonitorHosts,
    /// `[profile]`: profiles of the target during every trial's load phase (None: none asked for).
    pub profile: Option<ProfileSpec>,
}

#[derive(Clone, Debug)]
pub struct WorkloadSpec {
    /// `type`: the name of a kind in `crate::workload::registry`.
    pub kind: String,
    /// The table as written (before substitution).
    pub table: toml::Table,
}

#[derive(Clone, Debug, Default)]
pub struct Matrix {
    /// Parameters in declaration order, each with its values.
    pub params: Vec<(String, Vec<toml::Value>)>,
    pub exclude: Vec<toml::Table>,
}

/// One combination of matrix values.
#[derive(Clone, Debug)]
pub struct Point {
    pub id: usize,
    /// `concurrency=10 model=pool` (from `shown`: a value that feeds a secret reads `[redacted]`).
    pub label: String,
    pub params: Params,
    /// The parameters as labels, the store and reports show them (see `Secrets::shown`).
    pub shown: Params,
    pub target: Option<ResolvedTarget>,
    /// The `[workload]` table with `${name}` substituted.
    pub workload: toml::Table,
    /// The `[[probes]]` with `${name}` substituted, in plan order.
    pub probes: Vec<crate::probe::ProbeSpec>,
    /// The `[hosts]` at this point (their values may take matrix values).
    pub hosts: Vec<HostSpec>,
}

impl Point {
    /// The parameters as shown (`shown`) as a JSON object (declaration order).
    pub fn params_json(&self) -> String {
        let map: serde_json::Map<String, serde_json::Value> = self
            .shown
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap_or(serde_json::Value::Null)))
            .collect();
        serde_json::Value::Object(map).to_string()
    }

    /// The value of the `variant` parameter, if any.
    pub fn variant(&self) -> Option<String> {
        self.params.iter().find(|(k, _)| k == "variant").map(|(_, v)| values::display(v))
    }
}

/// Phase durations and the sampling interval of every trial.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Phases {
    pub baseline: Duration,
    pub warmup: Duration,
    pub load: Duration,
    pub recovery: Duration,
    pub interval: Duration,
}

impl Phases {
    /// The length of one trial's phases (not counting the target's start and stop).
    pub fn total(&self) -> Duration {
        self.baseline
            .saturating_add(self.warmup)
            .saturating_add(self.load)
            .saturating_add(self.recovery)
    }
}

impl Default for Phases {
    fn default() -> Phases {
        Phases {
            baseline: Duration::from_secs(5),
            warmup: Duration::from_secs(2),
            load: Duration::from_secs(10),
            recovery: Duration::from_secs(5),
            interval: Duration::from_secs(1),
        }
    }
}

/// How many repetitions each point gets.
#[derive(Clone, Debug, PartialEq)]
pub enum Repetitions {
    Fixed(u32),
    /// `expand` lists `min` repetitions; the runner adds more (up to `max`) while the 95 % CI
    /// half-width of `metric` is above `ci_pct` % of its mean. Without a `metric`, the workload's
    /// declared primary throughput (its primary latency when it declares no throughput).
    Adaptive {
        min: u32,
        max: u32,
        ci_pct: f64,
        metric: Option<String>,
    },
}

impl Repetitions {
    pub fn planned(&self) -> u32 {
        match self {
            Repetitions::Fixed(n) => *n,
            Repetitions::Adaptive { min, .. } => *min,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// All repetitions of a point, then the next point.
    Sequential,
    /// Every point once, then every point again (repetition rounds): drift spreads over all points.
    Interleaved,
    /// Repetition rounds, each in a seeded random order of the points.
    Shuffled,
}

/// A pass/fail rule on a summary metric of every matrix point.
#[derive(Clone, Debug, PartialEq)]
pub struct Threshold {
    /// As written, e.g. `latency_p99_ms < 50`.
    pub expr: String,
    pub metric: String,
    pub op: Op,
    pub value: f64,
}

/// The comparison of a threshold: the observed value must be `<`, `<=`, `>` or `>=` the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    /// `<`, `<=`, `>` or `>=`; anything else is not an operator.
    pub fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }

    /// Whether `observed op limit` holds.
    pub fn holds(self, observed: f64, limit: f64) -> bool {
        match self {
            Op::Lt => observed < limit,
            Op::Le => observed <= limit,
            Op::Gt => observed > limit,
            Op::Ge => observed >= limit,
        }
    }
}

/// Shell commands run before a variant's trials (setup) and after them (teardown).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VariantHooks {
    pub setup: Vec<String>,
    pub teardown: Vec<String>,
    /// Shell commands checked when the run starts: if one fails, the variant's trials are skipped
    /// (with its stderr's last line as the reason) instead of failing one by one.
    pub skip_unless: Vec<String>,
}

/// One trial: a point and a repetition, in execution order.
#[derive(Clone, Debug)]
pub struct Trial {
    /// 0-based position in execution order.
    pub index: usize,
    pub point: usize,
    pub point_label: String,
    pub params: Params,
    /// 1-based.
    pub repetition: u32,
    pub target: Option<ResolvedTarget>,
    pub workload: toml::Table,
    /// The point's `[[probes]]`.
    pub probes: Vec<crate::probe::ProbeSpec>,
}

/// Read and validate a plan file.
pub fn load(path: &Path) -> anyhow::Result<Plan> {
    let label = path.display().to_string();
    let text = read(path)?;
    parse_str(&text, &label)
}

/// A plan file's text. A file that is not UTF-8 is refused at the line and column of its first bad
/// byte.
pub fn read(path: &Path) -> anyhow::Result<String> {
    let label = path.display().to_string();
    let bytes =
        crate::util::fs::read_bounded(path, MAX_PLAN_BYTES).map_err(|e| crate::error::usage(format!("cannot read plan {label}: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        let good = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let text = std::str::from_utf8(&bytes[..good]).unwrap_or_default();
        let (line, col) = Source::new(text, &label).line_col(good);
        crate::error::usage(format!(
            "{label}:{line}:{col}: the plan is not UTF-8 text (byte 0x{:02x}); save it as UTF-8",
            bytes[good]
        ))
    })
}

/// 1-based (line, column) of a byte range's start in the plan's source, so a caller can report an
/// error found later (e.g. while decoding the workload table) at its place in the file.
pub fn locate(plan: &Plan, span: std::ops::Range<usize>) -> (usize, usize) {
    plan.source.line_col(span.start)
}

/// Validate a plan's text; `file_label` names it in messages (`plan.toml:7:13: ...`).
pub fn parse_str(source: &str, file_label: &str) -> anyhow::Result<Plan> {
    validate::plan(Source::new(source, file_label))
}

impl Plan {
    /// Refuse a plan whose target's ready port on loopback something else already listens on (it
    /// would answer instead of the target). A check of this machine, not of the file: `run` and
    /// `demo` make it before anything starts, parsing alone does not.
    pub fn check_ports(&self) -> anyhow::Result<()> {
        ports::check_ports(&self.points, &self.source)
    }

    /// `file:line:col` of a key of the `[workload]` table (or of the table itself).
    pub fn locate_workload_key(&self, key: Option<&str>) -> String {
        let mut path = vec!["workload"];
        path.extend(key);
        self.source.at(&self.source.key_span(&path))
    }

    /// `file:line:col` of the `i`-th `[[probes]]` table.
    pub fn locate_probe(&self, i: usize) -> String {
        self.source.at(&self.source.element_span(&["probes"], i))
    }

    /// `file:line:col` of the `i`-th rule of `thresholds`.
    pub fn locate_threshold(&self, i: usize) -> String {
        self.source.at(&self.source.element_span(&["thresholds"], i))
    }

    /// `file:line:col` of any key by its path, e.g. `["target", "ready", "tcp"]` (when the last key is
    /// absent: the deepest table that exists).
    pub fn locate_key(&self, path: &[&str]) -> String {
        self.source.at(&self.source.key_span(path))
    }
}
