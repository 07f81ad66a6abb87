//! Raw plan → validated `Plan`. Every check names the place in the file (`file:line:col`).

use super::ports::check_ports;
use super::raw::{RawPhases, RawPlan};
use super::secrets::{self, Secrets};
use super::source::Source;
use super::target::resolve;
use super::values::{self, references, substitute, Params};
use super::{Matrix, Op, Order, Phases, Plan, Point, Repetitions, Threshold, VariantHooks, WorkloadSpec};
use crate::util::suggest::{backticked, did_you_mean};
use std::collections::BTreeMap;
use toml::{Spanned, Table, Value};

pub fn plan(src: Source) -> anyhow::Result<Plan> {
    let raw: RawPlan = toml::from_str(&src.text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        let msg = plain_words(&e.message().trim().replace('\n', " "));
        let text = match backticked(&msg) {
            Some(k) if msg.starts_with("unknown field") => {
                let section = src.section_at(span.start).map(|t| format!(" in [{t}]")).unwrap_or_default();
                format!("unknown key `{k}`{section}{}", did_you_mean(&msg))
            }
            _ => msg,
        };
        src.error(&span, text)
    })?;
    // The secrets are known before anything else is checked, so no message below can show one.
    let mut secrets = secrets::scan(&src)?;
    match checked(raw, src, &mut secrets) {
        Ok(mut plan) => {
            secrets.finish(&plan.source);
            plan.secrets = secrets;
            Ok(plan)
        }
        Err(e) => Err(secrets.scrub_error(e)),
    }
}

fn checked(mut raw: RawPlan, src: Source, secrets: &mut Secrets) -> anyhow::Result<Plan> {
    let name = raw.name.get_ref().trim().to_string();
    if name.is_empty() {
        return Err(src.error(&raw.name.span(), "the plan's `name` is empty"));
    }
    let workload = workload(&raw, &src)?;
    let matrix = matrix(raw.matrix.as_ref(), &src)?;
    check_references(&src, &matrix)?;
    let phases = phases(raw.phases.take().unwrap_or_default(), &src)?;
    let repetitions = repetitions(raw.repetitions.as_ref(), &src)?;
    let order = match &raw.order {
        None => Order::Interleaved,
        Some(o) => match o.get_ref().as_str() {
            "sequential" => Order::Sequential,
            "interleaved" => Order::Interleaved,
            "shuffled" => Order::Shuffled,
            other => {
                let hint = crate::util::suggest::nearest(other, &["sequential", "interleaved", "shuffled"])
                    .map(|c| format!(" (did you mean \"{c}\"?)"))
                    .unwrap_or_else(|| " (use sequential, interleaved or shuffled)".into());
                return Err(src.error(&o.span(), format!("unknown order \"{other}\"{hint}")));
            }
        },
    };
    let seed = match &raw.seed {
        Some(s) if *s.get_ref() < 0 => return Err(src.error(&s.span(), "the seed must be zero or positive")),
        Some(s) => *s.get_ref() as u64,
        None => 1,
    };
    let thresholds = raw
        .thresholds
        .iter()
        .map(|t| threshold(t, &src))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let variants = variants(&raw, &matrix, &src)?;
    secrets.add_hooks(&variants);
    let target_table = raw.target.as_ref().map(|t| t.get_ref().clone());
    let keep_target = target_table.as_ref().and_then(|t| t.get("restart")).and_then(Value::as_str) == Some("keep");
    let mut notes = unused_parameters(&src, &matrix, &variants);
    let points = points(
        &matrix,
        target_table.as_ref(),
        &workload.table,
        raw.skip_unsupported,
        &src,
        &mut notes,
        secrets,
    )?;
    if points.is_empty() {
        return Err(src.error(&raw.name.span(), "no matrix point is left to run (all excluded or skipped)"));
    }
    check_ports(&points, &src)?;
    Ok(Plan {
        name,
        description: raw.description,
        source: src,
        has_target: target_table.is_some(),
        keep_target,
        workload,
        matrix,
        points,
        phases,
        repetitions,
        order,
        seed,
        thresholds,
        variants,
        notes,
        secrets: Secrets::default(),
    })
}

