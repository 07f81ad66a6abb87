//! `[matrix]` → its parameters, checked and counted before anything is expanded, and the points:
//! the cartesian product minus `exclude`, each with its target resolved. Linear in the number of
//! points; a plan above [`MAX_TRIALS`](super::MAX_TRIALS) is refused before any point is built.

use super::secrets::Secrets;
use super::source::Source;
use super::target::{resolve, ResolvedTarget};
use super::values::{self, substitute, Params};
use super::{Matrix, Point, MAX_TRIALS};
use std::collections::{HashMap, HashSet};
use toml::{Spanned, Table, Value};

const EXCLUDE_SHAPE: &str = "matrix `exclude` is a list of tables such as [{ concurrency = 20 }]";

/// The parameters of `[matrix]` in declaration order, each list checked (not empty, no value twice),
/// and their product checked against the trial limit before anything is expanded.
pub(super) fn matrix(m: Option<&Spanned<Table>>, src: &Source) -> anyhow::Result<Matrix> {
    let mut out = Matrix::default();
    let Some(m) = m else { return Ok(out) };
    for (k, v) in m.get_ref() {
        let at = || src.key_span(&["matrix", k]);
        if k == "exclude" {
            let Value::Array(list) = v else {
                return Err(src.error(&at(), EXCLUDE_SHAPE));
            };
            for e in list {
                let Value::Table(t) = e else {
                    return Err(src.error(&at(), EXCLUDE_SHAPE));
                };
                out.exclude.push(t.clone());
            }
            continue;
        }
        if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
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
        let mut seen = HashSet::with_capacity(values.len());
        for v in &values {
            if matches!(v, Value::Array(_) | Value::Table(_)) {
                return Err(src.error(
                    &at(),
                    format!(
                        "matrix `{k}`: a value is a string, number or boolean, found {}",
                        values::describe(v)
                    ),
                ));
            }
            if !seen.insert(values::display(v)) {
                return Err(src.error(
                    &at(),
                    format!("matrix `{k}` lists {} twice: each value makes one point", values::describe(v)),
                ));
            }
        }
        out.params.push((k.clone(), values));
    }
    let lengths: Vec<usize> = out.params.iter().map(|(_, v)| v.len()).collect();
    let product = lengths.iter().try_fold(1usize, |acc, n| acc.checked_mul(*n));
    if product.is_none_or(|p| p > MAX_TRIALS) {
        let count = product.map_or_else(
            || format!("about {:e}", lengths.iter().map(|n| *n as f64).product::<f64>()),
            |p| p.to_string(),
        );
        let factors = lengths.iter().map(usize::to_string).collect::<Vec<_>>().join(" × ");
        return Err(src.error(
            &src.key_span(&["matrix"]),
            format!(
                "the matrix makes {count} points ({factors}), more than the {MAX_TRIALS} trials a plan may have: split it into several plans"
            ),
        ));
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

/// What building the points needs besides the matrix: the plan's `[target]` and `[workload]`
/// tables, the skip policy, where to note skips and record secrets, and the targets resolved so far.
pub(super) struct Expansion<'a> {
    pub target: Option<&'a Table>,
    pub workload: &'a Table,
    pub skip_unsupported: bool,
    pub src: &'a Source,
    pub notes: &'a mut Vec<String>,
    pub secrets: &'a mut Secrets,
    /// The `[[probes]]` tables and their names.
    pub probes: (&'a [Spanned<super::raw::RawProbe>], &'a [String]),
    /// The plan's `[hosts]`, for `host =` keys: the table when its values take matrix values
    /// (substituted at each point), and the hosts otherwise.
    pub hosts: (Option<&'a Table>, &'a [super::HostSpec]),
    /// What each variant sets (`[variant.after] workers = 20`).
    pub settings: &'a std::collections::BTreeMap<String, super::variant_settings::Settings>,
}

/// The points to run: the product in declaration order (the first parameter varies slowest), minus
/// excluded points and (with `skip_unsupported`) points whose CPUs this machine cannot give.
pub(super) fn points(m: &Matrix, mut x: Expansion<'_>) -> anyhow::Result<Vec<Point>> {
    let excludes = ExcludeIndex::new(m);
    let mut used = vec![false; m.exclude.len()];
    let mut targets: HashMap<String, (ResolvedTarget, Result<(), String>)> = HashMap::new();
    let mut out = Vec::new();
    let lengths: Vec<usize> = m.params.iter().map(|(_, v)| v.len()).collect();
    let mut idx = vec![0usize; lengths.len()];
    loop {
        let params: Params = m
            .params
            .iter()
            .zip(&idx)
            .map(|((k, vals), i)| (k.clone(), vals[*i].clone()))
            .collect();
        let hits = excludes.matching(&params);
        if hits.is_empty() {
            let params = super::variant_settings::apply_params(x.settings, params);
            if let Some(p) = point(out.len(), params, m, &mut x, &mut targets)? {
                out.push(p);
            }
        } else {
            hits.into_iter().for_each(|i| used[i] = true);
        }
        // The next combination: the last parameter varies fastest.
        let mut d = lengths.len();
        loop {
            if d == 0 {
                return finish(m, x.src, used, out);
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < lengths[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

fn finish(m: &Matrix, src: &Source, used: Vec<bool>, out: Vec<Point>) -> anyhow::Result<Vec<Point>> {
    if let Some(i) = used.iter().position(|u| !u) {
        let entry = m.exclude[i]
            .iter()
            .map(|(k, v)| format!("{k} = {}", values::describe(v)))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(src.error(
            &src.key_span(&["matrix", "exclude"]),
            format!("matrix `exclude` entry {{ {entry} }} matches no matrix point (check its values against the matrix lists)"),
        ));
    }
    Ok(out)
}

/// One point with its target resolved (once per distinct substituted target), or `None` when it is
/// skipped with a note. Its label shows the parameters as `Secrets::shown` gives them.
fn point(
    id: usize,
    params: Params,
    m: &Matrix,
    x: &mut Expansion<'_>,
    cache: &mut HashMap<String, (ResolvedTarget, Result<(), String>)>,
) -> anyhow::Result<Option<Point>> {
    let shown = x.secrets.shown(&params, m);
    let label = shown
        .iter()
        .map(|(k, v)| format!("{k}={}", values::display(v)))
        .collect::<Vec<_>>()
        .join(" ");
    let as_table = |t: &Table| match substitute(&Value::Table(t.clone()), &params) {
        Value::Table(sub) => sub,
        _ => Table::new(),
    };
    let settings = super::variant_settings::of(x.settings, &params);
    let empty = Table::new();
    let target_table = x
        .target
        .map(|t| super::variant_settings::overlay(as_table(t), settings.map_or(&empty, |s| &s.target)));
    let workload = super::variant_settings::overlay(as_table(x.workload), settings.map_or(&empty, |s| &s.workload));
    let hosts = match x.hosts.0 {
        Some(t) => super::hosts::at_point(Some(t), &params, x.src)?,
        None => x.hosts.1.to_vec(),
    };
    let probes = super::probes::resolve(x.probes.0, x.probes.1, &params, x.src)?;
    // Recorded before anything can fail, so that an error about this point shows no secret.
    x.secrets.add_point(target_table.as_ref(), Some(&workload));
    let resolved = match target_table {
        Some(sub) => {
            let key = format!("{sub}{hosts:?}");
            if !cache.contains_key(&key) {
                let r = resolve(&sub, x.src, &hosts)?;
                // A remote target's CPUs are checked on its host, when it starts.
                let cpus = match (&r.limits.cpus, &r.host) {
                    (Some(c), None) => c.resolve().map(|_| ()),
                    _ => Ok(()),
                };
                cache.insert(key.clone(), (r, cpus));
            }
            cache.get(&key).cloned()
        }
        None => None,
    };
    if let Some((_, Err(why))) = &resolved {
        if x.skip_unsupported {
            let what = if label.is_empty() { "the plan" } else { &label };
            x.notes.push(crate::model::skip::point_note(what, why));
            return Ok(None);
        }
        let at = if label.is_empty() {
            String::new()
        } else {
            format!(" (at {label})")
        };
        return Err(x.src.error(
            &x.src.key_span(&["target", "cpus"]),
            format!("{why}{at}; set skip_unsupported = true to skip such points"),
        ));
    }
    Ok(Some(Point {
        id,
        label,
        params,
        shown,
        target: resolved.map(|(t, _)| t),
        workload,
        probes,
        hosts,
    }))
}

/// The `exclude` entries grouped by the parameters they name, each group a map from the named
/// values (as text: `20` and `"20"` are equal) to the entries: a point is checked against every
/// group once, whatever the number of entries.
struct ExcludeIndex {
    groups: Vec<ExcludeGroup>,
}

/// The positions of the parameters the entries name, and their values (as text) → the entries.
type ExcludeGroup = (Vec<usize>, HashMap<Vec<String>, Vec<usize>>);

impl ExcludeIndex {
    fn new(m: &Matrix) -> ExcludeIndex {
        let mut groups: Vec<ExcludeGroup> = Vec::new();
        for (i, e) in m.exclude.iter().enumerate() {
            let mut keys: Vec<usize> = e.keys().filter_map(|k| m.params.iter().position(|(p, _)| p == k)).collect();
            keys.sort_unstable();
            let vals: Vec<String> = keys.iter().map(|p| values::display(&e[m.params[*p].0.as_str()])).collect();
            let g = match groups.iter().position(|(k, _)| *k == keys) {
                Some(g) => g,
                None => {
                    groups.push((keys, HashMap::new()));
                    groups.len() - 1
                }
            };
            groups[g].1.entry(vals).or_default().push(i);
        }
        ExcludeIndex { groups }
    }

    /// The entries that match a point (its parameters in declaration order).
    fn matching(&self, params: &Params) -> Vec<usize> {
        let mut out = Vec::new();
        for (keys, map) in &self.groups {
            let vals: Vec<String> = keys.iter().map(|p| values::display(&params[*p].1)).collect();
            if let Some(hits) = map.get(&vals) {
                out.extend_from_slice(hits);
            }
        }
        out
    }
}
