//! The built-in `cpu` and `mem` workloads (`perflab load`, `type = "cpu"|"mem"`): bad input is one
//! line (with `file:line:col` in a plan) and exit code 2; the JSON carries its schema and the figures
//! it documents; verify finds an injected error and names its pattern;
//! the pointer chase sees memory slower than the L1 cache; the sequential read and write methods count
//! exactly passes × block bytes.

use crate::common::{one_line_exit_2, stdout_json};
use std::process::{Command, Output};

use crate::common::write_plan;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

fn load(args: &[&str]) -> Output {
    Command::new(BIN).arg("load").args(args).output().expect("perflab load")
}

fn json(out: &Output) -> serde_json::Value {
    stdout_json(out)
}

/// `perflab load --help` and `perflab --help` list every built-in load the command has.
#[test]
fn the_help_lists_every_load_the_command_has() {
    let want = "Load the machine with a built-in workload (cpu, mem, disk, net, oltp)";
    let help = load(&["--help"]);
    let text = String::from_utf8_lossy(&help.stdout);
    assert_eq!(help.status.code(), Some(0));
    assert_eq!(text.lines().next(), Some(want), "{text}");
    for kind in ["cpu", "mem", "disk", "net", "oltp"] {
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(&format!("{kind} "))),
            "{kind}: {text}"
        );
    }
    let top = Command::new(BIN).arg("--help").output().expect("perflab --help");
    let text = String::from_utf8_lossy(&top.stdout);
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") == format!("load {want}")),
        "{text}"
    );
}

#[test]
fn bad_input_on_the_command_line_is_one_line_and_exit_2() {
    one_line_exit_2(&load(&["cpu", "-l", "0", "-d", "1s"]), "load must be from 1 to 100");
    one_line_exit_2(&load(&["cpu", "-l", "150", "-d", "1s"]), "not 150");
    let many = (std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) + 1).to_string();
    one_line_exit_2(&load(&["cpu", "-w", &many, "-d", "1s"]), "--oversubscribe");
    one_line_exit_2(&load(&["cpu", "-m", "fft", "-d", "1s"]), "method \"fft\"");
    one_line_exit_2(&load(&["mem", "touch", "-s", "lots"]), "size \"lots\"");
    one_line_exit_2(&load(&["mem", "touch", "-s", "1000T"]), "more than the");
    one_line_exit_2(&load(&["mem", "swap"]), "mode \"swap\"");
    one_line_exit_2(&load(&["mem", "bandwidth", "--method", "sum"]), "method \"sum\"");
    one_line_exit_2(&load(&["mem", "latency", "--method", "read"]), "method is for");
}

#[test]
fn bad_input_in_a_plan_is_one_line_at_its_key_and_exit_2() {
    let tmp = tempfile::tempdir().expect("tmp");
    let phases = "[phases]\nbaseline = \"0s\"\nwarmup = \"0s\"\nload = \"1s\"\nrecovery = \"0s\"\n";
    for (table, want) in [
        ("type = \"cpu\"\nload = 150\n", ":7:1: load must be from 1 to 100"),
        ("type = \"cpu\"\nload = 0\n", ":7:1: load must be from 1 to 100"),
        ("type = \"cpu\"\nworkers = 4096\n", ":7:1: workers = 4096 is more than the"),
        ("type = \"mem\"\nmode = \"touch\"\nsize = \"lots\"\n", ":8:1: size \"lots\""),
        (
            "type = \"mem\"\nmode = \"latency\"\nverify = true\n",
            ":8:1: verify needs mode = \"touch\"",
        ),
    ] {
        let plan = write_plan(tmp.path(), &format!("name = \"bad\"\n\n\n\n[workload]\n{table}{phases}"));
        let out = Command::new(BIN).args(["run", "--dry-run"]).arg(&plan).output().expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{table}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(want), "{table}: want {want}, got {err}");
    }
}

#[test]
fn a_dry_run_describes_the_built_ins_and_their_primary_figures() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(
        tmp.path(),
        "name = \"d\"\n[workload]\ntype = \"cpu\"\nworkers = 1\nload = 50\nmethod = \"hash\"\n\
         [phases]\nbaseline = \"0s\"\nwarmup = \"0s\"\nload = \"1s\"\nrecovery = \"0s\"\n",
    );
    let out = Command::new(BIN).args(["run", "--dry-run"]).arg(&plan).output().expect("dry run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        text.contains("cpu: 1 worker(s) on ") && text.contains("methods v1 · workers = 1, load = 50, method = \"hash\" · "),
        "{text}"
    );
    assert!(
        text.contains("primary: throughput ops_per_s, latency op_p99_us (from the merged `op` histogram)"),
        "{text}"
    );
}

