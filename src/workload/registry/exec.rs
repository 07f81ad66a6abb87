//! `type = "exec"`: any command run to completion, its output read by a tool adapter.

use super::spec::{decode, Key, Locator, WorkloadKind};
use crate::workload::exec::{ExecConfig, ExecWorkload};
use crate::workload::Workload;

pub struct Kind;

const KEYS: &[Key] = &[
    Key { name: "command", ty: "list of strings (argv) or a string (run with `sh -c`)", default: "required", doc: "what to run, to completion: its run time is the load phase (size the tool's own duration)" },
    Key { name: "cwd", ty: "string (a path)", default: "perflab's working directory", doc: "working directory" },
    Key { name: "env", ty: "table of strings", default: "none", doc: "extra environment variables" },
    Key { name: "adapter", ty: "string", default: "detected from the program", doc: "the adapter that reads the output: `ab`, `fio`, `iperf3`, `memtester`, `pgbench`, `stress-ng`, `sysbench`, `wrk`, or `none` (exit status and times only)" },
    Key { name: "timeout", ty: "duration string or seconds", default: "`\"1h\"`", doc: "kill the command's process group after this long; the trial fails" },
    Key { name: "warmup_command", ty: "list of strings or a string", default: "none", doc: "run before the measured command, unmeasured (e.g. lay out fio's files)" },
    Key { name: "warmup_run", ty: "bool", default: "`false`", doc: "run `command` itself once, unmeasured, as the warm-up" },
];

impl WorkloadKind for Kind {
    fn name(&self) -> &'static str {
        "exec"
    }

    fn summary(&self) -> &'static str {
        "any command, run to completion in its own process group; a tool adapter turns its output into metrics. Primary figures per adapter: fio `read_iops` (or `write_iops`) and `read_clat_p99_us`, iperf3 `received_mbitps`, sysbench `transactions_per_s` (or `events_per_s`) and its latency percentile, pgbench `transactions_per_s`, ab and wrk `requests_per_s` and `latency_p99_ms`, stress-ng bogo ops/s; without an adapter `wall_time_s`."
    }

    fn keys(&self) -> &'static [Key] {
        KEYS
    }

    fn build(&self, mut table: toml::Table, loc: &dyn Locator) -> anyhow::Result<Box<dyn Workload>> {
        argv_as_strings(&mut table);
        let cfg: ExecConfig = decode(table, KEYS, loc)?;
        Ok(Box::new(ExecWorkload::new(cfg)))
    }
}

/// An exec workload whose commands `runner` runs on another machine (`host = "server"`): decoded
/// as [`Kind`] does, without this machine's preflight checks (the programs are on the other one).
pub fn build_on(
    mut table: toml::Table,
    loc: &dyn Locator,
    runner: Box<dyn crate::workload::exec::Runner>,
) -> anyhow::Result<Box<dyn Workload>> {
    argv_as_strings(&mut table);
    let cfg: ExecConfig = decode(table, KEYS, loc)?;
    Ok(Box::new(ExecWorkload::new(cfg).on(runner)))
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_declared_keys_are_what_the_config_decodes() {
        let mut declared: Vec<String> = super::KEYS.iter().map(|k| k.name.to_string()).collect();
        declared.sort();
        assert_eq!(declared, super::super::spec::serde_fields::<crate::workload::exec::ExecConfig>());
    }

    #[test]
    fn the_adapter_key_names_every_adapter() {
        let doc = super::KEYS.iter().find(|k| k.name == "adapter").map(|k| k.doc).unwrap_or("");
        for a in crate::workload::exec::adapters::all() {
            assert!(doc.contains(&format!("`{}`", a.name())), "{} missing from: {doc}", a.name());
        }
    }
}
