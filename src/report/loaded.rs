//! The pieces every part of the report shares: a trial as loaded from its store ([`Loaded`]),
//! redaction ([`safe`]), and the texts a point's parameters make (`k=v`, its variant).
//!
//! A loaded trial holds neither its per-phase summaries (stored when the trial ended) nor its
//! monitor samples: both are read from the store where they are needed (the phase table and the
//! findings of one point at a time, a chart), so the report's memory does not grow with the number
//! of trials.
//!
//! This module imports nothing else from `report/`: the section builders and the assembly all
//! depend on it, never the other way.

use crate::analysis::phases::PhaseStats;
use crate::analysis::table::SampleTable;
use crate::store::{Store, StoredTrial, TaggedSample};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

/// One trial with the run it came from and its parameters.
pub struct Loaded {
    /// Index of its run among the run directories given.
    pub run: usize,
    pub point_label: String,
    pub params: BTreeMap<String, Value>,
    pub trial: StoredTrial,
    /// Whether it has monitor samples (and so per-phase summaries).
    pub sampled: bool,
    /// The store it came from (for its samples).
    pub store: Rc<Store>,
}

impl Loaded {
    /// Whether the trial has monitor samples.
    pub fn sampled(&self) -> bool {
        self.sampled
    }

    /// Per-phase summaries of its monitor samples, one per sampled metric, sorted by name, read
    /// from its store (one point's trials at a time, so the report's memory does not grow with
    /// the number of trials).
    pub fn summaries(&self) -> anyhow::Result<Vec<PhaseStats>> {
        if !self.sampled {
            return Ok(Vec::new());
        }
        self.store.phase_summaries(self.trial.id, &self.trial.phases)
    }

    /// The trial's monitor samples, read from its store.
    pub fn samples(&self) -> anyhow::Result<Vec<TaggedSample>> {
        self.store.samples(self.trial.id)
    }

    /// The trial's monitor samples by column (as the bottleneck rules read them), from its store.
    pub fn sample_table(&self) -> anyhow::Result<SampleTable> {
        self.store.sample_table_on(self.trial.id, crate::store::LOCAL_HOST)
    }
}

/// The summary of one sampled metric among a trial's `summaries` (all counts zero when the trial
/// did not sample it).
pub fn summary_of(summaries: &[PhaseStats], metric: &str) -> PhaseStats {
    match summaries.binary_search_by(|s| s.metric.as_str().cmp(metric)) {
        Ok(i) => summaries[i].clone(),
        Err(_) => PhaseStats {
            metric: metric.to_string(),
            baseline: None,
            under_load: None,
            peak: None,
            recovery: None,
            recovery_s: None,
            never_recovered: false,
            n_baseline: 0,
            n_load: 0,
            n_recovery: 0,
        },
    }
}

/// `crate::store::redact`, made idempotent: the store already redacted what it kept, and redacting
/// `[redacted]` again would append a stray `]` each time.
pub fn safe(text: &str) -> String {
    let mut s = crate::store::redact(text);
    while s.contains("[redacted]]") {
        s = s.replace("[redacted]]", "[redacted]");
    }
    s
}

/// A run's name: its directory's last component.
pub fn run_name(dir: &Path) -> String {
    dir.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string())
}

/// A parameter value as written in a label: strings bare, everything else as JSON.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A trial's parameters from their stored JSON object (empty when it is not one).
pub fn params_of(json: &str) -> BTreeMap<String, Value> {
    match serde_json::from_str::<Value>(json) {
        Ok(Value::Object(m)) => m.into_iter().collect(),
        _ => BTreeMap::new(),
    }
}

/// The variant of a point: its variant parameters as "k=v k=v" (or "all").
pub fn variant_of(params: &BTreeMap<String, Value>, variant_params: &[String]) -> String {
    let parts: Vec<String> = variant_params
        .iter()
        .filter_map(|k| params.get(k).map(|v| format!("{k}={}", value_text(v))))
        .collect();
    if parts.is_empty() {
        "all".into()
    } else {
        safe(&parts.join(" "))
    }
}

/// Is this system metric one of the key ones shown in the phase table and the trial charts?
pub fn key_system_metric(name: &str) -> bool {
    matches!(
        name,
        "cpu_busy_pct"
            | "procs_running"
            | "load_1"
            | "mem_used_mb"
            | "mem_used_pct"
            | "proc_target_cpu_pct"
            | "proc_target_rss_mb"
            | "proc_loadgen_cpu_pct"
            | "tcp_retrans_per_s"
    ) || (name.starts_with("disk_") && (name.ends_with("_util_pct") || name.ends_with("_mbps")))
        || (name.starts_with("net_") && name.ends_with("_mbitps"))
}
