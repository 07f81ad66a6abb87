//! The report model: everything the renderers print, assembled from one or more stores. It is
//! serialized as `report.json` (schema in docs/report-json.md), so JSON and tables hold the same
//! numbers. Rendering never computes; it only formats this model.
//!
//! The analysis' own types are embedded, not re-declared: a finding is a
//! [`crate::analysis::bottleneck::Finding`], a comparison carries a
//! [`crate::analysis::compare::Comparison`] and a scaling row a
//! [`crate::analysis::scaling::ScalingRow`].

pub use super::phases::PhaseRow;
use super::spec::ReportSpec;
pub use crate::analysis::bottleneck::Finding;
pub use crate::analysis::compare::Verdict;
use crate::analysis::stats::Summary;
use crate::analysis::{compare, scaling};
use crate::model::Better;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The version of the `report.json` shape (docs/report-json.md).
pub const SCHEMA: u32 = 4;

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
    /// A run merged from a split load's segments (`perflab merge`): which, where (`2 segments
    /// (0/2 on client1, 1/2 on client2)`); None for any other run.
    pub segments: Option<String>,
    /// Why a merged run is not the whole load (`perflab merge --allow-partial`): one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub partial: Vec<String>,
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

/// A percentile the workload's tool printed once per trial (ab, wrk, sysbench, fio: no histogram is
/// stored, so nothing can be merged). Never averaged: the point shows the median of the per-trial
/// values, with how many trials they are.
#[derive(Clone, Debug, Serialize)]
pub struct PrintedPercentile {
    pub name: String,
    pub unit: String,
    pub better: Better,
    /// The quantile q (0.99 for a p99; 1 for a maximum).
    pub quantile: f64,
    /// Trials that printed it.
    pub n: usize,
    /// Median of the per-trial values.
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct PointReport {
    pub label: String,
    pub params: BTreeMap<String, Value>,
    /// The workload its trials ran, as stored (`http`, `exec:fio`): its key figures are
    /// `crate::workload::figures::of(workload)`.
    pub workload: String,
    /// The headline throughput of this point: the first declared throughput its trials produced
    /// (`write_iops` at a write point of a fio plan); None when the workload has none.
    pub headline: Option<String>,
    pub trials: usize,
    pub failed: usize,
    pub stop_reason: Option<String>,
    /// Every metric that is not a percentile, over the ok repetitions.
    pub metrics: Vec<MetricRow>,
    /// Percentiles of the merged histograms.
    pub latency: Vec<PercentileRow>,
    /// Percentiles the tool printed, for distributions with no stored histogram.
    pub printed_percentiles: Vec<PrintedPercentile>,
    /// Per-trial percentile metrics left out because the merged histogram they were read from gives
    /// them (`latency_p99_ms` beside the histogram `latency`): one p99 per point.
    pub merged_instead: Vec<String>,
    pub system: Vec<PhaseRow>,
    /// Disk and network rows left out of `system` because they carried nothing at this point.
    pub idle_devices: Vec<String>,
    pub errors: Vec<(String, u64)>,
}

/// One row of the scaling table: the analysis row of a variant at one value of the swept
/// parameter, with the point's merged p99.
#[derive(Clone, Debug, Serialize)]
pub struct ScalingRow {
    pub variant: String,
    /// x, n, throughput, ci95, latency (the merged p50 in ms), speedup, efficiency.
    #[serde(flatten)]
    pub row: scaling::ScalingRow,
    /// p99 of the point's merged `latency` histogram, ms; None when the count does not support it.
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
    /// Per variant whose every point is round-trip bound (rule D1): why its throughput is flat
    /// along the parameter (the load's concurrency / the round trip, not the server).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub why_flat: Vec<(String, String)>,
}

/// One metric compared between two values of a variant parameter, at fixed other parameters: what
/// was compared, and the analysis' comparison of b against a.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub parameter: String,
    pub a: String,
    pub b: String,
    /// The other parameters held fixed, e.g. "concurrency=10".
    pub at: String,
    pub metric: String,
    pub unit: String,
    /// Is the metric a quantile (`latency_p99_ms`)? Then its per-trial figures are tested.
    pub quantile: Option<f64>,
    /// The quantile of a histogram the points merged: `mean_a`/`mean_b` are the two points' own
    /// percentiles (every repetition pooled) and Δ % is between them; the CI, test and verdict are
    /// the per-trial figures'.
    pub merged: bool,
    /// n, means, Δ % with its 95 % CI, the test, p and the verdict.
    #[serde(flatten)]
    pub result: compare::Comparison,
}

