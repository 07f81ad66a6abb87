//! Number formatting every part of the report shares (a leaf module: it imports nothing of `report/`).

/// Stable number formatting: 4 significant digits (no exponent), at most 3 decimals.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    // Exactly none is "0" (no failed request, ab's "50% 0" ms): "0.000" is kept for a value that
    // rounds to it.
    if v == 0.0 {
        return "0".into();
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

/// The place (a power of ten) of the second significant digit of `x` (1234 → 2, 0.052 → -3);
/// None for 0 or a non-finite `x`.
fn second_digit(x: f64) -> Option<i32> {
    (x.is_finite() && x != 0.0).then(|| x.abs().log10().floor() as i32 - 1)
}

/// `v` rounded to the place 10^`place` (an integer without decimals from place 0 up), never finer
/// than [`num`].
fn at_place(v: f64, place: i32) -> String {
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

/// A mean rounded to what its 95 % CI (half-width `ci`) supports: to the place of the CI's second
/// significant digit (15449 ± 3700 → 15400; 0.353 ± 0.052 → 0.353), but always with at least 2
/// significant digits of its own (1.23 ± 30 → 1.2, not 1) and never finer than [`num`]; [`num`]
/// without a CI.
pub fn num_ci(v: f64, ci: Option<f64>) -> String {
    let Some(place) = ci.filter(|h| h.is_finite() && *h > 0.0).and_then(second_digit) else {
        return num(v);
    };
    if !v.is_finite() {
        return num(v);
    }
    at_place(v, second_digit(v).map_or(place, |own| own.min(place)))
}

/// A spread (a CI's half-width, a standard deviation) to 2 significant digits (15106 → 15000,
/// 0.0523 → 0.052), never finer than [`num`].
pub fn sig2(v: f64) -> String {
    match second_digit(v) {
        Some(place) => at_place(v, place),
        None => num(v),
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

/// Why a 95 % CI is not shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoCi {
    /// Fewer than [`MIN_CI_N`] values: too few to estimate a CI.
    FewValues,
    /// The interval is wider than the value it is of: it says nothing.
    Wide,
}

/// Values a CI needs before it is shown.
pub const MIN_CI_N: usize = 3;

/// The half-width of the 95 % CI of `value` (from `n` values) if it is worth showing: n ≥ 3 and the
/// interval no wider than the value itself (2 · half ≤ |value|).
pub fn ci_shown(value: f64, half: Option<f64>, n: usize) -> Result<f64, NoCi> {
    match half.filter(|h| h.is_finite()) {
        _ if n < MIN_CI_N => Err(NoCi::FewValues),
        None => Err(NoCi::FewValues),
        Some(h) if 2.0 * h > value.abs() => Err(NoCi::Wide),
        Some(h) => Ok(h),
    }
}

/// The 95 % CI of a Δ % ((low, high), in % of the value compared against) if it is worth showing:
/// n ≥ 3 on the side with fewer values, and the interval no wider than the value compared against
/// (100 percentage points).
pub fn delta_ci_shown(ci: Option<(f64, f64)>, n: usize) -> Result<(f64, f64), NoCi> {
    match ci.filter(|(a, b)| a.is_finite() && b.is_finite()) {
        _ if n < MIN_CI_N => Err(NoCi::FewValues),
        None => Err(NoCi::FewValues),
        Some((a, b)) if (b - a).abs() > 100.0 => Err(NoCi::Wide),
        Some(ci) => Ok(ci),
    }
}

/// A Δ % rounded to what its CI supports ("+5.3 %"); with no CI, to one decimal.
pub fn delta_pct(d: f64, ci: Option<(f64, f64)>) -> String {
    match ci.map(|(a, b)| (b - a).abs() / 2.0).filter(|h| h.is_finite() && *h > 0.0) {
        Some(h) => format!("{} %", pct_ci(d, Some(h))),
        None if d.is_finite() => format!("{d:+.1} %"),
        None => num(d),
    }
}

/// The CI cells of one table, and why some are empty: each cell is "± h" (2 significant digits) or
/// "[low %, high %]", or "–" with its reason kept for [`CiCells::note`], said once under the table.
#[derive(Debug, Default)]
pub struct CiCells {
    few: bool,
    wide: bool,
}

impl CiCells {
    pub fn new() -> CiCells {
        CiCells::default()
    }

    fn dash(&mut self, why: NoCi) -> String {
        match why {
            NoCi::FewValues => self.few = true,
            NoCi::Wide => self.wide = true,
        }
        "–".into()
    }

    /// "± 3700" for the CI of a mean of `n` values, or "–".
    pub fn mean(&mut self, value: f64, half: Option<f64>, n: usize) -> String {
        match ci_shown(value, half, n) {
            Ok(h) => format!("± {}", sig2(h)),
            Err(why) => self.dash(why),
        }
    }

    /// "[+1.2 %, +9.8 %]" for the CI of a Δ % with `n` values on its smaller side, or "–".
    pub fn delta(&mut self, ci: Option<(f64, f64)>, n: usize) -> String {
        match delta_ci_shown(ci, n) {
            Ok((a, b)) => {
                let half = Some((b - a).abs() / 2.0);
                format!("[{} %, {} %]", pct_ci(a, half), pct_ci(b, half))
            }
            Err(why) => self.dash(why),
        }
    }

    /// Why some CI cells are "–", in one sentence; None when none is.
    pub fn note(&self) -> Option<String> {
        let why = match (self.few, self.wide) {
            (false, false) => return None,
            (true, false) => "fewer than 3 values, too few to estimate one",
            (false, true) => "the interval is wider than the value itself, so it would say nothing",
            (true, true) => {
                "fewer than 3 values (too few to estimate one), or an interval wider than the value itself (it \
                 would say nothing)"
            }
        };
        Some(format!("No 95 % CI is shown (–) where {why}."))
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
        assert_eq!(pct_ci(0.004, Some(0.5)), "+0.004");
        assert_eq!(pct_ci(4.12345, None), "+4.12");
        assert_eq!(pct_ci(0.0, Some(1.0)), "0");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(0.0004), "0.000");
    }

    #[test]
    fn a_figure_keeps_two_significant_digits_whatever_its_ci() {
        // A latency sd of 1.23 ms whose CI over 3 repetitions is ± 30 ms is 1.2, not 1.
        assert_eq!(num_ci(1.23, Some(30.0)), "1.2");
        assert_eq!(num_ci(16913.0, Some(15106.0)), "17000");
        assert_eq!(num_ci(0.8, Some(3.0)), "0.80");
        assert_eq!(num_ci(-1.23, Some(30.0)), "-1.2");
        assert_eq!(sig2(15106.0), "15000");
        assert_eq!(sig2(0.0523), "0.052");
        assert_eq!(sig2(1.0), "1.0");
    }

    #[test]
    fn a_ci_is_shown_only_from_3_values_and_when_narrower_than_its_value() {
        assert_eq!(ci_shown(100.0, Some(10.0), 3), Ok(10.0));
        assert_eq!(ci_shown(100.0, Some(10.0), 2), Err(NoCi::FewValues));
        assert_eq!(ci_shown(100.0, None, 1), Err(NoCi::FewValues));
        assert_eq!(ci_shown(16913.0, Some(15106.0), 3), Err(NoCi::Wide));
        assert_eq!(ci_shown(0.0, Some(0.0), 5), Ok(0.0), "a figure 0 in every repetition: ± 0");
        assert_eq!(delta_ci_shown(Some((-2570.6, 2897.5)), 5), Err(NoCi::Wide));
        assert_eq!(delta_ci_shown(Some((-3.0, 5.0)), 5), Ok((-3.0, 5.0)));
        assert_eq!(delta_ci_shown(Some((-3.0, 5.0)), 2), Err(NoCi::FewValues));
        let mut cells = CiCells::new();
        assert_eq!(cells.mean(15449.0, Some(3712.0), 3), "± 3700");
        assert_eq!(cells.note(), None);
        assert_eq!(cells.delta(Some((-2570.6, 2897.5)), 5), "–");
        assert_eq!(cells.delta(Some((1.234, 9.87)), 5), "[+1.2 %, +9.9 %]");
        assert!(cells.note().unwrap().contains("wider than the value"));
        assert!(!cells.note().unwrap().contains("fewer than 3"));
        assert_eq!(cells.mean(10.0, Some(1.0), 2), "–");
        assert!(cells.note().unwrap().contains("fewer than 3 values"));
        assert_eq!(delta_pct(-9.1234, Some((-2723.9, 4307.9))), "-9.1 %");
        assert_eq!(delta_pct(2686.7, None), "+2686.7 %");
    }
}
