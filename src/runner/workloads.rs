//! The workload factory: a plan's `[workload]` table (after `${name}` substitution) → a `Workload`.
//! A configuration error is located in the plan file (file:line:column) with a did-you-mean hint.

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

/// The first `name` in backticks of a serde message.
fn backticked(msg: &str) -> Option<String> {
    let start = msg.find('`')? + 1;
    let len = msg[start..].find('`')?;
    Some(msg[start..start + len].to_string())
}

/// serde lists the expected fields: "unknown field `conections`, expected one of `url`, `connections`".
fn did_you_mean(msg: &str) -> String {
    let Some(bad) = backticked(msg) else { return String::new() };
    let Some((_, expected)) = msg.split_once("expected") else { return String::new() };
    let candidates: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let best = candidates.iter().map(|c| (edit_distance(&bad, c), *c)).min();
    match best {
        Some((d, c)) if d <= 2.max(bad.len() / 3) => format!(" (did you mean `{c}`?)"),
        _ => String::new(),
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_nearest_expected_field() {
        let m = "unknown field `conections`, expected one of `url`, `connections`, `duration`";
        assert_eq!(did_you_mean(m), " (did you mean `connections`?)");
        assert_eq!(did_you_mean("unknown field `zzzzzzzz`, expected `url`"), "");
        assert_eq!(backticked(m).as_deref(), Some("conections"));
    }
}
