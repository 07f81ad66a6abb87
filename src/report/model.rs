//! The report model: everything the renderers print, assembled from one or more stores. It is
//! serialized as `report.json` (schema in docs/report-json.md), so JSON and tables hold the same
//! numbers. Rendering never computes; it only formats this model.

pub use crate::analysis::compare::Verdict;
use crate::analysis::stats::Summary;
use crate::workload::Better;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

pub use super::assemble::{build, MAX_TRIAL_CHARTS};

#[derive(Clone, Debug, Serialize)]
pub struct RunFacts {
    pub run: String,
    pub plan: String,
    pub plan_file: String,
    pub host: String,
    pub kernel: String,
    pub ncpu: u32,
    pub mem_total_mb: f64,
    pub seed: u64,
    pub status: String,
    pub perflab_version: String,
    pub started_unix: f64,
    pub ended_unix: Option<f64>,
    pub planned_trials: usize,
    pub trials_ok: usize,
    pub trials_failed: usize,
    pub limit_mechanism: Option<String>,
    pub limit_proof: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct MetricRow {
    pub name: String,
    pub unit: String,
    pub better: Better,
    pub summary: Summary,
    /// CV (%) of the per-run means when several runs are pooled; None otherwise.
    pub between_run_cv_pct: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PercentileRow {
    pub histogram: String,
    /// Values in the merged histogram (all ok trials of the point).
    pub count: u64,
    /// (label, value in ms); only the percentiles the count supports.
    pub percentiles: Vec<(String, f64)>,
    pub max_ms: f64,
    /// Percentiles left out because the sample is too small, e.g. "p99.9 needs >= 1000 values".
    pub omitted: Vec<String>,
    /// (1/(1-q), ms) from q = 0 up to the last quantile the count supports, for the spectrum chart.
    #[serde(skip)]
    pub spectrum: Vec<(f64, f64)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PhaseRow {
    pub metric: String,
    pub baseline: Option<f64>,
    pub under_load: Option<f64>,
    pub peak: Option<f64>,
    pub recovery: Option<f64>,
    /// Worst (largest) seconds after the load ended until the metric was back within 10 % of its
    /// baseline, over the point's trials; None if it never came back or there is no recovery phase.
    pub recovery_s: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PointReport {
    pub label: String,
    pub params: BTreeMap<String, Value>,
    pub trials: usize,
    pub failed: usize,
    pub stop_reason: Option<String>,
    pub metrics: Vec<MetricRow>,
    pub latency: Vec<PercentileRow>,
    pub system: Vec<PhaseRow>,
    pub errors: Vec<(String, u64)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ScalingRow {
    pub variant: String,
    pub x: f64,
    pub n: usize,
    pub throughput: f64,
    pub ci95: Option<f64>,
    pub speedup: Option<f64>,
    pub efficiency: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Scaling {
    pub parameter: String,
    pub throughput_metric: String,
    pub unit: String,
    pub rows: Vec<ScalingRow>,
    /// Per variant: the x after which throughput gains < 5 % while latency grows.
    pub knees: Vec<(String, f64)>,
    /// Per variant with a knee: what was saturated there (e.g. "CPU busy >= 90 % (cpu_busy_pct 97.2)").
    pub saturated_at_knee: Vec<(String, Vec<String>)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub parameter: String,
    pub a: String,
    pub b: String,
    /// The other parameters held fixed, e.g. "concurrency=10".
    pub at: String,
    pub metric: String,
    pub unit: String,
    pub n_a: usize,
    pub n_b: usize,
    pub mean_a: f64,
    pub mean_b: f64,
    pub delta_pct: Option<f64>,
    /// 95 % CI of the Δ % (Welch CI of the difference divided by mean a).
    pub ci95_low_pct: Option<f64>,
    pub ci95_high_pct: Option<f64>,
    pub test: String,
    pub p: Option<f64>,
    pub verdict: Verdict,
}

#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// The rule that fired: R1..R12 (docs/metrics.md) or E1 (errors along the swept parameter).
    pub rule: String,
    /// e.g. "CPU saturated".
    pub title: String,
    pub resource: String,
    pub kind: String,
    pub severity: String,
    pub points: Vec<String>,
    pub evidence: String,
    /// Caveats that apply to this finding.
    pub caveats: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FailedTrial {
    pub run: String,
    pub trial: usize,
    pub point: String,
    pub reason: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct ReportModel {
    pub schema: u32,
    pub title: String,
    pub runs: Vec<RunFacts>,
    pub swept: Option<String>,
    pub variant_parameters: Vec<String>,
    pub points: Vec<PointReport>,
    pub scaling: Option<Scaling>,
    pub comparisons: Vec<Comparison>,
    pub findings: Vec<Finding>,
    pub failed: Vec<FailedTrial>,
    pub notes: Vec<String>,
    /// Trial ids (run index, trial id, point label) that have a time-series chart.
    #[serde(skip)]
    pub charted: Vec<TrialSeries>,
}

/// The monitor samples of one trial, kept for its time-series chart (not in the JSON).
#[derive(Clone, Debug)]
pub struct TrialSeries {
    pub name: String,
    pub phases: Vec<(String, f64, f64)>,
    /// metric → (t_s, value)
    pub series: BTreeMap<String, Vec<(f64, f64)>>,
}
