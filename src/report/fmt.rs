//! Number formatting every part of the report shares (a leaf module: it imports nothing of `report/`).

/// Stable number formatting: 4 significant digits (no exponent), at most 3 decimals.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let a = v.abs();
    let decimals = if a >= 1000.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 10.0 {
        2
    } else {
        3
    };
    let s = format!("{v:.decimals$}");
    if s == "-0" || s.starts_with("-0.") && s.trim_start_matches("-0.").chars().all(|c| c == '0') {
        s.trim_start_matches('-').to_string()
    } else {
        s
    }
}

/// A parameter value (concurrency, cpus): whole numbers without decimals, others as `num`.
pub fn param(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        num(v)
    }
}

/// A mean rounded to what its 95 % CI (half-width `ci`) supports: to the place of the CI's second
/// significant digit (15449 ± 3700 → 15400; 0.353 ± 0.052 → 0.353), never finer than [`num`];
/// [`num`] without a CI.
pub fn num_ci(v: f64, ci: Option<f64>) -> String {
    let Some(h) = ci.filter(|h| h.is_finite() && *h > 0.0) else {
        return num(v);
    };
    if !v.is_finite() {
        return num(v);
    }
    let place = h.log10().floor() as i32 - 1;
    if place >= 0 {
        let unit = 10f64.powi(place);
        return format!("{}", ((v / unit).round() * unit) as i64);
    }
    let decimals = (-place) as usize;
    let finest = num(v);
    let have = finest.split_once('.').map_or(0, |(_, d)| d.len());
    if decimals >= have {
        return finest;
    }
    let s = format!("{v:.decimals$}");
    if s.starts_with('-') && s.trim_start_matches(['-', '0', '.']).is_empty() {
        s.trim_start_matches('-').to_string()
    } else {
        s
    }
}

/// A signed percentage (`+5.3`, `-0.42`) rounded to what a CI of half-width `half` supports, as
/// [`num_ci`]; with no CI, to 2 decimals.
pub fn pct_ci(v: f64, half: Option<f64>) -> String {
    let s = match half.filter(|h| h.is_finite() && *h > 0.0) {
        Some(_) if v.is_finite() => num_ci(v, half),
        _ if v.is_finite() => format!("{v:.2}"),
        _ => return num(v),
    };
    if s.starts_with('-') || s.trim_start_matches(['0', '.']).is_empty() {
        s
    } else {
        format!("+{s}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mean_is_rounded_to_its_ci() {
        assert_eq!(num_ci(15449.0, Some(3700.0)), "15400");
        assert_eq!(num_ci(15449.0, None), "15449");
        assert_eq!(num_ci(0.3534, Some(0.052)), "0.353");
        assert_eq!(num_ci(12.346, Some(0.9)), "12.35");
        assert_eq!(num_ci(12.346, Some(3.0)), "12.3");
        assert_eq!(num_ci(12.346, Some(0.001)), "12.35");
        assert_eq!(num_ci(1234.0, Some(12.0)), "1234");
    }

    #[test]
    fn a_percentage_is_signed_and_rounded_to_its_ci() {
        assert_eq!(pct_ci(5.349, Some(2.8)), "+5.3");
        assert_eq!(pct_ci(-12.34, Some(30.0)), "-12");
        assert_eq!(pct_ci(0.004, Some(0.5)), "0.00");
        assert_eq!(pct_ci(4.12345, None), "+4.12");
        assert_eq!(pct_ci(0.0, Some(1.0)), "0.0");
    }
}
