//! The exec workload without adapters: a plain command's exit status, times, failures, cancel and
//! timeout (the whole process group goes), preflight and the config's keys.

use perflab::util::Cancel;
use perflab::workload::exec::{preflight, ExecConfig, ExecWorkload};
use perflab::workload::{RunSpec, Workload};
use std::time::Duration;

const SPEC: RunSpec = RunSpec {
    warmup: Duration::ZERO,
    load: Duration::from_secs(1),
};

fn run(cfg: ExecConfig) -> perflab::workload::WorkloadResult {
    ExecWorkload::new(cfg).run(SPEC, &Cancel::new(), &mut || {}).expect("runs")
}

fn value(r: &perflab::workload::WorkloadResult, name: &str) -> f64 {
    r.metric(name).unwrap_or_else(|| panic!("metric {name} in {:?}", r.metrics)).value
}

#[test]
fn a_plain_command_gives_its_wall_time_and_exit_status() {
    let mut started = 0;
    let r = ExecWorkload::new(ExecConfig::argv(["sleep", "0.3"]))
        .run(SPEC, &Cancel::new(), &mut || started += 1)
        .expect("runs");
    assert_eq!(started, 1, "the load phase starts once");
    assert_eq!(r.failure, None);
    assert_eq!(value(&r, "exit_status"), 0.0);
    assert!(value(&r, "wall_time_s") >= 0.3, "sleep 0.3 lasts at least 0.3 s: {:?}", r.metrics);
    assert!(r.metric("cpu_user_s").is_some() && r.metric("cpu_system_s").is_some());
}

#[test]
fn cpu_time_of_the_child_and_its_descendants_is_counted() {
    // A shell that runs a busy child: its CPU time reaches us through wait4's rusage.
    let r = run(ExecConfig::shell("i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"));
    assert_eq!(r.failure, None);
    let cpu = value(&r, "cpu_user_s") + value(&r, "cpu_system_s");
    assert!(cpu > 0.0, "a busy loop uses CPU: {:?}", r.metrics);
    assert!(
        cpu <= value(&r, "wall_time_s") * 1.05 + 0.02,
        "one thread cannot use more CPU than wall time"
    );
}

#[test]
fn a_non_zero_exit_fails_the_trial_with_the_tools_message() {
    let r = run(ExecConfig::shell("echo partial; echo 'it broke' >&2; exit 3"));
    assert_eq!(value(&r, "exit_status"), 3.0);
    let f = r.failure.expect("failure");
    assert!(f.contains("exit status 3") && f.ends_with("it broke"), "{f}");
    assert!(r.raw.iter().any(|l| l == "partial"), "output kept: {:?}", r.raw);
}

#[test]
fn a_timeout_kills_the_whole_group_and_fails() {
    let dir = tempfile::tempdir().expect("tmp");
    let marker = dir.path().join("survivor");
    // The grandchild would create the marker after 1.5 s if it survived the group kill.
    let mut cfg = ExecConfig::shell(format!("(sleep 1.5; touch {}) & sleep 30", marker.display()));
    cfg.timeout = Some(perflab::workload::exec::config::DurationSpec::Text("300ms".into()));
    let r = run(cfg);
    let f = r.failure.expect("timed out");
    assert!(f.contains("timed out after 300ms"), "{f}");
    std::thread::sleep(Duration::from_millis(1800));
    assert!(!marker.exists(), "no process of the group is left behind");
}

#[test]
fn cancel_stops_the_command() {
    let cancel = Cancel::new();
    let c2 = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        c2.cancel();
    });
    let r = ExecWorkload::new(ExecConfig::argv(["sleep", "30"]))
        .run(SPEC, &cancel, &mut || {})
        .expect("runs");
    assert_eq!(r.failure.as_deref(), Some("interrupted"));
    assert_eq!(value(&r, "exit_status"), 128.0 + 15.0, "ended by SIGTERM");
}

#[test]
fn warmup_command_runs_first_and_is_not_measured() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut cfg = ExecConfig::shell("test -f warm && echo measured");
    cfg.cwd = Some(dir.path().to_path_buf());
    cfg.warmup_command = Some(perflab::util::command::CommandLine::Argv(vec!["touch".into(), "warm".into()]));
    let r = run(cfg);
    assert_eq!(r.failure, None, "{:?}", r.raw);
}

#[test]
fn env_and_cwd_reach_the_command() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut cfg = ExecConfig::shell("test \"$PERFLAB_X\" = 42 && test \"$(pwd -P)\" = \"$EXPECT\"");
    cfg.env.insert("PERFLAB_X".into(), "42".into());
    let real = dir.path().canonicalize().expect("canon");
    cfg.env.insert("EXPECT".into(), real.display().to_string());
    cfg.cwd = Some(dir.path().to_path_buf());
    assert_eq!(run(cfg).failure, None);
}

