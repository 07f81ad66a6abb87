//! Raw plan → validated `Plan`. Every check names the place in the file (`file:line:col`).

use super::matrix::{matrix, points, Expansion};
use super::raw::{RawPhases, RawPlan};
use super::rules::{repetitions, threshold, MAX_THRESHOLDS};
use super::secrets::{self, Secrets};
use super::source::Source;
use super::values::{self, references, substitute, Params};
use super::{Matrix, Order, Phases, Plan, Repetitions, VariantHooks, WorkloadSpec, MAX_TRIALS};
use crate::util::suggest::{backticked, did_you_mean};
use std::collections::BTreeMap;
use toml::Value;

pub fn plan(src: Source) -> anyhow::Result<Plan> {
    let raw: RawPlan = toml::from_str(&src.text).map_err(|e| toml_error(&src, &e))?;
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
    let hosts_table = raw.hosts.as_ref().map(|h| h.get_ref().clone());
    // With matrix values in [hosts], each point has its own hosts (checked when the points are built).
    let templated = super::hosts::templated(hosts_table.as_ref());
    let hosts = if templated {
        Vec::new()
    } else {
        super::hosts::hosts(hosts_table.as_ref(), &src)?
    };
    let host_names: Vec<String> = hosts_table.iter().flat_map(|t| t.keys().cloned()).collect();
    let monitor_hosts = super::monitor::monitor(raw.monitor.as_ref().map(|m| m.get_ref()), &host_names, &src)?;
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
    if raw.thresholds.len() > MAX_THRESHOLDS {
        return Err(src.error(
            &src.key_span(&["thresholds"]),
            format!("{} thresholds: a plan may have at most {MAX_THRESHOLDS}", raw.thresholds.len()),
        ));
    }
    let thresholds = raw
        .thresholds
        .iter()
        .map(|t| threshold(t, &src))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let variants = variants(&raw, &matrix, &src)?;
    report_section(raw.report.as_ref(), &matrix, &src)?;
    secrets.add_hooks(&variants);
    let target_table = raw.target.as_ref().map(|t| t.get_ref().clone());
    let profile = super::profile::profile(raw.profile.as_ref().map(|p| p.get_ref()), target_table.is_some(), &src)?;
    let keep_target = target_table.as_ref().and_then(|t| t.get("restart")).and_then(Value::as_str) == Some("keep");
    let mut notes = unused_parameters(&src, &matrix, &variants);
    notes.extend(super::no_effect::notes(&variants, super::no_effect::swap_total_kb()));
    let probe_names = super::probes::names(&raw.probes, &src)?;
    let settings = super::variant_settings::read(&src, &matrix, &workload.kind, &workload.table, target_table.as_ref())?;
    let points = points(
        &matrix,
        Expansion {
            target: target_table.as_ref(),
            workload: &workload.table,
            skip_unsupported: raw.skip_unsupported,
            src: &src,
            notes: &mut notes,
            secrets,
            probes: (&raw.probes, &probe_names),
            hosts: (if templated { hosts_table.as_ref() } else { None }, &hosts),
            settings: &settings,
        },
    )?;
    let hosts = if templated { distinct_hosts(&points) } else { hosts };
    if points.is_empty() {
        return Err(src.error(&raw.name.span(), "no matrix point is left to run (all excluded or skipped)"));
    }
    check_trial_count(points.len(), &repetitions, &src)?;
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
        hosts,
        monitor_hosts,
        profile,
    })
}

/// Every distinct host of every point, in the order they first appear.
fn distinct_hosts(points: &[super::Point]) -> Vec<super::HostSpec> {
    let mut out: Vec<super::HostSpec> = Vec::new();
    for h in points.iter().flat_map(|p| &p.hosts) {
        if !out.contains(h) {
            out.push(h.clone());
        }
    }
    out
}

/// TOML's and serde's errors at their place, in the plan's terms: an unknown key with a hint, a
/// wrong type with the key it is for (`` `seed`: expected a whole number, found "x" ``).
fn toml_error(src: &Source, e: &toml::de::Error) -> anyhow::Error {
    let span = e.span().unwrap_or(0..0);
    let msg = e.message().trim().replace('\n', " ");
    let text = match backticked(&msg) {
        Some(k) if msg.starts_with("unknown field") => {
            let section = src.section_at(span.start).map(|t| format!(" in [{t}]")).unwrap_or_default();
            format!("unknown key `{k}`{section}{}", did_you_mean(&msg))
        }
        Some(k) if msg.starts_with("missing field") && k == "name" => "the plan has no `name` (add name = \"my-experiment\")".into(),
        _ if msg.starts_with("invalid type") || msg.starts_with("invalid value") || msg.starts_with("data did not match") => {
            let what = crate::util::text::humanize(&msg);
            match src.key_at(span.start) {
                Some(key) => format!("`{key}`: {what}"),
                None => what,
            }
        }
        _ if msg.starts_with("duplicate key") => match src.text.get(span.clone()).map(str::trim).filter(|k| !k.is_empty()) {
            Some(key) => format!("`{key}` is given twice"),
            None => "a key is given twice".into(),
        },
        _ => msg,
    };
    src.error(&span, text)
}

