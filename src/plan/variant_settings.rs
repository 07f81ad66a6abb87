//! Variants carrying settings: `[variant.after] workers = 20` beside the hooks sets, for the points
//! whose `variant` is `after`, a value of another matrix parameter (`workers`, which the target's
//! command uses as `${workers}`) or a plain key of `[workload]` or `[target]` (`connections = 20`),
//! so a before/after tuning needs no shell trick. A key that is none of these is an error at its
//! `file:line:col` listing the keys a variant may set.

use super::source::Source;
use super::values::Params;
use super::Matrix;
use crate::workload::registry;
use std::collections::BTreeMap;
use toml::{Table, Value};

/// The hooks' own keys in `[variant.<value>]`.
const HOOK_KEYS: [&str; 3] = ["setup", "teardown", "skip_unless"];

/// What one variant sets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    /// Values of matrix parameters, replacing the matrix's value at this variant's points.
    pub params: Vec<(String, Value)>,
    /// Keys of `[workload]`, over the table as written (after substitution).
    pub workload: Table,
    /// Keys of `[target]`.
    pub target: Table,
}

/// Every variant's settings, by the `variant` value; variants that set nothing are absent.
pub fn read(src: &Source, m: &Matrix, kind: &str, workload: &Table, target: Option<&Table>) -> anyhow::Result<BTreeMap<String, Settings>> {
    let Ok(doc) = src.text.parse::<Table>() else {
        return Ok(BTreeMap::new());
    };
    let Some(Value::Table(variants)) = doc.get("variant") else {
        return Ok(BTreeMap::new());
    };
    let kind_keys: Vec<&str> = registry::by_name(kind).map_or(Vec::new(), |k| k.keys().iter().map(|k| k.name).collect());
    let mut out = BTreeMap::new();
    for (name, table) in variants {
        let Value::Table(table) = table else { continue };
        let mut s = Settings::default();
        for (key, value) in table.iter().filter(|(k, _)| !HOOK_KEYS.contains(&k.as_str())) {
            if key == "variant" {
                return Err(src.error(
                    &src.key_span(&["variant", name, key]),
                    format!("[variant.{name}] variant: a variant cannot set its own parameter"),
                ));
            }
            if m.params.iter().any(|(k, _)| k == key) {
                s.params.push((key.clone(), value.clone()));
            } else if workload.contains_key(key) || kind_keys.contains(&key.as_str()) {
                if key == "type" {
                    return Err(src.error(
                        &src.key_span(&["variant", name, key]),
                        format!("[variant.{name}] type: a variant cannot change the workload's type"),
                    ));
                }
                s.workload.insert(key.clone(), value.clone());
            } else if target.is_some_and(|t| t.contains_key(key)) {
                s.target.insert(key.clone(), value.clone());
            } else {
                let (list, all) = known(m, &kind_keys, workload, target);
                let hint = crate::util::suggest::nearest(key, &all).map_or(String::new(), |c| format!(" (did you mean `{c}`?)"));
                return Err(src.error(
                    &src.key_span(&["variant", name, key]),
                    format!("unknown key `{key}` in [variant.{name}]{hint}: {list}"),
                ));
            }
        }
        if s != Settings::default() {
            out.insert(name.clone(), s);
        }
    }
    Ok(out)
}

/// The keys a variant can set, for the error message: as a sentence, and all of them.
fn known<'a>(m: &'a Matrix, kind_keys: &[&'a str], workload: &'a Table, target: Option<&'a Table>) -> (String, Vec<&'a str>) {
    let params: Vec<&str> = m.params.iter().map(|(k, _)| k.as_str()).filter(|k| *k != "variant").collect();
    let mut wl: Vec<&str> = workload.keys().map(String::as_str).filter(|k| *k != "type").collect();
    for k in kind_keys {
        if !wl.contains(k) && *k != "type" {
            wl.push(k);
        }
    }
    let tg: Vec<&str> = target.map_or(Vec::new(), |t| t.keys().map(String::as_str).collect());
    let list = |v: &[&str]| if v.is_empty() { "none".to_string() } else { v.join(", ") };
    let sentence = format!(
        "a variant can set the hooks ({}), the matrix parameters ({}), the [workload] keys ({}) and the [target] keys ({})",
        HOOK_KEYS.join(", "),
        list(&params),
        list(&wl),
        list(&tg)
    );
    let all = HOOK_KEYS.iter().copied().chain(params).chain(wl).chain(tg).collect();
    (sentence, all)
}

/// The settings of the point's variant, if it sets anything.
pub fn of<'a>(all: &'a BTreeMap<String, Settings>, params: &Params) -> Option<&'a Settings> {
    let v = params.iter().find(|(k, _)| k == "variant")?;
    all.get(&super::values::display(&v.1))
}

/// The point's parameters with its variant's parameter values in place.
pub fn apply_params(all: &BTreeMap<String, Settings>, mut params: Params) -> Params {
    if let Some(s) = of(all, &params).cloned() {
        for (k, v) in s.params {
            if let Some(slot) = params.iter_mut().find(|(p, _)| *p == k) {
                slot.1 = v;
            }
        }
    }
    params
}

/// `table` with `over`'s keys set.
pub fn overlay(mut table: Table, over: &Table) -> Table {
    for (k, v) in over {
        table.insert(k.clone(), v.clone());
    }
    table
}