fn workload(raw: &RawPlan, src: &Source) -> anyhow::Result<WorkloadSpec> {
    use crate::workload::registry;
    let kinds = registry::quoted_list(&registry::names());
    let Some(w) = &raw.workload else {
        return Err(src.error(&(0..0), format!("the plan has no [workload] (add one with type = {kinds})")));
    };
    let kind = match w.get_ref().get("type") {
        Some(Value::String(s)) if registry::by_name(s).is_some() => s.clone(),
        Some(Value::String(s)) => return Err(src.error(&src.key_span(&["workload", "type"]), registry::unknown_type(s))),
        Some(other) => {
            return Err(src.error(
                &src.key_span(&["workload", "type"]),
                format!("the workload type is a string ({kinds}), found {other}"),
            ))
        }
        None => return Err(src.error(&w.span(), format!("[workload] needs a `type` ({kinds})"))),
    };
    // `secrets` is the plan's (see `secrets`), not the workload's: the workload never sees it.
    let mut table = w.get_ref().clone();
    table.remove("secrets");
    Ok(WorkloadSpec { kind, table })
}

fn matrix(m: Option<&Spanned<Table>>, src: &Source) -> anyhow::Result<Matrix> {
    let mut out = Matrix::default();
    let Some(m) = m else { return Ok(out) };
    for (k, v) in m.get_ref() {
        let at = || src.key_span(&["matrix", k]);
        if k == "exclude" {
            let Value::Array(list) = v else {
                return Err(src.error(&at(), "matrix `exclude` is a list of tables such as [{ concurrency = 20 }]"));
            };
            for e in list {
                let Value::Table(t) = e else {
                    return Err(src.error(&at(), "matrix `exclude` is a list of tables such as [{ concurrency = 20 }]"));
                };
                out.exclude.push(t.clone());
            }
            continue;
        }
        if !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(src.error(&at(), format!("matrix parameter `{k}`: use letters, digits and _ only")));
        }
        let values = match v {
            Value::Array(a) if a.is_empty() => {
                return Err(src.error(&at(), format!("matrix `{k}` is an empty list: give at least one value")))
            }
            Value::Array(a) => a.clone(),
            Value::Table(_) => return Err(src.error(&at(), format!("matrix `{k}`: expected a list of values"))),
            single => vec![single.clone()],
        };
        for (i, v) in values.iter().enumerate() {
            if values[..i].iter().any(|w| values::display(w) == values::display(v)) {
                return Err(src.error(&at(), format!("matrix `{k}` lists {v} twice: each value makes one point")));
            }
        }
        out.params.push((k.clone(), values));
    }
    for e in &out.exclude {
        if let Some(k) = e.keys().find(|k| !out.params.iter().any(|(p, _)| p == *k)) {
            return Err(src.error(
                &src.key_span(&["matrix", "exclude"]),
                format!("matrix `exclude` names `{k}`, which is not a matrix parameter"),
            ));
        }
    }
    Ok(out)
}

/// A matrix parameter that nothing refers to gives points that differ only in their label: usually a
/// forgotten `${name}`. Noted (not an error: it can label an outside change, such as a BIOS setting).
fn unused_parameters(src: &Source, m: &Matrix, variants: &BTreeMap<String, VariantHooks>) -> Vec<String> {
    let mut used: Vec<String> = ["target", "workload", "variant"]
        .iter()
        .flat_map(|s| src.strings_under(&[s]))
        .flat_map(|(text, _)| references(&text))
        .collect();
    if !variants.is_empty() {
        used.push("variant".into());
    }
    m.params
        .iter()
        .filter(|(k, vals)| vals.len() > 1 && !used.contains(k))
        .map(|(k, _)| format!("matrix parameter `{k}` is not used as ${{{k}}} anywhere: its points differ only in name"))
        .collect()
}

