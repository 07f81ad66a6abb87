//! Variants carrying settings: `[variant.after] n = 2` sets the matrix parameter `n` at the
//! `after` points (the stored trial shows the value ran), a plain `[workload]` key is set the same
//! way, and a key perflab does not know is a `file:line:col` error listing the keys it knows.

use perflab::plan;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

/// The plan; its command appends `ran=<n>` to `out`.
fn plan(out: &std::path::Path) -> String {
    PLAN.replace("OUT", &out.display().to_string())
}

const PLAN: &str = "name = \"tuning\"\nrepetitions = 1\n\
[workload]\ntype = \"exec\"\ncommand = [\"sh\", \"-c\", \"echo ran=${n} >> OUT\"]\ntimeout = \"20s\"\n\
[matrix]\nvariant = [\"before\", \"after\"]\nn = [1]\n\
[variant.after]\nn = 2\ntimeout = \"30s\"\n\
[phases]\nbaseline = \"0s\"\nwarmup = \"0s\"\nload = \"1s\"\nrecovery = \"0s\"\ninterval = \"200ms\"\n";

#[test]
fn a_variant_sets_a_parameter_and_a_workload_key() {
    let tmp = tempfile::tempdir().unwrap();
    let ran = tmp.path().join("ran.txt");
    let p = plan::parse_str(&plan(&ran), "plan.toml").unwrap();
    let labels: Vec<&str> = p.points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels, ["variant=before n=1", "variant=after n=2"]);
    assert_eq!(p.points[0].workload.get("timeout").and_then(|v| v.as_str()), Some("20s"));
    assert_eq!(p.points[1].workload.get("timeout").and_then(|v| v.as_str()), Some("30s"));
    // Run it: the stored trials show what ran.
    let file = tmp.path().join("plan.toml");
    std::fs::write(&file, plan(&ran)).unwrap();
    let o = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(tmp.path().join("runs"))
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let run = std::fs::read_dir(tmp.path().join("runs")).unwrap().next().unwrap().unwrap().path();
    let store = perflab::store::Store::open(&run).unwrap();
    let trials = store.trials().unwrap();
    let after = trials.iter().find(|t| t.params_json.contains("after")).expect("the after trial");
    let params: serde_json::Value = serde_json::from_str(&after.params_json).unwrap();
    assert_eq!(params["n"], 2, "{}", after.params_json);
    // The commands ran with those values.
    let text = std::fs::read_to_string(&ran).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    assert_eq!(lines, ["ran=1", "ran=2"]);
}

#[test]
fn a_key_a_variant_cannot_set_is_an_error_listing_the_known_keys() {
    let bad = PLAN.replace("n = 2\n", "n = 2\nworkers = 20\n");
    let e = plan::parse_str(&bad, "plan.toml").unwrap_err().to_string();
    assert!(e.starts_with("plan.toml:12:1:"), "{e}");
    assert!(e.contains("unknown key `workers` in [variant.after]"), "{e}");
    assert!(e.contains("the matrix parameters (n)") && e.contains("setup"), "{e}");
    assert!(e.contains("command"), "the workload's keys: {e}");
}
