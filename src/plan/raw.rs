//! The plan file as TOML gives it, before validation: every key checked (unknown keys are errors with a
//! did-you-mean hint), values kept with their spans so later checks can point at them.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::{Spanned, Table, Value};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPlan {
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    pub repetitions: Option<Spanned<Value>>,
    pub order: Option<Spanned<String>>,
    pub seed: Option<Spanned<i64>>,
    #[serde(default)]
    pub skip_unsupported: bool,
    pub target: Option<Spanned<Table>>,
    pub workload: Option<Spanned<Table>>,
    pub matrix: Option<Spanned<Table>>,
    #[serde(default)]
    pub variant: BTreeMap<String, Spanned<RawHooks>>,
    pub phases: Option<RawPhases>,
    #[serde(default)]
    pub thresholds: Vec<Spanned<Value>>,
    #[serde(default)]
    pub probes: Vec<Spanned<RawProbe>>,
    pub report: Option<Spanned<RawReport>>,
    /// `[hosts]`: remote machines reached over ssh.
    pub hosts: Option<Spanned<Table>>,
    /// `[monitor]`: the hosts sampled during the trials.
    pub monitor: Option<Spanned<Table>>,
    /// `[profile]`: profiles of the target during the load phase.
    pub profile: Option<Spanned<Table>>,
}

/// One `[[probes]]` table: every value kept with its span, and substituted per matrix point.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawProbe {
    pub kind: Option<Spanned<String>>,
    pub target: Option<Spanned<Value>>,
    pub name: Option<Spanned<String>>,
    pub interval: Option<Spanned<Value>>,
    pub timeout: Option<Spanned<Value>>,
    pub size: Option<Spanned<Value>>,
    pub socket: Option<Spanned<Value>>,
    pub insecure: Option<Spanned<Value>>,
    pub cacert: Option<Spanned<Value>>,
}

/// The hooks of `[variant.<value>]`; its other keys are the variant's settings
/// (`variant_settings.rs`), checked there.
#[derive(Deserialize, Default)]
pub struct RawHooks {
    #[serde(default)]
    pub setup: Commands,
    #[serde(default)]
    pub teardown: Commands,
    /// Preconditions: shell commands that must all succeed for this variant's trials to run;
    /// otherwise they are skipped with a note (e.g. `test -w /proc/sys/vm/swappiness`).
    #[serde(default)]
    pub skip_unless: Commands,
}

/// One shell command or a list of them.
#[derive(Deserialize, Default, Clone)]
#[serde(untagged)]
pub enum Commands {
    #[default]
    None,
    One(String),
    Many(Vec<String>),
}

impl Commands {
    pub fn into_vec(self) -> Vec<String> {
        match self {
            Commands::None => Vec::new(),
            Commands::One(s) => vec![s],
            Commands::Many(v) => v,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawPhases {
    pub baseline: Option<Spanned<Value>>,
    pub warmup: Option<Spanned<Value>>,
    pub load: Option<Spanned<Value>>,
    pub recovery: Option<Spanned<Value>>,
    pub interval: Option<Spanned<Value>>,
}

/// The keys `[target]` accepts (it is kept as a table because `${name}` is substituted per point).
pub const TARGET_KEYS: &[&str] = &[
    "command",
    "cwd",
    "env",
    "ready",
    "stop",
    "cpus",
    "cpu_quota",
    "memory",
    "restart",
    "secrets",
    "host",
];

/// `[report]`: what the report compares and plots (checked against the matrix in
/// `validate::report_section`; the report reads the same keys back from the stored plan).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawReport {
    pub compare: Option<Spanned<String>>,
    pub baseline: Option<Spanned<Value>>,
    pub x: Option<Spanned<String>>,
    pub x_scale: Option<Spanned<String>>,
    pub metrics: Option<Spanned<Vec<String>>>,
    pub system: Option<Spanned<Vec<String>>>,
}