fn check_references(src: &Source, m: &Matrix) -> anyhow::Result<()> {
    for section in ["target", "workload", "variant"] {
        for (s, span) in src.strings_under(&[section]) {
            for r in references(&s) {
                if !m.params.iter().any(|(k, _)| *k == r) {
                    let known: Vec<&str> = m.params.iter().map(|(k, _)| k.as_str()).collect();
                    let hint = match crate::util::suggest::nearest(&r, &known) {
                        Some(c) => format!(" (did you mean `${{{c}}}`?)"),
                        None if known.is_empty() => " (the plan has no [matrix])".into(),
                        None => format!(" (the matrix has: {})", known.join(", ")),
                    };
                    return Err(src.error(&span, format!("`${{{r}}}` is not a matrix parameter{hint}")));
                }
            }
        }
    }
    Ok(())
}

fn phases(p: RawPhases, src: &Source) -> anyhow::Result<Phases> {
    let mut out = Phases::default();
    let fields = [
        ("baseline", p.baseline, &mut out.baseline),
        ("warmup", p.warmup, &mut out.warmup),
        ("load", p.load, &mut out.load),
        ("recovery", p.recovery, &mut out.recovery),
        ("interval", p.interval, &mut out.interval),
    ];
    for (name, v, slot) in fields {
        if let Some(v) = v {
            *slot = values::duration(v.get_ref()).map_err(|m| src.error(&v.span(), format!("[phases] {name}: {m}")))?;
        }
    }
    if out.interval < std::time::Duration::from_millis(10) {
        return Err(src.error(&src.key_span(&["phases", "interval"]), "[phases] interval must be at least 10ms"));
    }
    if out.load.is_zero() {
        return Err(src.error(&src.key_span(&["phases", "load"]), "[phases] load must be longer than 0s"));
    }
    Ok(out)
}

fn repetitions(r: Option<&Spanned<Value>>, src: &Source) -> anyhow::Result<Repetitions> {
    let Some(r) = r else {
        return Ok(Repetitions::Fixed(1));
    };
    let bad = |m: &str| src.error(&r.span(), format!("repetitions: {m}"));
    match r.get_ref() {
        Value::Integer(n) if (1..=10_000).contains(n) => Ok(Repetitions::Fixed(*n as u32)),
        Value::Integer(n) => Err(bad(&format!("{n} is not a count between 1 and 10000"))),
        Value::Table(t) => {
            if let Some(k) = t.keys().find(|k| !["min", "max", "ci_pct", "metric"].contains(&k.as_str())) {
                return Err(bad(&format!("unknown key `{k}` (use min, max, ci_pct, metric)")));
            }
            let int = |k: &str, d: i64| t.get(k).map(|v| v.as_integer()).unwrap_or(Some(d));
            let (Some(min), Some(max)) = (int("min", 3), int("max", 10)) else {
                return Err(bad("min and max are whole numbers"));
            };
            if min < 2 || max < min || max > 10_000 {
                return Err(bad("adaptive repetitions need 2 <= min <= max"));
            }
            let ci_pct = t.get("ci_pct").map(values::number).unwrap_or(Some(5.0)).filter(|c| *c > 0.0);
            let Some(ci_pct) = ci_pct else {
                return Err(bad("ci_pct is a positive percentage"));
            };
            let metric = t.get("metric").and_then(Value::as_str).unwrap_or("requests_per_s").to_string();
            Ok(Repetitions::Adaptive {
                min: min as u32,
                max: max as u32,
                ci_pct,
                metric,
            })
        }
        other => Err(bad(&format!("expected a count or {{ min, max, ci_pct, metric }}, found {other}"))),
    }
}

