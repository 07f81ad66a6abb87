//! `[hosts]`: the machines a plan names, each reached over ssh (`server = { ssh = "user@addr" }`).
//! `local` is always the machine perflab runs on and cannot be redefined.

use super::source::Source;
use toml::{Table, Value};

/// The keys one host accepts.
pub const HOST_KEYS: &[&str] = &["ssh", "port", "identity", "ssh_options", "perflab"];

/// One remote host of `[hosts]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSpec {
    /// The name the plan uses (`host = "server"`).
    pub name: String,
    /// The ssh destination: `user@address`, an address, or an alias of `~/.ssh/config`.
    pub ssh: String,
    pub port: Option<u16>,
    /// A private key file (`ssh -i`).
    pub identity: Option<String>,
    /// More `ssh -o` options, as `Key=value`.
    pub ssh_options: Vec<String>,
    /// The perflab to start on the host (default: the per-version cache `perflab hosts install`
    /// fills, else `perflab` on the host's PATH).
    pub perflab: Option<String>,
}

/// Does `[hosts]` take matrix values (a `${name}` in one of its values)? Then each point has its
/// own hosts (`at_point`).
pub fn templated(table: Option<&Table>) -> bool {
    table.is_some_and(|t| t.values().any(|v| v.to_string().contains("${")))
}

/// The hosts of `[hosts]` with a point's matrix values substituted.
pub fn at_point(table: Option<&Table>, params: &super::values::Params, src: &Source) -> anyhow::Result<Vec<HostSpec>> {
    match table.map(|t| super::values::substitute(&Value::Table(t.clone()), params)) {
        Some(Value::Table(sub)) => hosts(Some(&sub), src),
        _ => Ok(Vec::new()),
    }
}

/// The hosts of a `[hosts]` table, in the plan's order; errors at their place in the plan.
pub fn hosts(table: Option<&Table>, src: &Source) -> anyhow::Result<Vec<HostSpec>> {
    let Some(table) = table else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (name, v) in table {
        let here = |key: Option<&str>, msg: String| {
            let mut path = vec!["hosts", name.as_str()];
            path.extend(key);
            src.error(&src.key_span(&path), msg)
        };
        if name == "local" {
            return Err(here(
                None,
                "`local` is the machine perflab runs on: it cannot be redefined in [hosts]".into(),
            ));
        }
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(here(None, format!("host name `{name}`: use letters, digits, `-` and `_`")));
        }
        let Value::Table(t) = v else {
            return Err(here(
                None,
                format!("host `{name}` must be a table such as {{ ssh = \"user@192.168.56.10\" }}"),
            ));
        };
        for k in t.keys() {
            if !HOST_KEYS.contains(&k.as_str()) {
                let hint = crate::util::suggest::nearest(k, HOST_KEYS)
                    .map(|c| format!(" (did you mean `{c}`?)"))
                    .unwrap_or_default();
                return Err(here(Some(k), format!("unknown key `{k}` in host `{name}`{hint}")));
            }
        }
        let text = |key: &str| -> anyhow::Result<Option<String>> {
            match t.get(key) {
                None => Ok(None),
                Some(Value::String(s)) if !s.trim().is_empty() && !s.starts_with('-') && !s.contains(['\n', '\0']) => Ok(Some(s.clone())),
                Some(_) => Err(here(
                    Some(key),
                    format!("`{key}` of host `{name}` must be a non-empty string not starting with `-`"),
                )),
            }
        };
        let ssh = text("ssh")?.ok_or_else(|| {
            here(
                None,
                format!("host `{name}` needs `ssh` (an ssh destination such as \"user@192.168.56.10\")"),
            )
        })?;
        let port = match t.get("port") {
            None => None,
            Some(Value::Integer(p)) if (1..=65535).contains(p) => Some(*p as u16),
            Some(_) => {
                return Err(here(
                    Some("port"),
                    format!("`port` of host `{name}` must be a port number (1 to 65535)"),
                ))
            }
        };
        let ssh_options = match t.get("ssh_options") {
            None => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|o| match o {
                    Value::String(s) if s.contains('=') && !s.starts_with('-') && !s.contains(['\n', '\0']) => Ok(s.clone()),
                    _ => Err(here(
                        Some("ssh_options"),
                        format!("`ssh_options` of host `{name}`: each option is \"Key=value\""),
                    )),
                })
                .collect::<anyhow::Result<_>>()?,
            Some(_) => {
                return Err(here(
                    Some("ssh_options"),
                    format!("`ssh_options` of host `{name}` is a list of \"Key=value\""),
                ))
            }
        };
        out.push(HostSpec {
            name: name.clone(),
            ssh,
            port,
            identity: text("identity")?,
            ssh_options,
            perflab: text("perflab")?,
        });
    }
    Ok(out)
}

/// `[workload] from = ["local", "client1", ...]`: the machines that send the load's segments, in
/// segment order (segment `i` on `from[i]`); None for `local`, this machine. One line in the
/// plan's words when it is not a list of distinct names of `[hosts]` (or `local`).
pub fn load_from(v: &Value, hosts: &[HostSpec]) -> Result<Vec<Option<HostSpec>>, String> {
    let Value::Array(items) = v else {
        return Err(format!(
            "expected a list of host names (from = [\"local\", \"client1\"]), found {}",
            super::values::describe(v)
        ));
    };
    if items.is_empty() {
        return Err("the list is empty: name the machines that send the load (\"local\" is this one)".into());
    }
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for item in items {
        let name = item.as_str().unwrap_or("");
        if seen.contains(&name) {
            return Err(format!("`{name}` is named twice: each machine sends one segment"));
        }
        seen.push(name);
        out.push(super::target::host_named(Some(item), hosts)?);
    }
    Ok(out)
}
