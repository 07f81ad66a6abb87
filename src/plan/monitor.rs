//! `[monitor]`: which machines are sampled during every trial (`hosts = ["local", "server"]`).
//! Without it, every host the plan names is: `local` and each of `[hosts]`.

use super::source::Source;
use super::HostSpec;
use toml::{Table, Value};

/// The keys `[monitor]` accepts.
const KEYS: &[&str] = &["hosts"];

/// The hosts to sample: `local` first when named, then the names of `[hosts]` in the list's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MonitorHosts {
    /// Sample this machine's system metrics (perflab's own process is always sampled).
    pub local: bool,
    /// The names of `[hosts]` to sample.
    pub remote: Vec<String>,
}

impl MonitorHosts {
    /// Every host the plan names.
    pub fn all(hosts: &[HostSpec]) -> MonitorHosts {
        MonitorHosts {
            local: true,
            remote: hosts.iter().map(|h| h.name.clone()).collect(),
        }
    }

    /// Whether `name` (`local` or a name of `[hosts]`) is sampled.
    pub fn includes(&self, name: &str) -> bool {
        if name == "local" {
            self.local
        } else {
            self.remote.iter().any(|h| h == name)
        }
    }
}

/// `[monitor]` checked against `[hosts]`; errors at their place in the plan.
pub fn monitor(table: Option<&Table>, hosts: &[HostSpec], src: &Source) -> anyhow::Result<MonitorHosts> {
    let Some(table) = table else {
        return Ok(MonitorHosts::all(hosts));
    };
    if let Some(k) = table.keys().find(|k| !KEYS.contains(&k.as_str())) {
        let hint = crate::util::suggest::nearest(k, KEYS)
            .map(|c| format!(" (did you mean `{c}`?)"))
            .unwrap_or_default();
        return Err(src.error(&src.key_span(&["monitor", k]), format!("unknown key `{k}` in [monitor]{hint}")));
    }
    let Some(list) = table.get("hosts") else {
        return Ok(MonitorHosts::all(hosts));
    };
    let at = src.key_span(&["monitor", "hosts"]);
    let Value::Array(items) = list else {
        return Err(src.error(&at, "[monitor] hosts is a list of host names, such as [\"local\", \"server\"]"));
    };
    let mut out = MonitorHosts {
        local: false,
        remote: Vec::new(),
    };
    for v in items {
        let Value::String(name) = v else {
            return Err(src.error(&at, "[monitor] hosts is a list of host names, such as [\"local\", \"server\"]"));
        };
        if out.includes(name) {
            return Err(src.error(&at, format!("[monitor] hosts names `{name}` twice")));
        }
        if name == "local" {
            out.local = true;
        } else if hosts.iter().any(|h| &h.name == name) {
            out.remote.push(name.clone());
        } else {
            let names: Vec<String> = hosts.iter().map(|h| format!("`{}`, ", h.name)).collect();
            return Err(src.error(
                &at,
                format!("[monitor] hosts: no host named `{name}` in [hosts] (the plan names {}`local`)", names.concat()),
            ));
        }
    }
    Ok(out)
}
