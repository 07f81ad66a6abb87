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