#[test]
fn preflight_names_a_missing_program_as_bad_input() {
    let e = preflight(&ExecConfig::argv(["no-such-program-xyz", "-v"])).expect_err("missing");
    assert_eq!(perflab::error::exit_code(&e), 2);
    assert_eq!(e.to_string(), "`no-such-program-xyz` not found on PATH");
    let e = preflight(&ExecConfig::argv(Vec::<String>::new())).expect_err("empty");
    assert_eq!(e.to_string(), "command is empty");
    assert!(preflight(&ExecConfig::argv(["sleep", "1"])).is_ok());
    assert!(preflight(&ExecConfig::shell("cd /tmp && sleep 1")).is_ok());
    let mut bad = ExecConfig::argv(["sleep", "1"]);
    bad.adapter = Some("nosuch".into());
    assert!(preflight(&bad)
        .expect_err("adapter")
        .to_string()
        .starts_with("unknown adapter `nosuch`"));
}

#[test]
fn the_config_reads_from_toml_and_rejects_unknown_keys() {
    let t: toml::Table =
        toml::from_str("command = [\"sleep\", \"1.5\"]\ntimeout = \"10s\"\nenv = { A = \"1\" }\nadapter = \"none\"").expect("toml");
    let cfg = ExecConfig::deserialize(toml::Value::Table(t)).expect("valid");
    assert_eq!(cfg.timeout(), Ok(Duration::from_secs(10)));
    let t: toml::Table = toml::from_str("command = \"sleep 1\"\ntimeout = 2.5").expect("toml");
    assert_eq!(
        ExecConfig::deserialize(toml::Value::Table(t)).expect("valid").timeout(),
        Ok(Duration::from_millis(2500))
    );
    let t: toml::Table = toml::from_str("command = \"x\"\ncomand = 1").expect("toml");
    let e = ExecConfig::deserialize(toml::Value::Table(t)).expect_err("unknown key");
    assert!(e.to_string().contains("unknown field `comand`"), "{e}");
}

use serde::Deserialize;

#[test]
fn adapter_figures_join_the_commands_own() {
    // `cat` of a captured wrk report stands in for wrk.
    let mut cfg = ExecConfig::argv(["cat", "tests/fixtures/tools/wrk/latency.stdout"]);
    cfg.adapter = Some("wrk".into());
    let w = ExecWorkload::new(cfg);
    assert_eq!(w.name(), "exec:wrk");
    let mut w = w;
    let r = w.run(SPEC, &Cancel::new(), &mut || {}).expect("runs");
    assert_eq!(r.failure, None);
    assert_eq!(value(&r, "requests_per_s"), 128146.45);
    assert_eq!(value(&r, "exit_status"), 0.0);
    assert!(r.metric("wall_time_s").is_some());
}

#[test]
fn output_the_adapter_cannot_parse_fails_and_is_kept() {
    let mut cfg = ExecConfig::shell("echo 'something else entirely'");
    cfg.adapter = Some("wrk".into());
    let r = run(cfg);
    let f = r.failure.clone().expect("a parse failure");
    assert!(f.starts_with("wrk: "), "{f}");
    assert!(r.raw.iter().any(|l| l == "something else entirely"), "{:?}", r.raw);
    assert!(r.metric("requests_per_s").is_none(), "never a zero");
}

#[test]
fn a_previous_runs_report_file_is_never_read() {
    let dir = tempfile::tempdir().expect("tmp");
    let stale = dir.path().join("out.yaml");
    std::fs::copy("tests/fixtures/tools/stress-ng/cpu.yaml", &stale).expect("copy");
    // `true` writes no report: the stale one must not be credited to this run.
    let mut cfg = ExecConfig::argv(["true", "--yaml", "out.yaml"]);
    cfg.adapter = Some("stress-ng".into());
    cfg.cwd = Some(dir.path().to_path_buf());
    let r = run(cfg);
    let f = r.failure.clone().expect("no report this run");
    assert!(f.contains("cannot read the tool's output file"), "{f}");
    assert!(r.metric("cpu_bogo_ops").is_none());
    assert!(!stale.exists());
}

/// A plan's exact `"${n}"` substitutes a typed value: an integer in the argv list is its text.
#[test]
fn numbers_in_an_argv_list_are_arguments() {
    let cfg: ExecConfig = toml::from_str("command = [\"stress-ng\", \"--cpu\", 2, \"--cpu-load\", 90.5, \"--x\", true]").expect("decode");
    assert_eq!(
        cfg.command,
        perflab::util::command::CommandLine::Argv(
            ["stress-ng", "--cpu", "2", "--cpu-load", "90.5", "--x", "true"]
                .map(String::from)
                .to_vec()
        )
    );
    let bad: Result<ExecConfig, _> = toml::from_str("command = [\"ls\", { a = 1 }]");
    assert!(bad.is_err(), "a table is not an argument");
}
