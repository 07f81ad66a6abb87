//! `[monitor]`: which machines are sampled during every trial (`hosts = ["local", "server"]`).
//! Without it, every host the plan names is: `local` and each of `[hosts]`.

use super::source::Source;
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
    pub fn all(hosts: &[String]) -> MonitorHosts {
        MonitorHosts {
            local: true,
            remote: hosts.to_vec(),
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
pub fn monitor(table: Option<&Table>, hosts: &[String], src: &Source) -> anyhow::Result<MonitorHosts> {
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
        } else if hosts.contains(name) {
            out.remote.push(name.clone());
        } else {
            let names: Vec<String> = hosts.iter().map(|h| format!("`{h}`, ")).collect();
            return Err(src.error(
                &at,
                format!(
                    "[monitor] hosts: no host named `{name}` in [hosts] (the plan names {}`local`)",
                    names.concat()
                ),
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::MonitorHosts;

    const HOSTS: &str = "[hosts]\nserver = { ssh = \"u@10.0.0.2\" }\ndb = { ssh = \"u@10.0.0.3\" }\n";

    fn parse(extra: &str) -> anyhow::Result<crate::plan::Plan> {
        let text = format!("name = \"m\"\n[workload]\ntype = \"cpu\"\n{HOSTS}{extra}");
        crate::plan::parse_str(&text, "plan.toml")
    }

    #[test]
    fn every_host_by_default() {
        let p = parse("").expect("plan");
        assert_eq!(
            p.monitor_hosts,
            MonitorHosts {
                local: true,
                remote: vec!["server".into(), "db".into()]
            }
        );
    }

    #[test]
    fn the_hosts_named() {
        let p = parse("[monitor]\nhosts = [\"server\"]\n").expect("plan");
        assert!(!p.monitor_hosts.local);
        assert_eq!(p.monitor_hosts.remote, ["server"]);
        assert!(p.monitor_hosts.includes("server") && !p.monitor_hosts.includes("db"));
    }

    #[test]
    fn bad_input_is_one_line_at_its_place() {
        for (extra, says) in [
            ("[monitor]\nhosts = [\"web\"]\n", "no host named `web`"),
            ("[monitor]\nhosts = [\"local\", \"local\"]\n", "names `local` twice"),
            ("[monitor]\nhosts = \"server\"\n", "a list of host names"),
            ("[monitor]\nhost = [\"server\"]\n", "did you mean `hosts`"),
        ] {
            let e = format!("{:#}", parse(extra).expect_err(extra));
            assert!(e.starts_with("plan.toml:") && e.contains(says), "{extra}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn hosts_values_take_matrix_values() {
        let text = "name = \"m\"\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n[matrix]\naddr = [\"10.0.0.2\", \"10.0.0.3\"]\n\
                    [hosts]\nserver = { ssh = \"u@${addr}\", port = 22 }\n[target]\nhost = \"server\"\ncommand = [\"sleep\", \"9\"]\n";
        let p = crate::plan::parse_str(text, "plan.toml").expect("plan");
        let ssh: Vec<String> = p
            .points
            .iter()
            .map(|pt| {
                pt.target
                    .as_ref()
                    .and_then(|t| t.host.as_ref())
                    .map(|h| h.ssh.clone())
                    .unwrap_or_default()
            })
            .collect();
        assert_eq!(ssh, ["u@10.0.0.2", "u@10.0.0.3"]);
        assert_eq!(p.points[1].hosts[0].ssh, "u@10.0.0.3");
        // Every machine the plan reaches, once each (for `perflab hosts check` and the run's checks).
        let all: Vec<&str> = p.hosts.iter().map(|h| h.ssh.as_str()).collect();
        assert_eq!(all, ["u@10.0.0.2", "u@10.0.0.3"]);
        assert_eq!(p.monitor_hosts.remote, ["server"]);
        let bad = text.replace("port = 22", "port = \"${addr}\"");
        let e = format!("{:#}", crate::plan::parse_str(&bad, "plan.toml").expect_err("a bad port"));
        assert!(e.starts_with("plan.toml:8:") && e.contains("port number"), "{e}");
    }
}