/// A threshold's verdict at one point, as the run judged it.
#[derive(Clone, Debug, Serialize)]
pub struct ThresholdRow {
    pub expr: String,
    /// The point's label.
    pub point: String,
    pub observed: Option<f64>,
    pub passed: bool,
    /// What `observed` is ("median of 3 trials' p99"), when the store kept it.
    pub basis: Option<String>,
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
    /// The plan's thresholds, judged per point.
    pub thresholds: Vec<ThresholdRow>,
    pub failed: Vec<FailedTrial>,
    pub notes: Vec<String>,
    /// The plan's `[report]` section.
    pub spec: ReportSpec,
    /// The summary the report opens with.
    pub overview: Overview,
    /// The time series of the trials that get a chart (the median repetition of each point);
    /// `charts::render` takes them out of the model as it draws them.
    #[serde(skip)]
    pub charted: Vec<TrialSeries>,
    /// Each point's per-second load, every repetition (the HTML report's per-second panels; not
    /// in the JSON).
    #[serde(skip)]
    pub seconds: Vec<PointSeconds>,
    /// The latency probes, idle vs under load, per point and probe (absent without probes).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<super::probes::ProbeReport>,
    /// A report of runs of different plans: each plan's own model (this one then holds only the
    /// runs, failures and notes of all).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub experiments: Vec<ReportModel>,
    /// Every host's facts, tables and charts (absent without remote hosts; `report/hosts.rs`).
    #[serde(skip_serializing_if = "super::hosts::Hosts::is_empty")]
    pub hosts: super::hosts::Hosts,
    /// The profiles of each point's median repetition and the differentials between variants
    /// (absent without `[profile]`; `report/profiles.rs`).
    #[serde(skip_serializing_if = "super::profiles::Profiles::is_empty")]
    pub profiles: super::profiles::Profiles,
}

/// The monitor samples of one trial, kept for its time-series chart (not in the JSON).
#[derive(Clone, Debug)]
pub struct TrialSeries {
    pub name: String,
    pub phases: Vec<crate::model::PhaseSpan>,
    /// metric → (t_s, value)
    pub series: BTreeMap<String, Vec<(f64, f64)>>,
}

/// One point's per-second load for the HTML report's per-second panel, as the live page's chart
/// functions take it (`assets/charts/charts.js`): its repetitions' stored per-second series, on
/// one axis of seconds since each trial's load phase began, with the first one's phases.
#[derive(Clone, Debug, Serialize)]
pub struct PointSeconds {
    pub label: String,
    /// The throughput series drawn on the left axis (`requests_per_s`).
    pub unit: String,
    /// `[name, start, end]`, seconds since the load phase began (baseline and warmup before 0).
    pub phases: Vec<(String, f64, f64)>,
    pub trials: Vec<TrialSeconds>,
    /// This machine over the first repetition (its monitor samples, on the same axis), as the
    /// live page's machine panel draws it; None when the trial has no samples.
    pub host: Option<HostSeconds>,
}

/// A trial's monitor samples that the machine panel draws: CPU busy (% of all CPUs), perflab's
/// and the target's CPU (% of one core), memory used (MiB); null where a sample lacks one.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostSeconds {
    pub t: Vec<f64>,
    pub cpu: Vec<Option<f64>>,
    pub loadgen: Vec<Option<f64>>,
    pub target: Vec<Option<f64>>,
    pub mem: Vec<Option<f64>>,
}

/// One trial's seconds: `t` and, at each, the throughput and the p50 and p99 (ms) where the
/// workload stores them (null in a second without one; the whole series absent without any).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrialSeconds {
    /// `#2` (the repetition), `run 1 #2` when several runs are pooled.
    pub name: String,
    pub t: Vec<f64>,
    pub per_s: Vec<Option<f64>>,
    pub p50: Option<Vec<Option<f64>>>,
    pub p99: Option<Vec<Option<f64>>>,
}

