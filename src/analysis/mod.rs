//! Analysis: statistics, comparison, scaling and bottleneck rules.
