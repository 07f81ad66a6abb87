//! Analysis: statistics, comparison, scaling and bottleneck rules.
//!
//! Pure computation over plain in-memory data; every output struct is serde-serializable so a
//! renderer can print it as a table or as JSON. Everything is deterministic: the same input gives
//! the same output (no randomness is used).
//!
//! - [`stats`]: [`stats::Summary`] (mean, median, sd, Student-t 95 % CI, CV) and
//!   [`stats::ci_half_width_pct`] for adaptive repetitions.
//! - [`percentiles`]: p50/p90/p99/p99.9/max from merged HDR histograms, leaving out what the
//!   sample cannot support.
//! - [`hypothesis`]: Welch's t, Mann–Whitney U, Shapiro–Wilk.
//! - [`compare`]: Δ % with a 95 % CI, the test, p and a direction-aware verdict.
//! - [`scaling`]: speedup, efficiency and the knee along a swept parameter.
//! - [`phases`]: Baseline / Under load / Peak / Recovery and recovery time per metric.
//! - [`bottleneck`]: the USE-method rules (declared once as data), errors along the sweep and
//!   latency probes, with evidence, ranked by whom they blame.
//! - [`table`]: monitor samples by column ([`table::SampleTable`]), as the rules read them.
//! - [`cost`]: the target's CPU, context switches and memory per operation of the workload.

pub mod bottleneck;
pub mod compare;
pub mod cost;
pub mod hypothesis;
pub mod percentiles;
pub mod phases;
pub mod scaling;
pub mod stats;
pub mod table;
