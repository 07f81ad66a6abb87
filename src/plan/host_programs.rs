//! The programs a plan starts on each of its remote hosts (`[target] host`, an exec `[workload]
//! host`), so that one missing there is found before the run (`perflab run`, `perflab hosts check`)
//! and said as such, instead of failing every trial when the host's agent cannot start it. `perflab`
//! itself is not listed: on a host it is the agent's own binary.

use super::Plan;
use crate::util::command::CommandLine;
use crate::workload::exec::preflight::program_of;
use toml::Value;

/// One program a host must have, with what the command it starts runs with there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeededProgram {
    /// `argv[0]`, or the first word of a shell string.
    pub program: String,
    /// The command's working directory on the host (a relative `program` is relative to it).
    pub cwd: Option<String>,
    /// The command's own `PATH`, when its `env` sets one.
    pub path: Option<String>,
    /// Where the command is in the plan (`["target", "command"]`), for `file:line:col`.
    pub key: [&'static str; 2],
}

impl NeededProgram {
    /// `[target] command`.
    pub fn what(&self) -> String {
        format!("[{}] {}", self.key[0], self.key[1])
    }
}

/// The programs the plan's points start on the host named `host`, each once.
pub fn on_host(plan: &Plan, host: &str) -> Vec<NeededProgram> {
    let mut out: Vec<NeededProgram> = Vec::new();
    let mut add = |n: Option<NeededProgram>| {
        if let Some(n) = n.filter(|n| n.program != "perflab" && !out.contains(n)) {
            out.push(n);
        }
    };
    for p in &plan.points {
        if let Some(t) = p.target.as_ref().filter(|t| t.host.as_ref().is_some_and(|h| h.name == host)) {
            add(program_of(&t.command).map(|program| NeededProgram {
                program,
                cwd: t.cwd.as_ref().map(|d| d.display().to_string()),
                path: t.env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone()),
                key: ["target", "command"],
            }));
        }
        let w = &p.workload;
        if plan.workload.kind == "exec" && w.get("host").and_then(Value::as_str) == Some(host) {
            let command = match w.get("command") {
                Some(Value::String(s)) => Some(CommandLine::Shell(s.clone())),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect::<Option<Vec<String>>>()
                    .map(CommandLine::Argv),
                _ => None,
            };
            let path = w.get("env").and_then(|e| e.get("PATH")).and_then(Value::as_str);
            add(command.as_ref().and_then(program_of).map(|program| NeededProgram {
                program,
                cwd: w.get("cwd").and_then(Value::as_str).map(str::to_string),
                path: path.map(str::to_string),
                key: ["workload", "command"],
            }));
        }
    }
    out
}
