//! Analysis: statistics, comparison, scaling and bottleneck rules.

pub mod stats;
