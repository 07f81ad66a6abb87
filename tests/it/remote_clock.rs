//! The remote host's clock over the real sshd of `remote_ssh` (called from its one test, which owns
//! the server), with the agent's testing aids: a skew changed between trials is followed by the
//! offsets stored per trial and by the samples' placement; a matrix over two host names runs each
//! point on its own host and warns about the one whose clock answers are held back.

use crate::remote_ssh::Server;
use perflab::store::Store;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

/// Write `body` as a plan in `dir`, run it into the server's temp dir under `runs`, expect success;
/// the run directory.
fn run_ok(srv: &Server, dir: &Path, body: &str, runs: &str) -> PathBuf {
    let runs = srv.dir.path().join(runs);
    let out = Command::new(BIN)
        .args(["run", "-q", "--runs-dir"])
        .arg(&runs)
        .arg(crate::common::write_plan(dir, body))
        .output()
        .expect("perflab run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    crate::common::only_run_dir(&runs)
}

/// A wrapper that starts this perflab with the agent's testing aids set (`env`: `NAME=value`
/// words), for a host's `perflab` key.
fn agent_wrapper(srv: &Server, name: &str, env: &str) -> String {
    let path = srv.dir.path().join(format!("agent-{name}.sh"));
    std::fs::write(&path, format!("#!/bin/sh\n{env} exec {BIN} \"$@\"\n")).expect("wrapper");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.display().to_string()
}

/// The run's clock measurements: (trial, host, offset s, uncertainty s).
fn stored_clocks(store: &Store) -> Vec<(usize, String, f64, f64)> {
    let all: Vec<(usize, serde_json::Value)> = store.clocks().expect("clocks");
    all.into_iter()
        .map(|(t, m)| {
            let num = |k: &str| m[k].as_f64().unwrap_or(f64::NAN);
            (
                t,
                m["host"].as_str().unwrap_or_default().to_string(),
                num("offset_s"),
                num("uncertainty_s"),
            )
        })
        .collect()
}

/// The host's clock changed between trials (the target of each trial writes a larger skew into
/// the file the agent reads its clock from: 1250 ms in trial 0, 2500 in 1, 3750 in 2): every
/// offset stored with a trial is within its uncertainty of that trial's skew, the host's samples
/// land on this machine's sampling grid (with a stale offset they would be 50 ms off it), and the
/// report's run facts give the range of the offsets measured.
pub fn clock_changed_between_trials(srv: &Server, key: &Path) {
    let dir = srv.dir.path().join("plan-clock");
    std::fs::create_dir_all(&dir).expect("plan dir");
    let (skew, count) = (dir.join("skew_ms"), dir.join("count"));
    let wrapper = agent_wrapper(srv, "skew-file", &format!("PERFLAB_AGENT_CLOCK_SKEW_FILE={}", skew.display()));
    let body = format!(
        r#"name = "remote-clock"
repetitions = 3

[hosts]
{host}

[target]
host = "server"
command = "echo x >> {count}; echo $(( $(wc -l < {count}) * 1250 )) > {skew}; exec sleep 60"
ready = {{ delay = "300ms" }}
stop = {{ signal = "SIGTERM", grace = "2s" }}

[workload]
type = "exec"
command = ["sleep", "0.6"]

[phases]
baseline = "300ms"
warmup = 0
recovery = "300ms"
interval = "100ms"
"#,
        host = srv.toml_host("server", key, &wrapper),
        count = count.display(),
        skew = skew.display(),
    );
    let run = run_ok(srv, &dir, &body, "runs-clock");
    let store = Store::open(&run).expect("store");
    let trials = store.trials().expect("trials");
    assert_eq!(trials.len(), 3);
    let clocks = stored_clocks(&store);
    for (i, t) in trials.iter().enumerate() {
        assert!(t.ok(), "trial {i}: {:?}", t.failure);
        let want = 1.25 * (i + 1) as f64;
        let mine: Vec<_> = clocks.iter().filter(|c| c.0 == t.id && c.1 == "server").collect();
        assert!(mine.len() >= 2, "measured at the trial's start and end: {clocks:?}");
        for (_, _, off, unc) in &mine {
            assert!(
                (off - want).abs() <= unc + 1e-4,
                "trial {i}: {off} s ± {unc} s, the skew is {want} s"
            );
        }
        // On the grid: each sample's distance to the nearest multiple of the interval.
        let samples = store.samples_on(t.id, "server").expect("the server's samples");
        let mut d: Vec<f64> = samples
            .iter()
            .map(|s| {
                let r = s.unix_s.rem_euclid(0.1);
                r.min(0.1 - r)
            })
            .collect();
        assert!(d.len() >= 5, "trial {i}: {} samples of the server", d.len());
        d.sort_by(f64::total_cmp);
        let median = d[d.len() / 2];
        assert!(median < 0.02, "trial {i}: the server's samples are {median} s off the grid");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("report.json")).expect("report.json")).expect("json");
    let facts = json["hosts"]["facts"].as_array().expect("hosts.facts");
    let server = facts.iter().find(|f| f["name"] == "server").expect("the server's facts");
    let ms = |k: &str| server[k].as_f64().unwrap_or(f64::NAN);
    // Each offset is right within its own measurement's uncertainty (on a busy machine, a
    // round trip of a few ms gives more than 1 ms).
    let within = ms("worst_uncertainty_ms") + 0.1;
    assert!((ms("offset_min_ms") - 1250.0).abs() <= within, "{server}");
    assert!((ms("offset_max_ms") - 3750.0).abs() <= within, "{server}");
    assert_eq!(server["clock_measurements"].as_u64(), Some(clocks.len() as u64), "{server}");
    let md = std::fs::read_to_string(run.join("report.md")).expect("report.md");
    let row = md.lines().find(|l| l.contains("| server |")).unwrap_or_default();
    assert!(row.contains(" to +") && row.contains("at worst (6 measurements)"), "{row}");
    eprintln!("clock followed: {row}");
}

