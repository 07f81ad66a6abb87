//! The small statistics the report needs until `crate::analysis` lands: summaries with a Student-t
//! 95 % CI, percentiles from merged histograms with the "too few values" rule, and Welch's t-test.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// A summary of repeated measurements.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (n - 1); 0 when n = 1.
    pub sd: f64,
    pub min: f64,
    pub max: f64,
    /// Half-width of the 95 % confidence interval of the mean (Student t); None when n < 2.
    pub ci95: Option<f64>,
    /// Coefficient of variation in percent; None when the mean is 0 or n < 2.
    pub cv_pct: Option<f64>,
    /// CV > 10 %.
    pub noisy: bool,
    /// n < 3.
    pub small: bool,
}

/// The two-sided 97.5 % quantile of Student's t with `df` degrees of freedom.
pub fn t975(df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df)
        .map(|t| t.inverse_cdf(0.975))
        .unwrap_or(f64::NAN)
}

impl Summary {
    pub fn of(values: &[f64]) -> Option<Summary> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(|a, b| a.total_cmp(b));
        let n = v.len();
        let mean = v.iter().sum::<f64>() / n as f64;
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        let sd = if n > 1 {
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let ci95 = (n > 1).then(|| t975((n - 1) as f64) * sd / (n as f64).sqrt());
        let cv_pct = (n > 1 && mean != 0.0).then(|| 100.0 * sd / mean.abs());
        Some(Summary {
            n,
            mean,
            median,
            sd,
            min: v[0],
            max: v[n - 1],
            ci95,
            cv_pct,
            noisy: cv_pct.is_some_and(|c| c > 10.0),
            small: n < 3,
        })
    }
}

/// The percentiles the report shows and the number of values each one needs to be supported:
/// a percentile q needs at least 1 / (1 - q) values (p90: 10, p99: 100, p99.9: 1000).
pub const PERCENTILES: [(&str, f64, u64); 4] = [
    ("p50", 0.50, 2),
    ("p90", 0.90, 10),
    ("p99", 0.99, 100),
    ("p99.9", 0.999, 1000),
];

/// Welch's two-sample t-test: (t, df, two-sided p).
pub fn welch(a: &Summary, b: &Summary) -> Option<(f64, f64, f64)> {
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let va = a.sd * a.sd / a.n as f64;
    let vb = b.sd * b.sd / b.n as f64;
    let se2 = va + vb;
    if se2 <= 0.0 {
        // Both samples constant: different means are certainly different, equal ones are not.
        let p = if a.mean == b.mean { 1.0 } else { 0.0 };
        return Some((0.0, (a.n + b.n - 2) as f64, p));
    }
    let t = (b.mean - a.mean) / se2.sqrt();
    let df = se2 * se2
        / (va * va / (a.n as f64 - 1.0) + vb * vb / (b.n as f64 - 1.0)).max(f64::MIN_POSITIVE);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = 2.0 * (1.0 - dist.cdf(t.abs()));
    Some((t, df, p.clamp(0.0, 1.0)))
}

/// The 95 % CI of the difference of means b - a (Welch), as (low, high).
pub fn welch_ci(a: &Summary, b: &Summary, df: f64) -> (f64, f64) {
    let se = (a.sd * a.sd / a.n as f64 + b.sd * b.sd / b.n as f64).sqrt();
    let h = t975(df.max(1.0)) * se;
    let d = b.mean - a.mean;
    (d - h, d + h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_known_answer() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample sd = sqrt(32/7) = 2.138; t(0.975, 7) = 2.3646.
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.mean, 5.0);
        assert!((s.sd - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        let ci = s.ci95.unwrap();
        assert!((ci - 2.3646 * s.sd / 8f64.sqrt()).abs() < 1e-3);
    }
}