/// The summary at the top of the report: what to trust, the answer, the optimization table and the
/// headline lines (knee, saturated resource, top findings).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Overview {
    /// The parameter whose values are the variants (`[report] compare`, or the one chosen).
    pub compare: Option<String>,
    /// The value of `compare` the others are compared against.
    pub baseline: Option<String>,
    /// The parameter on the x axis (`[report] x`, or the swept one).
    pub x: Option<String>,
    /// The other parameters that vary and are neither compared nor x: the answer table's
    /// dimension columns, in name order.
    pub dimensions: Vec<String>,
    /// Matrix parameters a `[variant.<value>]` sets: they follow the compared value, so points are
    /// paired without them.
    pub set_by_variant: Vec<String>,
    /// `by_x` (a row per figure, variant and dimensions, a column per x value) or `by_point` (a
    /// row per point, a column per figure).
    pub layout: String,
    /// The sentences the summary opens with, each linked to the table row it reads.
    pub observations: Vec<Observation>,
    /// Validity warnings: a busy host, a saturated load generator, CV > 10 %, too few repetitions,
    /// failed trials.
    pub warnings: Vec<String>,
    /// The primary figures of every point, each against the baseline variant's at the same point.
    pub answer: Vec<AnswerCell>,
    /// The error figures (their labels) left out of the answer as they are 0 at every point.
    pub zero_errors: Vec<String>,
    /// Before (baseline) / after (each other variant) of the primary figures at the largest x.
    pub optimization: Vec<AnswerCell>,
    /// One line each: the knee and what saturated there, and the top three findings.
    pub headline: Vec<String>,
    /// Every finding on one line, in the order of `findings`.
    pub finding_lines: Vec<String>,
}

/// One sentence of the summary: what the figures say, with the anchor of the row they are in.
#[derive(Clone, Debug, Serialize)]
pub struct Observation {
    /// `variant` (a compared value against the baseline), `x` (along the swept parameter),
    /// `threshold` (a threshold broken), `finding` (a top finding), `point` (a point's figures).
    pub kind: String,
    pub text: String,
    /// The anchor of the table row (or section) the sentence reads, without `#`.
    pub anchor: Option<String>,
}

/// One figure at one point, with its comparison against the baseline variant there.
#[derive(Clone, Debug, Serialize)]
pub struct AnswerCell {
    /// The metric shown: a key figure's metric (`write_iops`, `cpu_bogo_ops_per_s`), or a
    /// `[report] metrics` key as written (`p99`, `requests_per_s`).
    pub metric: String,
    /// What it is, as the table's column or row says it: "write IOPS", "p99 request time".
    pub label: String,
    /// The part of the metric's name a pattern's `*` stood for (a stressor, an error class).
    pub part: Option<String>,
    /// The figure as its row (`by_x`) or column (`by_point`) names it: the part and the label
    /// ("vm bogo-ops/s"), or the label alone where the part changes along x (a stressor swept).
    pub figure: String,
    /// Whether it is the point's headline throughput.
    pub headline: bool,
    /// The value as shown when it is not a plain number ("18/18" tests passed).
    pub text: Option<String>,
    /// The anchor of the answer table's row this cell is in.
    pub row: String,
    /// The label of the point it is a figure of.
    pub point: String,
    /// The values of `Overview::dimensions` at this point.
    pub dims: Vec<String>,
    pub unit: String,
    /// The value of `compare` ("all" without one).
    pub variant: String,
    /// The other varying parameters ("size=37"; "" when none).
    pub at: String,
    /// The x value (as written in a label), if there is an x parameter.
    pub x: Option<String>,
    /// Mean over the repetitions (a percentile: of the merged histogram, or the median of the
    /// per-trial values a tool printed).
    pub value: f64,
    /// Standard deviation over the repetitions (None for a percentile).
    pub sd: Option<f64>,
    /// Half-width of the mean's 95 % CI over the repetitions (None for a percentile): the
    /// summary rounds `value` to what it supports; the charts' error bars.
    pub ci95: Option<f64>,
    /// The baseline variant's value at the same point (None for the baseline itself).
    pub before: Option<f64>,
    /// 100 · (value − before) / before.
    pub delta_pct: Option<f64>,
    /// 95 % CI of Δ % from the per-trial figures (Welch).
    pub ci95_pct: Option<(f64, f64)>,
    /// The verdict of the per-trial figures' test (None for the baseline, or with no per-trial figure).
    pub verdict: Option<Verdict>,
    /// What the cell's figure cannot be read without: "load generator too weak" on the headline
    /// throughput of a point where rule D2 fired (it measured the load generator).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flag: Option<String>,
    /// `text` already says each part's Δ % (the cost cell): the summary adds only the verdict.
    #[serde(skip)]
    pub text_compares: bool,
    /// The repetitions behind `value`: the charts draw its CI only where the tables show one
    /// (`fmt::ci_shown`: from 3 values, and no wider than the value).
    #[serde(skip)]
    pub n: usize,
}