/// `[matrix] machine = ["a", "b"]` and `[target] host = "${machine}"`, `a` and `b` two names for the
/// same sshd (a `port` key and an `ssh://` destination with the port in it), `b`'s agent holding
/// its clock answers back 30 ms: both points run, each trial's target tree is stored under its own
/// host, the report lists both hosts side by side, and warns about `b`'s offset (± 15 ms or more,
/// over a tenth of the 100 ms interval), naming b's trial, and not about `a`'s.
pub fn matrix_of_hosts(srv: &Server, key: &Path) {
    let slow = agent_wrapper(srv, "slow", "PERFLAB_AGENT_CLOCK_DELAY_MS=30");
    let a = srv.toml_host("a", key, BIN);
    let b = srv
        .toml_host("b", key, &slow)
        .replace(
            &format!("ssh = \"root@{}\", port = 2216", srv.addr),
            &format!("ssh = \"ssh://root@{}:2216\"", srv.addr),
        )
        .replace("\"LogLevel=ERROR\"]", "\"LogLevel=ERROR\", \"ConnectionAttempts=2\"]");
    assert!(b.contains("ssh://") && !b.contains("port ="), "{b}");
    let body = format!(
        r#"name = "remote-matrix"

[hosts]
{a}
{b}

[matrix]
machine = ["a", "b"]

[target]
host = "${{machine}}"
command = "exec sleep 60"
ready = {{ delay = "200ms" }}
stop = {{ signal = "SIGTERM", grace = "2s" }}

[workload]
type = "exec"
command = ["sleep", "0.5"]

[phases]
baseline = "300ms"
warmup = 0
recovery = "300ms"
interval = "100ms"
"#
    );
    let dir = srv.dir.path().join("plan-matrix");
    std::fs::create_dir_all(&dir).expect("plan dir");
    let run = run_ok(srv, &dir, &body, "runs-matrix");
    let store = Store::open(&run).expect("store");
    let trials = store.trials().expect("trials");
    assert_eq!(trials.len(), 2, "both points ran");
    let tree = |id: usize, host: &str| {
        store
            .samples_on(id, host)
            .expect("samples")
            .iter()
            .filter(|s| s.values.iter().any(|(k, _)| k.starts_with("proc_target_")))
            .count()
    };
    let mut b_trial = None;
    for t in &trials {
        assert!(t.ok(), "{:?}", t.failure);
        let params: serde_json::Value = serde_json::from_str(&t.params_json).expect("params");
        let (mine, other) = match params["machine"].as_str() {
            Some("a") => ("a", "b"),
            Some("b") => {
                b_trial = Some(t.id);
                ("b", "a")
            }
            p => panic!("trial {}: machine {p:?}", t.id),
        };
        assert!(tree(t.id, mine) >= 3, "trial {}: the target's tree under `{mine}`", t.id);
        assert_eq!(tree(t.id, other), 0, "trial {}: nothing of the target under `{other}`", t.id);
    }
    let b_trial = b_trial.expect("a trial on b");
    let clocks = stored_clocks(&store);
    for (trial, host, off, unc) in &clocks {
        // Same kernel clock on both ends: the true offset is 0.
        assert!(off.abs() <= unc + 1e-4, "trial {trial} `{host}`: {off} ± {unc}");
        match host.as_str() {
            "a" => assert!(*unc < 0.010, "a's offset is precise: ± {unc} s"),
            "b" => assert!(*unc >= 0.015, "b's answers held back 30 ms: ± {unc} s"),
            h => panic!("a measurement of `{h}`"),
        }
    }
    assert!(clocks.iter().any(|c| c.0 == b_trial && c.1 == "b"), "{clocks:?}");
    let md = std::fs::read_to_string(run.join("report.md")).expect("report.md");
    let facts = md.split("## Hosts").nth(1).unwrap_or_default();
    assert!(
        facts.contains("| a |") && facts.contains("| b |"),
        "both hosts side by side:\n{facts}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("report.json")).expect("report.json")).expect("json");
    let warnings: Vec<String> = json["overview"]["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(|w| w.as_str().map(String::from))
        .collect();
    let about = |h: &str| {
        warnings
            .iter()
            .filter(|w| w.starts_with(&format!("host `{h}`")))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert!(about("a").is_empty(), "{warnings:?}");
    let wb = about("b");
    assert_eq!(wb.len(), 1, "{warnings:?}");
    let named: Vec<String> = wb[0]
        .split("in trial")
        .nth(1)
        .and_then(|t| t.split(')').next())
        .unwrap_or_default()
        .trim_start_matches('s')
        .split(',')
        .map(|t| t.trim().to_string())
        .collect();
    assert!(wb[0].contains("tenth of the sampling interval"), "{wb:?}");
    assert!(named.contains(&b_trial.to_string()), "b's trial {b_trial} named: {wb:?}");
    eprintln!("matrix of hosts: {}", wb[0]);
}