/// Points × repetitions (the most an adaptive policy may run) within [`MAX_TRIALS`].
fn check_trial_count(points: usize, reps: &Repetitions, src: &Source) -> anyhow::Result<()> {
    let per_point = match reps {
        Repetitions::Fixed(n) => *n,
        Repetitions::Adaptive { max, .. } => *max,
    } as usize;
    let trials = points.checked_mul(per_point);
    if trials.is_some_and(|t| t <= MAX_TRIALS) {
        return Ok(());
    }
    let count = trials.map_or_else(|| "more than 18446744073709551615".into(), |t| t.to_string());
    let span = if src.key_span(&["repetitions"]) == (0..0) {
        src.key_span(&["matrix"])
    } else {
        src.key_span(&["repetitions"])
    };
    Err(src.error(
        &span,
        format!(
            "the plan makes {count} trials ({points} point(s) × {per_point} repetition(s)), more than the {MAX_TRIALS} a plan may have: split it into several plans"
        ),
    ))
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
                format!("the workload type is a string ({kinds}), found {}", values::describe(other)),
            ))
        }
        None => return Err(src.error(&w.span(), format!("[workload] needs a `type` ({kinds})"))),
    };
    // `secrets` is the plan's (see `secrets`), not the workload's: the workload never sees it.
    let mut table = w.get_ref().clone();
    table.remove("secrets");
    Ok(WorkloadSpec { kind, table })
}

/// A matrix parameter that nothing refers to gives points that differ only in their label: usually a
/// forgotten `${name}`. Noted (not an error: it can label an outside change, such as a BIOS setting).
fn unused_parameters(src: &Source, m: &Matrix, variants: &BTreeMap<String, VariantHooks>) -> Vec<String> {
    let mut used: Vec<String> = ["target", "workload", "variant", "probes"]
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
    for section in ["target", "workload", "variant", "probes"] {
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
        for (key, cmds) in [("setup", &h.setup), ("teardown", &h.teardown), ("skip_unless", &h.skip_unless)] {
            if cmds.clone().into_vec().iter().any(|c| c.contains('\0')) {
                return Err(src.error(
                    &src.key_span(&["variant", name, key]),
                    format!("[variant.{name}] {key}: a command holds a NUL character"),
                ));
            }
        }
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

/// `[report]`: `compare` and `x` name matrix parameters (two different ones), `baseline` is one of
/// `compare`'s values, `x_scale` is linear, log or category.
fn report_section(r: Option<&toml::Spanned<super::raw::RawReport>>, m: &Matrix, src: &Source) -> anyhow::Result<()> {
    let Some(r) = r else { return Ok(()) };
    let r = r.get_ref();
    let names: Vec<&str> = m.params.iter().map(|(k, _)| k.as_str()).collect();
    let param = |s: &toml::Spanned<String>, key: &str| -> anyhow::Result<()> {
        if names.contains(&s.get_ref().as_str()) {
            return Ok(());
        }
        let known = if names.is_empty() {
            "the matrix has none".to_string()
        } else {
            format!("the matrix has {}", names.join(", "))
        };
        Err(src.error(
            &s.span(),
            format!("[report] {key} = \"{}\" is not a matrix parameter ({known})", s.get_ref()),
        ))
    };
    if let Some(c) = &r.compare {
        param(c, "compare")?;
    }
    if let Some(x) = &r.x {
        param(x, "x")?;
        if r.compare.as_ref().is_some_and(|c| c.get_ref() == x.get_ref()) {
            return Err(src.error(
                &x.span(),
                "[report] x and compare name the same parameter: the x axis is swept, compare makes the variants",
            ));
        }
    }
    if let Some(b) = &r.baseline {
        let Some(c) = &r.compare else {
            return Err(src.error(&b.span(), "[report] baseline needs `compare` (the parameter it is a value of)"));
        };
        let values: Vec<String> = m
            .params
            .iter()
            .find(|(k, _)| k == c.get_ref())
            .map(|(_, v)| v.iter().map(values::display).collect())
            .unwrap_or_default();
        let shown = values::display(b.get_ref());
        if !values.contains(&shown) {
            return Err(src.error(
                &b.span(),
                format!(
                    "[report] baseline {shown} is not a value of `{}` ({})",
                    c.get_ref(),
                    values.join(", ")
                ),
            ));
        }
    }
    for (key, list) in [("metrics", &r.metrics), ("system", &r.system)] {
        if let Some(l) = list.as_ref().filter(|l| l.get_ref().iter().any(|m| m.trim().is_empty())) {
            return Err(src.error(&l.span(), format!("[report] {key}: a metric name is empty")));
        }
    }
    if let Some(s) = &r.x_scale {
        if !["linear", "log", "category"].contains(&s.get_ref().as_str()) {
            return Err(src.error(
                &s.span(),
                format!("[report] x_scale = \"{}\": use linear, log or category", s.get_ref()),
            ));
        }
    }
    Ok(())
}