fn threshold(t: &Spanned<Value>, src: &Source) -> anyhow::Result<Threshold> {
    let bad = |m: String| src.error(&t.span(), m);
    match t.get_ref() {
        Value::String(s) => parse_threshold(s).ok_or_else(|| {
            bad(format!(
                "threshold \"{s}\": write it as `metric op value`, e.g. \"latency_p99_ms < 50\""
            ))
        }),
        Value::Table(tab) => {
            let metric = tab.get("metric").and_then(Value::as_str);
            let op = tab.get("op").and_then(Value::as_str).and_then(Op::parse);
            let value = tab.get("value").and_then(values::number);
            match (metric, op, value) {
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
            "a threshold is a string such as \"error_rate_pct < 1\", found {other}"
        ))),
    }
}

/// `latency_p99_ms < 50` → a threshold.
pub fn parse_threshold(s: &str) -> Option<Threshold> {
    let ops = [Op::Le, Op::Ge, Op::Lt, Op::Gt];
    let (i, op) = ops
        .iter()
        .filter_map(|op| s.find(op.as_str()).map(|i| (i, *op)))
        .min_by_key(|(i, op)| (*i, usize::MAX - op.as_str().len()))?;
    let metric = s[..i].trim();
    let value: f64 = s[i + op.as_str().len()..].trim().parse().ok()?;
    if metric.is_empty() || !metric.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
        return None;
    }
    Some(Threshold {
        expr: s.trim().to_string(),
        metric: metric.to_string(),
        op,
        value,
    })
}

fn variants(raw: &RawPlan, m: &Matrix, src: &Source) -> anyhow::Result<BTreeMap<String, VariantHooks>> {
    let values: Vec<String> = m
        .params
        .iter()
        .find(|(k, _)| k == "variant")
        .map(|(_, v)| v.iter().map(values::display).collect())
        .unwrap_or_default();
    let mut out = BTreeMap::new();
    for (name, hooks) in &raw.variant {
        if !values.contains(name) {
            let msg = if values.is_empty() {
                format!("[variant.{name}]: the matrix has no `variant` parameter (add variant = [\"{name}\", ...])")
            } else {
                format!(
                    "[variant.{name}]: `{name}` is not a value of the matrix's `variant` ({})",
                    values.join(", ")
                )
            };
            return Err(src.error(&src.key_span(&["variant", name]), msg));
        }
        // Hooks run once when the run switches to this variant, not per point: only `${variant}` has
        // one value there.
        for (text, span) in src.strings_under(&["variant", name]) {
            if let Some(r) = references(&text).into_iter().find(|r| r != "variant") {
                return Err(src.error(
                    &span,
                    format!("`${{{r}}}` in [variant.{name}]: hooks run once per variant, so only `${{variant}}` can be used there"),
                ));
            }
        }
        let h = hooks.get_ref();
        let params: Params = vec![("variant".to_string(), Value::String(name.clone()))];
        let sub = |v: Vec<String>| -> Vec<String> {
            v.into_iter()
                .map(|c| values::display(&substitute(&Value::String(c), &params)))
                .collect()
        };
        out.insert(
            name.clone(),
            VariantHooks {
                setup: sub(h.setup.clone().into_vec()),
                teardown: sub(h.teardown.clone().into_vec()),
                skip_unless: sub(h.skip_unless.clone().into_vec()),
            },
        );
    }
    Ok(out)
}

