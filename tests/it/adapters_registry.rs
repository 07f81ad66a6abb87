//! Choosing the adapter (program name through wrappers, explicit name, "none") and the preflight
//! message naming the Debian package of a missing tool.

use perflab::workload::exec::adapters::{all, by_name, select, tool_program};
use perflab::workload::exec::{preflight, ExecConfig, ExecWorkload};
use perflab::workload::Workload;

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

fn detected(cmd: &str) -> Option<&'static str> {
    select(None, &words(cmd)).map(|a| a.name())
}

#[test]
fn detected_from_the_program_name() {
    assert_eq!(detected("fio --name=x --output-format=json"), Some("fio"));
    assert_eq!(detected("/usr/bin/stress-ng --cpu 2"), Some("stress-ng"));
    assert_eq!(detected("sysbench oltp_read_only --threads=4 run"), Some("sysbench"));
    assert_eq!(detected("/usr/lib/postgresql/15/bin/pgbench -S -T 5"), Some("pgbench"));
    assert_eq!(detected("ab -n 100 http://127.0.0.1:1/"), Some("ab"));
    assert_eq!(detected("wrk --latency http://127.0.0.1:1/"), Some("wrk"));
    assert_eq!(detected("iperf3 -c 127.0.0.1 -J"), Some("iperf3"));
    assert_eq!(detected("memtester 16M 1"), Some("memtester"));
    assert_eq!(detected("sleep 1"), None);
}

#[test]
fn detected_through_wrappers() {
    assert_eq!(tool_program(&words("taskset -c 0 fio x")).as_deref(), Some("fio"));
    assert_eq!(tool_program(&words("taskset 0x3 wrk x")).as_deref(), Some("wrk"));
    assert_eq!(tool_program(&words("nice -n 5 stress-ng --cpu 1")).as_deref(), Some("stress-ng"));
    assert_eq!(tool_program(&words("env A=1 B=2 sysbench cpu run")).as_deref(), Some("sysbench"));
    assert_eq!(tool_program(&words("A=1 iperf3 -c x")).as_deref(), Some("iperf3"));
    assert_eq!(tool_program(&words("timeout -s INT 10 ab -n 1 u")).as_deref(), Some("ab"));
    assert_eq!(tool_program(&words("numactl -C 0 --membind=0 fio x")).as_deref(), Some("fio"));
    assert_eq!(tool_program(&words("chrt -f 10 memtester 1M")).as_deref(), Some("memtester"));
}

#[test]
fn named_explicitly_or_none() {
    assert_eq!(select(Some("fio"), &words("my-fio-wrapper.sh")).map(|a| a.name()), Some("fio"));
    assert!(select(Some("none"), &words("fio --name=x")).is_none());
    let mut cfg = ExecConfig::argv(["fio", "--name=x"]);
    assert_eq!(ExecWorkload::new(cfg.clone()).name(), "exec:fio");
    cfg.adapter = Some("none".into());
    assert_eq!(ExecWorkload::new(cfg).name(), "exec");
    assert_eq!(ExecWorkload::new(ExecConfig::argv(["sleep", "1"])).name(), "exec");
}

#[test]
fn every_adapter_names_its_package_and_programs() {
    let names: Vec<&str> = all().iter().map(|a| a.name()).collect();
    assert_eq!(
        names,
        ["stress-ng", "memtester", "fio", "iperf3", "sysbench", "pgbench", "ab", "wrk"]
    );
    assert_eq!(by_name("ab").map(|a| a.debian_package()), Some("apache2-utils"));
    assert_eq!(by_name("pgbench").map(|a| a.debian_package()), Some("postgresql"));
    for a in all() {
        assert!(!a.programs().is_empty() && !a.debian_package().is_empty());
    }
}

#[test]
fn a_missing_tool_names_its_debian_package() {
    // An empty PATH for the command makes every tool missing.
    for (prog, pkg) in [
        ("fio", "fio"),
        ("stress-ng", "stress-ng"),
        ("ab", "apache2-utils"),
        ("pgbench", "postgresql"),
    ] {
        let mut cfg = ExecConfig::argv([prog, "-x"]);
        cfg.env.insert("PATH".into(), "/nonexistent".into());
        let e = preflight(&cfg).expect_err("missing");
        assert_eq!(e.to_string(), format!("{prog} not found on PATH (Debian package: {pkg})"));
        assert_eq!(perflab::error::exit_code(&e), 2);
    }
    let mut cfg = ExecConfig::shell("taskset -c 0 wrk http://127.0.0.1:1/");
    cfg.env.insert("PATH".into(), "/usr/bin:/bin".into());
    if std::path::Path::new("/usr/bin/taskset").exists() && !std::path::Path::new("/usr/bin/wrk").exists() {
        assert_eq!(
            preflight(&cfg).expect_err("missing").to_string(),
            "wrk not found on PATH (Debian package: wrk)"
        );
    }
}
