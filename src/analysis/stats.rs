//! Summary statistics of repeated measurements.

/// Student's t quantile t(0.975, df): exact table for small df, the Cornish-Fisher expansion beyond.
pub fn t975(df: f64) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    if df >= 1.0 && df <= 30.0 && df.fract() == 0.0 {
        return TABLE[df as usize - 1];
    }
    let z = 1.959_963_984_540_054_f64;
    let g1 = (z.powi(3) + z) / 4.0;
    let g2 = (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / 96.0;
    let g3 = (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / 384.0;
    z + g1 / df + g2 / df.powi(2) + g3 / df.powi(3)
}

/// The 95 % confidence interval half-width of the mean, as a percentage of the mean
/// (None for fewer than 2 values or a zero mean).
pub fn ci_half_width_pct(values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if mean == 0.0 {
        return None;
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let hw = t975((n - 1) as f64) * (var / n as f64).sqrt();
    Some(100.0 * hw / mean.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_width_known_answer() {
        // 10, 12, 14: mean 12, sd 2, se 2/sqrt(3), t(0.975, 2) = 4.303 → hw = 4.968 → 41.4 % of 12.
        let hw = ci_half_width_pct(&[10.0, 12.0, 14.0]).expect("defined");
        assert!((hw - 41.40).abs() < 0.05, "{hw}");
        assert!(ci_half_width_pct(&[5.0]).is_none());
        assert!((t975(40.0) - 2.021).abs() < 0.002);
    }
}