fn points(
    m: &Matrix,
    target: Option<&Table>,
    workload: &Table,
    skip_unsupported: bool,
    src: &Source,
    notes: &mut Vec<String>,
    secrets: &mut Secrets,
) -> anyhow::Result<Vec<Point>> {
    let mut combos: Vec<Params> = vec![Vec::new()];
    for (k, vals) in &m.params {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                vals.iter().map(move |v| {
                    let mut next = c.clone();
                    next.push((k.clone(), v.clone()));
                    next
                })
            })
            .collect();
    }
    let mut out = Vec::new();
    let mut used = vec![false; m.exclude.len()];
    for params in combos {
        let excluded: Vec<usize> = (0..m.exclude.len()).filter(|i| excludes(&m.exclude[*i], &params)).collect();
        if !excluded.is_empty() {
            excluded.into_iter().for_each(|i| used[i] = true);
            continue;
        }
        let shown = secrets.shown(&params, m);
        let label = shown
            .iter()
            .map(|(k, v)| format!("{k}={}", values::display(v)))
            .collect::<Vec<_>>()
            .join(" ");
        let as_table = |t: &Table| match substitute(&Value::Table(t.clone()), &params) {
            Value::Table(sub) => sub,
            _ => Table::new(),
        };
        let target_table = target.map(as_table);
        let workload = as_table(workload);
        secrets.add_point(target_table.as_ref(), Some(&workload));
        let target = match &target_table {
            Some(t) => Some(resolve(t, src)?),
            None => None,
        };
        if let Some(cpus) = target.as_ref().and_then(|t| t.limits.cpus.as_ref()) {
            if let Err(why) = cpus.resolve() {
                if skip_unsupported {
                    notes.push(format!("skipped {}: {why}", if label.is_empty() { "the plan" } else { &label }));
                    continue;
                }
                let span = src.key_span(&["target", "cpus"]);
                let at = if label.is_empty() {
                    String::new()
                } else {
                    format!(" (at {label})")
                };
                return Err(src.error(&span, format!("{why}{at}; set skip_unsupported = true to skip such points")));
            }
        }
        out.push(Point {
            id: out.len(),
            label,
            params,
            shown,
            target,
            workload,
        });
    }
    if let Some(i) = used.iter().position(|u| !u) {
        let entry = m.exclude[i]
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(src.error(
            &src.key_span(&["matrix", "exclude"]),
            format!("matrix `exclude` entry {{ {entry} }} matches no matrix point (check its values against the matrix lists)"),
        ));
    }
    Ok(out)
}

/// An `exclude` entry matches a point when every value it names equals the point's (`20` and `"20"`
/// count as equal: the same text in the label).
fn excludes(entry: &Table, params: &Params) -> bool {
    entry.iter().all(|(k, v)| {
        params
            .iter()
            .any(|(pk, pv)| pk == k && (pv == v || values::display(pv) == values::display(v)))
    })
}

/// A TOML decoding message in the plan's words instead of Rust's (`expected i64` → `expected an
/// integer`; the hooks' "untagged enum" → what a hook is).
fn plain_words(msg: &str) -> String {
    if msg.starts_with("data did not match any variant of untagged enum") {
        return "expected a shell command or a list of them".into();
    }
    if msg.contains("value was too large") {
        return "the integer is out of range (TOML integers are 64-bit)".into();
    }
    if let Some((int, _)) = msg.split_once(" as i128") {
        let int = int.trim_start_matches("invalid type: integer ");
        return format!("the integer {int} is out of range (TOML integers are 64-bit)");
    }
    let mut out = msg.to_string();
    for (rust, plain) in [
        ("i64", "an integer"),
        ("u64", "a non-negative integer"),
        ("f64", "a number"),
        ("a sequence", "a list"),
        ("sequence", "list"),
        ("a map", "a table"),
        ("map", "table"),
    ] {
        for prefix in ["expected ", "invalid type: "] {
            out = out.replace(&format!("{prefix}{rust}"), &format!("{prefix}{plain}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{parse_threshold, Op};

    #[test]
    fn thresholds_parse_from_text() {
        let t = parse_threshold("latency_p99_ms <= 50").expect("parses");
        assert_eq!((t.metric.as_str(), t.op, t.value), ("latency_p99_ms", Op::Le, 50.0));
        assert_eq!(parse_threshold("x>=1").map(|t| t.op), Some(Op::Ge));
        assert_eq!(parse_threshold("x > 1").map(|t| t.op), Some(Op::Gt));
        assert!(Op::Le.holds(50.0, 50.0) && !Op::Lt.holds(50.0, 50.0));
        assert!(parse_threshold("p99 is small").is_none());
    }
}
