//! Comparing two samples (a = baseline, b = candidate) of one metric, benchstat-like.
//!
//! - Δ % = 100 · (mean b − mean a) / |mean a|, with a 95 % CI: the Welch CI of the difference of
//!   means (t(0.975, Welch df) · se) divided by |mean a|. The CI ignores the uncertainty of mean a
//!   in the denominator, which is small next to the numerator's when CV is small.
//! - The test: Welch's t by default; Mann–Whitney U when both samples have ≥ 5 values and
//!   Shapiro–Wilk rejects normality (p < 0.05) for either of them.
//! - The verdict at alpha = 0.05, direction-aware: for a higher-is-better metric a significant
//!   increase is `Improved`, for a lower-is-better one it is `Regressed`; `Better::Neither` gives
//!   `Changed`. Fewer than `MIN_SAMPLES` values on a side give `TooFewSamples { need }`.

use super::hypothesis::{mann_whitney, shapiro_wilk, welch};
use super::stats::mean;
use crate::model::Better;
use serde::{Deserialize, Serialize};

/// Significance level.
pub const ALPHA: f64 = 0.05;
/// Values a side needs before any verdict.
pub const MIN_SAMPLES: usize = 3;
/// Values each side needs before Mann–Whitney U is considered.
pub const MIN_SAMPLES_RANK_TEST: usize = 5;

/// The test that decided the p-value.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    WelchT,
    MannWhitneyU,
}

impl Test {
    pub fn name(self) -> &'static str {
        match self {
            Test::WelchT => "Welch's t",
            Test::MannWhitneyU => "Mann-Whitney U",
        }
    }
}

/// What the comparison says, plainly.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    Improved,
    Regressed,
    NoSignificantDifference,
    /// Significant, but the metric has no better direction.
    Changed,
    TooFewSamples {
        need: usize,
    },
}

impl Verdict {
    pub fn text(&self) -> String {
        match self {
            Verdict::Improved => "improved".into(),
            Verdict::Regressed => "regressed".into(),
            Verdict::NoSignificantDifference => "no significant difference".into(),
            Verdict::Changed => "changed (no better direction)".into(),
            Verdict::TooFewSamples { need } => format!("too few samples (need ≥ {need})"),
        }
    }
}

/// The comparison of b against a.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Comparison {
    pub n_a: usize,
    pub n_b: usize,
    pub mean_a: f64,
    pub mean_b: f64,
    /// 100 · (mean b − mean a) / |mean a|; None when mean a is 0.
    pub delta_pct: Option<f64>,
    /// 95 % CI of Δ % (Welch CI of the difference / |mean a|); None with < 2 values a side.
    pub ci95_low_pct: Option<f64>,
    pub ci95_high_pct: Option<f64>,
    pub test: Test,
    /// t (Welch) or U of a (Mann–Whitney).
    pub statistic: Option<f64>,
    /// Welch–Satterthwaite df (Welch only).
    pub df: Option<f64>,
    /// Two-sided p-value; None when too few samples.
    pub p: Option<f64>,
    /// Shapiro–Wilk rejected normality for a or b (only checked with ≥ 5 values each).
    pub normality_rejected: bool,
    pub verdict: Verdict,
}

/// Compare sample b against sample a for a metric whose better direction is `better`.
/// Non-finite values are dropped first.
pub fn compare(a: &[f64], b: &[f64], better: Better) -> Comparison {
    let a: Vec<f64> = a.iter().copied().filter(|v| v.is_finite()).collect();
    let b: Vec<f64> = b.iter().copied().filter(|v| v.is_finite()).collect();
    let mean_a = mean(&a).unwrap_or(f64::NAN);
    let mean_b = mean(&b).unwrap_or(f64::NAN);
    let delta_pct = (mean_a != 0.0 && mean_a.is_finite() && mean_b.is_finite()).then(|| 100.0 * (mean_b - mean_a) / mean_a.abs());
    let w = welch(&a, &b);
    let pct = |v: f64| (mean_a != 0.0).then(|| 100.0 * v / mean_a.abs());
    let mut c = Comparison {
        n_a: a.len(),
        n_b: b.len(),
        mean_a,
        mean_b,
        delta_pct,
        ci95_low_pct: w.as_ref().and_then(|w| pct(w.ci95_low)),
        ci95_high_pct: w.as_ref().and_then(|w| pct(w.ci95_high)),
        test: Test::WelchT,
        statistic: None,
        df: None,
        p: None,
        normality_rejected: false,
        verdict: Verdict::TooFewSamples { need: MIN_SAMPLES },
    };
    if a.len() < MIN_SAMPLES || b.len() < MIN_SAMPLES {
        return c;
    }
    let Some(w) = w else { return c };
    let rejects = |x: &[f64]| shapiro_wilk(x).is_some_and(|s| s.p < ALPHA);
    let rank_ok = a.len() >= MIN_SAMPLES_RANK_TEST && b.len() >= MIN_SAMPLES_RANK_TEST;
    c.normality_rejected = rank_ok && (rejects(&a) || rejects(&b));
    let p = match (c.normality_rejected, mann_whitney(&a, &b)) {
        (true, Some(mw)) => {
            c.test = Test::MannWhitneyU;
            c.statistic = Some(mw.u);
            mw.p
        }
        _ => {
            c.statistic = Some(w.t);
            c.df = Some(w.df);
            w.p
        }
    };
    c.p = Some(p);
    c.verdict = verdict(p, mean_b - mean_a, better);
    c
}

/// The verdict for a p-value and a difference (b − a) of a metric with direction `better`.
pub fn verdict(p: f64, diff: f64, better: Better) -> Verdict {
    if p >= ALPHA || diff == 0.0 {
        return Verdict::NoSignificantDifference;
    }
    let up = diff > 0.0;
    match better {
        Better::Higher if up => Verdict::Improved,
        Better::Higher => Verdict::Regressed,
        Better::Lower if up => Verdict::Regressed,
        Better::Lower => Verdict::Improved,
        Better::Neither => Verdict::Changed,
    }
}
