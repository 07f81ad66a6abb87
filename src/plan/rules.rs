//! `repetitions` and `thresholds`: how often each point runs and its pass/fail rules. Whether a
//! metric named here is one the workload can produce is checked when the workloads are built
//! (`runner::from_plan`), since only the built workload knows its metrics.

use super::source::Source;
use super::values;
use super::{Op, Repetitions, Threshold};
use toml::{Spanned, Value};

/// The most threshold rules a plan may have.
pub const MAX_THRESHOLDS: usize = 1000;

/// The most repetitions of one point.
pub const MAX_REPETITIONS: i64 = 10_000;

pub(super) fn repetitions(r: Option<&Spanned<Value>>, src: &Source) -> anyhow::Result<Repetitions> {
    let Some(r) = r else {
        return Ok(Repetitions::Fixed(1));
    };
    let bad = |m: &str| src.error(&r.span(), format!("repetitions: {m}"));
    match r.get_ref() {
        Value::Integer(n) if (1..=MAX_REPETITIONS).contains(n) => Ok(Repetitions::Fixed(*n as u32)),
        Value::Integer(n) => Err(bad(&format!("{n} is not a count between 1 and {MAX_REPETITIONS}"))),
        Value::Table(t) => {
            if let Some(k) = t.keys().find(|k| !["min", "max", "ci_pct", "metric"].contains(&k.as_str())) {
                let hint = crate::util::suggest::nearest(k, &["min", "max", "ci_pct", "metric"])
                    .map(|c| format!("did you mean `{c}`?"))
                    .unwrap_or_else(|| "use min, max, ci_pct, metric".into());
                return Err(bad(&format!("unknown key `{k}` ({hint})")));
            }
            let int = |k: &str, d: i64| t.get(k).map(|v| v.as_integer()).unwrap_or(Some(d));
            let (Some(min), Some(max)) = (int("min", 3), int("max", 10)) else {
                return Err(bad("min and max are whole numbers"));
            };
            if min < 2 || max < min || max > MAX_REPETITIONS {
                return Err(bad(&format!(
                    "adaptive repetitions need 2 <= min <= max <= {MAX_REPETITIONS}, found min = {min}, max = {max}"
                )));
            }
            let ci_pct = match t.get("ci_pct") {
                None => 5.0,
                Some(v) => match values::number(v) {
                    Some(c) if c > 0.0 && c.is_finite() => c,
                    _ => return Err(bad(&format!("ci_pct is a positive percentage, found {}", values::describe(v)))),
                },
            };
            let metric = match t.get("metric") {
                None => None,
                Some(Value::String(m)) if metric_name_ok(m) => Some(m.clone()),
                Some(other) => {
                    return Err(bad(&format!(
                        "metric is a metric's name such as \"requests_per_s\", found {}",
                        values::describe(other)
                    )))
                }
            };
            Ok(Repetitions::Adaptive {
                min: min as u32,
                max: max as u32,
                ci_pct,
                metric,
            })
        }
        other => Err(bad(&format!(
            "expected a count or {{ min, max, ci_pct, metric }}, found {}",
            values::describe(other)
        ))),
    }
}

pub(super) fn threshold(t: &Spanned<Value>, src: &Source) -> anyhow::Result<Threshold> {
    let bad = |m: String| src.error(&t.span(), m);
    match t.get_ref() {
        Value::String(s) => parse_threshold(s).map_err(|why| bad(format!("threshold \"{}\": {why}", crate::util::text::clip(s)))),
        Value::Table(tab) => {
            if let Some(k) = tab.keys().find(|k| !["metric", "op", "value"].contains(&k.as_str())) {
                return Err(bad(format!("unknown key `{k}` in a threshold (use metric, op and value)")));
            }
            let metric = tab.get("metric").and_then(Value::as_str).filter(|m| metric_name_ok(m));
            let op = tab.get("op").and_then(Value::as_str).and_then(Op::parse);
            let value = tab.get("value").and_then(values::number);
            match (metric, op, value) {
                (Some(_), Some(_), Some(v)) if !v.is_finite() => Err(bad(format!("a threshold's value is a finite number, found {v}"))),
                (Some(m), Some(op), Some(v)) => Ok(Threshold {
                    expr: format!("{m} {} {v}", op.as_str()),
                    metric: m.to_string(),
                    op,
                    value: v,
                }),
                _ => Err(bad(
                    "a threshold needs metric (a name), op (<, <=, > or >=) and value (a number)".into()
                )),
            }
        }
        other => Err(bad(format!(
            "a threshold is a string such as \"error_rate_pct < 1\", found {}",
            values::describe(other)
        ))),
    }
}

/// A metric's name: letters, digits, `_` and `.`.
fn metric_name_ok(m: &str) -> bool {
    !m.is_empty() && m.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// `latency_p99_ms < 50` → a threshold; the error says what is wrong with the text.
pub fn parse_threshold(s: &str) -> Result<Threshold, String> {
    const SHAPE: &str = "write it as `metric op value`, e.g. \"latency_p99_ms < 50\"";
    let ops = [Op::Le, Op::Ge, Op::Lt, Op::Gt];
    let Some((i, op)) = ops
        .iter()
        .filter_map(|op| s.find(op.as_str()).map(|i| (i, *op)))
        .min_by_key(|(i, op)| (*i, usize::MAX - op.as_str().len()))
    else {
        return Err(format!("no comparison (<, <=, > or >=): {SHAPE}"));
    };
    let metric = s[..i].trim();
    if !metric_name_ok(metric) {
        return Err(SHAPE.into());
    }
    let text = s[i + op.as_str().len()..].trim();
    let value: f64 = text.parse().map_err(|_| SHAPE.to_string())?;
    if !value.is_finite() {
        return Err(format!("the limit is a finite number, found {}", crate::util::text::clip(text)));
    }
    Ok(Threshold {
        expr: s.trim().to_string(),
        metric: metric.to_string(),
        op,
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::{parse_threshold, Op};

    #[test]
    fn thresholds_parse_from_text() {
        let t = parse_threshold("latency_p99_ms <= 50").expect("parses");
        assert_eq!((t.metric.as_str(), t.op, t.value), ("latency_p99_ms", Op::Le, 50.0));
        assert_eq!(parse_threshold("x>=1").map(|t| t.op), Ok(Op::Ge));
        assert_eq!(parse_threshold("x > 1").map(|t| t.op), Ok(Op::Gt));
        assert!(Op::Le.holds(50.0, 50.0) && !Op::Lt.holds(50.0, 50.0));
        assert!(parse_threshold("p99 is small").is_err());
        assert!(parse_threshold("x < nan").unwrap_err().contains("finite"));
        assert!(parse_threshold("x < inf").is_err());
        assert!(parse_threshold("x < -inf").is_err());
    }
}
