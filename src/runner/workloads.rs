//! The workload factory: a plan's `[workload]` table (after `${name}` substitution) → a `Workload`.
//! A configuration error is located in the plan file (file:line:column) with a did-you-mean hint.

use crate::util::suggest::{backticked, did_you_mean};
use crate::workload::Workload;

/// Where a key of the `[workload]` table is in the plan source, for error messages.
pub trait Locator {
    /// `file:line:col` of `key` inside the workload table (or of the table itself).
    fn at(&self, key: Option<&str>) -> String;
}

/// Build one trial's workload from its substituted table.
pub fn build(kind: &str, table: &toml::Table, loc: &dyn Locator) -> anyhow::Result<Box<dyn Workload>> {
    let mut table = table.clone();
    table.remove("type");
    match kind {
        "http" => {
            let cfg: crate::workload::http::HttpConfig = decode(table, loc)?;
            let w = crate::workload::http::HttpWorkload::new(cfg).map_err(|e| located(loc, None, &format!("{e:#}")))?;
            Ok(Box::new(w))
        }
        "exec" => {
            argv_as_strings(&mut table);
            let cfg: crate::workload::exec::ExecConfig = decode(table, loc)?;
            crate::workload::exec::preflight(&cfg).map_err(|e| located(loc, Some("command"), &format!("{e:#}")))?;
            Ok(Box::new(crate::workload::exec::ExecWorkload::new(cfg)))
        }
        other => Err(located(
            loc,
            Some("type"),
            &format!("unknown workload type `{other}` (expected \"http\" or \"exec\")"),
        )),
    }
}

/// A `${name}` that is a whole element of an exec argv takes the parameter's type (an integer);
/// an argv holds strings, so numbers and booleans are written as they read (as `[target]` does).
fn argv_as_strings(table: &mut toml::Table) {
    if let Some(toml::Value::Array(argv)) = table.get_mut("command") {
        for e in argv.iter_mut() {
            let text = match e {
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(f) => f.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                _ => continue,
            };
            *e = toml::Value::String(text);
        }
    }
}

fn decode<T: serde::de::DeserializeOwned>(table: toml::Table, loc: &dyn Locator) -> anyhow::Result<T> {
    T::deserialize(toml::Value::Table(table)).map_err(|e| {
        let msg = e.message().trim().to_string();
        let key = backticked(&msg);
        let hint = did_you_mean(&msg);
        let text = match (msg.starts_with("unknown field"), &key) {
            (true, Some(k)) => format!("unknown key `{k}` in [workload]{hint}"),
            _ => format!("[workload]: {msg}"),
        };
        located(loc, key.as_deref(), &text)
    })
}

fn located(loc: &dyn Locator, key: Option<&str>, msg: &str) -> anyhow::Error {
    crate::error::usage(format!("{}: {msg}", loc.at(key)))
}