#[test]
fn the_cpu_json_says_asked_achieved_and_the_work_per_method() {
    let out = load(&["cpu", "-w", "1", "-d", "1s", "--json", "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let j = json(&out);
    assert_eq!(j["schema"], "perflab.load.cpu/1");
    assert_eq!(j["methods_version"], 1);
    assert_eq!(j["load"]["asked_pct"], 100.0);
    assert_eq!(j["load"]["per_worker"].as_array().map(Vec::len), Some(1));
    let ops = j["work"]["ops"].as_u64().expect("ops");
    assert!(ops > 0);
    let methods = j["work"]["methods"].as_array().expect("methods");
    let names: Vec<&str> = methods.iter().filter_map(|m| m["name"].as_str()).collect();
    assert_eq!(names, ["int", "float", "matrix", "hash"], "mix runs every method");
    let per_method: u64 = methods.iter().filter_map(|m| m["ops"].as_u64()).sum();
    assert_eq!(per_method, ops, "every operation is counted under its method");
    // The achieved load is a fraction of a CPU: never more than 100 % (plus the clock's grain).
    let achieved = j["load"]["achieved"]["mean_pct"].as_f64().expect("achieved");
    assert!(achieved > 0.0 && achieved <= 101.0, "{achieved}");
}

#[test]
fn verify_passes_sound_memory_and_names_the_pattern_of_an_injected_error() {
    let out = load(&["mem", "touch", "-s", "1M", "--verify", "-d", "5s", "-q", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let j = json(&out);
    let pats = j["touch"]["patterns"].as_array().expect("patterns").clone();
    assert_eq!(pats.len(), 18, "memtester's tests");
    assert!(pats.iter().all(|p| p["ok"] == true), "{pats:?}");
    let out = Command::new(BIN)
        .args(["load", "mem", "touch", "-s", "1M", "--verify", "-d", "5s", "-q", "--json"])
        .env("PERFLAB_MEM_INJECT_ERROR", "checkerboard")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1), "a failed pattern exits 1");
    let j = json(&out);
    let pats = j["touch"]["patterns"].as_array().expect("patterns").clone();
    let failed: Vec<&str> = pats
        .iter()
        .filter(|p| p["ok"] == false)
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(failed, ["checkerboard"], "{pats:?}");
    let text = Command::new(BIN)
        .args(["load", "mem", "touch", "-s", "1M", "--verify", "-d", "5s", "-q"])
        .env("PERFLAB_MEM_INJECT_ERROR", "bit_flip")
        .output()
        .expect("run");
    let summary = String::from_utf8_lossy(&text.stdout);
    assert!(
        summary.contains("bit_flip") && summary.contains("FAILED: 1 word(s) differ"),
        "{summary}"
    );
}

#[test]
fn bandwidth_reports_streams_kernels_and_latency_sees_memory_slower_than_l1() {
    let out = load(&["mem", "bandwidth", "-s", "8M", "-d", "1s", "-q", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let j = json(&out);
    assert_eq!(j["schema"], "perflab.load.mem/1");
    assert_eq!(j["bandwidth"]["array_bytes"], 8 << 20);
    assert!(j["bandwidth"]["iterations"].as_u64().unwrap() >= 1);
    for k in ["copy", "scale", "add", "triad"] {
        assert!(j["bandwidth"]["best_mib_per_s"][k].as_f64().unwrap() > 0.0, "{k}");
    }
    let ns = |size: &str| {
        let out = load(&["mem", "latency", "-s", size, "--warmup", "3s", "-d", "1s", "-q", "--json"]);
        assert_eq!(out.status.code(), Some(0));
        json(&out)["latency"]["ns_per_access"].as_f64().expect("ns")
    };
    let (l1, dram) = (ns("16K"), ns("256M"));
    assert!(
        dram > 3.0 * l1,
        "a 256 MiB chase ({dram:.1} ns) is not slower than a 16 KiB one ({l1:.1} ns)"
    );
}

/// bandwidth --method read/write: one operation is one pass over the block, and the bytes counted
/// are exactly the passes × the block's size, over the time the passes took.
#[test]
fn the_sequential_methods_count_passes_times_the_block_exactly() {
    for method in ["read", "write"] {
        let out = load(&[
            "mem",
            "bandwidth",
            "--method",
            method,
            "-s",
            "4M",
            "-w",
            "1",
            "-d",
            "1s",
            "-q",
            "--json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let j = json(&out);
        let b = &j["bandwidth"];
        assert_eq!(b["method"], method);
        assert_eq!(b["block_bytes"], 4 << 20);
        let passes = b["passes"].as_u64().expect("passes");
        assert!(passes >= 2, "{method}: {passes} pass(es)");
        assert_eq!(b["bytes"].as_u64(), Some(passes * (4 << 20)), "{method}");
        let rate = b[format!("{method}_mib_per_s")].as_f64().expect("rate");
        assert!(rate > 0.0, "{method}: {rate}");
        // One worker: the rate is its bytes over the time its passes took.
        let mean = b["bytes"].as_f64().unwrap() / b["seconds"].as_f64().unwrap() / (1 << 20) as f64;
        assert!((rate - mean).abs() <= mean * 1e-9, "{method}: {rate} vs {mean}");
        assert!(j["ops"].as_u64().unwrap().abs_diff(passes) <= 1, "one operation per pass");
        assert!(b.get("best_mib_per_s").is_none(), "no STREAM kernels in method {method}");
    }
}
