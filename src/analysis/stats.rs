//! Summaries of repeated measurements: mean, median, sample sd, the 95 % confidence interval of
//! the mean (Student t) and the coefficient of variation, with `noisy` / `small` flags.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// CV above this (percent) marks a summary `noisy`.
pub const NOISY_CV_PCT: f64 = 10.0;
/// Fewer values than this mark a summary `small`.
pub const SMALL_N: usize = 3;

/// A summary of repeated measurements (non-finite values are ignored).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (n - 1); 0 when n = 1.
    pub sd: f64,
    pub min: f64,
    pub max: f64,
    /// Half-width of the 95 % confidence interval of the mean (Student t, n - 1 df); None when n < 2.
    pub ci95: Option<f64>,
    /// Coefficient of variation in percent (sd / |mean|); None when the mean is 0 or n < 2.
    pub cv_pct: Option<f64>,
    /// CV > 10 %.
    pub noisy: bool,
    /// n < 3.
    pub small: bool,
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (two-sided 95 %); NaN if df <= 0.
pub fn t975(df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df).map(|t| t.inverse_cdf(0.975)).unwrap_or(f64::NAN)
}

/// The arithmetic mean, None when empty.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The sample standard deviation (n - 1), None when n < 2.
pub fn sample_sd(values: &[f64]) -> Option<f64> {
    let n = values.len();
    let m = mean(values)?;
    (n > 1).then(|| (values.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt())
}

/// The q-quantile (0..=1) of already sorted values, linear interpolation between closest ranks.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64))
}

impl Summary {
    /// The summary of `values` (non-finite ones dropped); None when no finite value is left.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(|a, b| a.total_cmp(b));
        let n = v.len();
        let mean = v.iter().sum::<f64>() / n as f64;
        let median = quantile_sorted(&v, 0.5).unwrap_or(mean);
        let sd = sample_sd(&v).unwrap_or(0.0);
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
            noisy: cv_pct.is_some_and(|c| c > NOISY_CV_PCT),
            small: n < SMALL_N,
        })
    }

    /// The 95 % CI of the mean as (low, high); None when n < 2.
    pub fn ci95_bounds(&self) -> Option<(f64, f64)> {
        self.ci95.map(|h| (self.mean - h, self.mean + h))
    }

    /// The CI half-width as a percentage of |mean|; None when n < 2 or the mean is 0.
    pub fn ci95_pct(&self) -> Option<f64> {
        let h = self.ci95?;
        (self.mean != 0.0).then(|| 100.0 * h / self.mean.abs())
    }
}

/// The 95 % CI half-width of the mean as a percentage of |mean|, for adaptive repetitions:
/// None with fewer than 2 finite values or a zero mean.
pub fn ci_half_width_pct(values: &[f64]) -> Option<f64> {
    Summary::of(values)?.ci95_pct()
}
