//! `perflab run` end to end: a plan against `perflab serve`, stored trial by trial; plan errors at
//! their line; Ctrl-C and --resume; a target that dies at once; thresholds and exit codes.
//! Every run here is small and bounded (short phases, loopback only).

use perflab::store::{RunStatus, Store};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::{files_under, free_port, only_run_dir, write_plan};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");
/// A credential the plans send in Authorization and Cookie headers: no stored or reported file may hold it.
const SECRET: &str = "s3cretT0kenXyz";

fn serve_plan(port: u16, phases: &str, extra: &str) -> String {
    format!(
        r#"name = "serve-2x2"
repetitions = 2
order = "interleaved"

[target]
command = ["{BIN}", "serve", "--port", "{port}", "--model", "${{model}}", "--workers", "4"]
ready = {{ tcp = "127.0.0.1:{port}", timeout = "10s" }}
stop = {{ signal = "SIGTERM", grace = "3s" }}

[workload]
type = "http"
url = "http://127.0.0.1:{port}/bytes/${{size}}"
connections = "${{concurrency}}"
headers = {{ Authorization = "Bearer {SECRET}", Cookie = "sid={SECRET}" }}

[matrix]
model = ["pool", "event-loop"]
concurrency = [2, 4]
size = [100]

[phases]
{phases}
{extra}
"#
    )
}

const SHORT: &str = r#"baseline = "300ms"
warmup = "100ms"
load = "500ms"
recovery = "300ms"
interval = "100ms""#;

#[test]
fn a_2x2_matrix_with_2_repetitions_stores_8_trials_with_samples_in_every_phase() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(tmp.path(), &serve_plan(free_port(), SHORT, ""));
    let runs = tmp.path().join("runs");
    let out = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("run perflab");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let dir = only_run_dir(&runs);
    assert!(dir.join("plan.toml").exists(), "a copy of the plan beside the store");
    let store = Store::open(&dir).expect("open store");
    let trials = store.trials().expect("trials");
    assert_eq!(trials.len(), 8);
    assert!(
        trials.iter().all(|t| t.ok()),
        "all ok: {:?}",
        trials.iter().map(|t| &t.failure).collect::<Vec<_>>()
    );
    let mut last_end = 0.0;
    for t in &trials {
        assert!(t.started_unix <= t.ended_unix);
        assert!(t.started_unix >= last_end, "trials stored in time order");
        last_end = t.ended_unix;
        assert!(t.metric("requests_per_s").unwrap_or(0.0) > 0.0, "trial {} measured requests", t.id);
        let samples = store.samples(t.id).expect("samples");
        for phase in ["baseline", "warmup", "load", "recovery"] {
            assert!(samples.iter().any(|s| s.phase == phase), "trial {} has samples in {phase}", t.id);
        }
        let names: Vec<&str> = t.phases.iter().map(|p| p.name()).collect();
        assert_eq!(names, ["baseline", "warmup", "load", "recovery"]);
        for w in t.phases.windows(2) {
            assert!(w[0].end_s <= w[1].start_s + 1e-9, "phase boundaries in order");
        }
    }
    // Every point ran exactly its 2 repetitions.
    let points = store.points().expect("points");
    assert_eq!(points.len(), 4);
    assert!(points.iter().all(|p| p.repetitions == 2), "{points:?}");
    drop(store);

    // The run wrote its report; rebuilt from the store twice, it is byte-identical.
    assert!(dir.join("report.md").is_file() && dir.join("report.html").is_file());
    let (a, b) = (tmp.path().join("again-a"), tmp.path().join("again-b"));
    for out in [&a, &b] {
        let o = Command::new(BIN)
            .arg("report")
            .arg(&dir)
            .arg("--out")
            .arg(out)
            .output()
            .expect("report");
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let (fa, fb) = (files_under(&a), files_under(&b));
    assert!(fa.len() >= 10, "report files: {:?}", fa.iter().map(|f| &f.0).collect::<Vec<_>>());
    assert_eq!(fa, fb, "two builds of one run are byte-identical");
    // The Authorization and Cookie values are in no file of the run: store, plan copy, reports, CSV.
    for (name, bytes) in files_under(&dir).into_iter().chain(fa) {
        let found = bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes());
        assert!(!found, "{name} holds the credential");
    }
    // The copy of the plan is still TOML (see run_secrets.rs for every other way in).
    let copy = std::fs::read_to_string(dir.join("plan.toml")).expect("plan copy");
    assert!(toml::from_str::<toml::Table>(&copy).is_ok(), "{copy}");
}

#[test]
fn a_plan_error_on_line_7_is_reported_at_line_7() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(
        tmp.path(),
        "name = \"bad\"\nrepetitions = 1\n\n[workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:9/\"\nconections = 4\n",
    );
    let out = Command::new(BIN)
        .arg("run")
        .arg("--runs-dir")
        .arg(tmp.path().join("runs"))
        .arg(&plan)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains("plan.toml:7:"), "line 7 named: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(!err.contains("panicked"));
    assert!(!tmp.path().join("runs").exists() || std::fs::read_dir(tmp.path().join("runs")).map(|d| d.count()).unwrap_or(0) == 0);
}

#[test]
fn a_target_that_exits_at_once_fails_its_trial_with_its_stderr_and_the_run_goes_on() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(
        tmp.path(),
        &format!(
            r#"name = "dies"
repetitions = 2
[target]
command = "echo 'cannot open config: /nope.conf' >&2; exit 3"
ready = {{ tcp = "127.0.0.1:{}", timeout = "5s" }}
[workload]
type = "http"
url = "http://127.0.0.1:9/"
connections = 1
[phases]
{SHORT}
"#,
            free_port()
        ),
    );
    let runs = tmp.path().join("runs");
    let out = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(1),
        "a failed trial gives exit 1: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = Store::open(only_run_dir(&runs)).expect("store");
    let trials = store.trials().expect("trials");
    assert_eq!(trials.len(), 2, "the run went on after the first failure");
    for t in &trials {
        let f = t.failure.as_ref().map(|f| f.to_string()).unwrap_or_default();
        assert!(f.contains("not ready") || f.contains("exited"), "reason: {f}");
        let tail = t.stderr_tail.as_deref().unwrap_or("");
        assert!(
            tail.contains("cannot open config") || f.contains("cannot open config"),
            "stderr kept: {tail} / {f}"
        );
    }
}

fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut stack = vec![pid];
    while let Some(p) = stack.pop() {
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
                continue;
            };
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
                continue;
            };
            let ppid: u32 = rest.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
            if ppid == p {
                out.push(child);
                stack.push(child);
            }
        }
    }
    out
}

fn perflab_cgroups(tag: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![PathBuf::from("/sys/fs/cgroup")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false) && !e.file_type().map(|t| t.is_symlink()).unwrap_or(true) {
                if e.file_name().to_string_lossy().contains(tag) {
                    found.push(p.clone());
                }
                if stack.len() < 10_000 {
                    stack.push(p);
                }
            }
        }
    }
    found
}

#[test]
fn sigint_keeps_finished_trials_leaves_nothing_behind_and_resume_completes() {
    let tmp = tempfile::tempdir().expect("tmp");
    let phases = r#"baseline = "200ms"
warmup = "100ms"
load = "700ms"
recovery = "200ms"
interval = "100ms""#;
    // One variant, whose setup and teardown append to a log: Ctrl-C must run the teardown.
    let log = tmp.path().join("hooks.log");
    let hooks = format!(
        "[variant.x]\nsetup = \"echo setup >> {0}\"\nteardown = \"echo teardown >> {0}\"\n",
        log.display()
    );
    let body = serve_plan(free_port(), phases, &hooks).replace("size = [100]", "size = [100]\nvariant = [\"x\"]");
    let plan = write_plan(tmp.path(), &body);
    let runs = tmp.path().join("runs");
    let mut child = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    // Wait (bounded) until at least two trials are stored and a target is running (between
    // two trials the target may be restarting), then interrupt.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut stored = 0;
    let mut kids_before = Vec::new();
    while Instant::now() < deadline && (stored < 2 || kids_before.is_empty()) {
        std::thread::sleep(Duration::from_millis(50));
        if let Ok(Some(Ok(e))) = std::fs::read_dir(&runs).map(|mut d| d.next()) {
            if let Ok(s) = Store::open(e.path()) {
                stored = s.trial_ids().map(|v| v.len()).unwrap_or(0);
            }
        }
        if stored >= 2 {
            kids_before = children_of(pid);
        }
    }
    assert!(stored >= 2, "two trials were stored before the interrupt");
    assert!(!kids_before.is_empty(), "a target is running");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGINT).expect("SIGINT");
    let status = child.wait().expect("wait");
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    assert_eq!(status.code(), Some(130), "interrupted exit code; stderr: {err}");
    for k in kids_before {
        assert!(
            !Path::new(&format!("/proc/{k}")).exists()
                || std::fs::read_to_string(format!("/proc/{k}/stat"))
                    .map(|s| s.contains(") Z"))
                    .unwrap_or(true),
            "child {k} is gone"
        );
    }
    assert!(perflab_cgroups(&format!("perflab-{pid}-")).is_empty(), "no cgroup left behind");

    let dir = only_run_dir(&runs);
    let store = Store::open(&dir).expect("store");
    assert_eq!(store.run().expect("run").status, RunStatus::Interrupted);
    let kept = store.trial_ids().expect("ids").len();
    assert!((2..8).contains(&kept), "finished trials kept: {kept}");
    drop(store);
    let hooks_ran = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(hooks_ran, "setup\nteardown\n", "the variant's teardown ran on Ctrl-C");

    let out = Command::new(BIN)
        .args(["run", "--quiet", "--resume"])
        .arg(&dir)
        .arg(&plan)
        .output()
        .expect("resume");
    assert_eq!(out.status.code(), Some(0), "resume: {}", String::from_utf8_lossy(&out.stderr));
    let store = Store::open(&dir).expect("store");
    let ids = store.trial_ids().expect("ids");
    assert_eq!(ids.len(), 8, "resume ran only what was missing: {ids:?}");
    assert_eq!(store.run().expect("run").status, RunStatus::Complete);
}

fn threshold_plan(port: u16, rule: &str) -> String {
    format!(
        r#"name = "thresholds"
repetitions = 1
thresholds = ["{rule}"]

[target]
command = ["{BIN}", "serve", "--port", "{port}"]
ready = {{ tcp = "127.0.0.1:{port}", timeout = "10s" }}

[workload]
type = "http"
url = "http://127.0.0.1:{port}/"
connections = 2

[phases]
{SHORT}
"#
    )
}

#[test]
fn thresholds_give_exit_1_when_broken_and_0_when_held() {
    let tmp = tempfile::tempdir().expect("tmp");
    for (rule, code) in [("error_rate_pct < 1", 0), ("requests_per_s > 1000000000", 1)] {
        let plan = write_plan(tmp.path(), &threshold_plan(free_port(), rule));
        let out = Command::new(BIN)
            .args(["run", "--quiet", "--runs-dir"])
            .arg(tmp.path().join("runs"))
            .arg(&plan)
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{rule}: {err}");
        if code == 1 {
            assert!(
                format!("{}{err}", String::from_utf8_lossy(&out.stdout)).contains("requests_per_s > 1000000000"),
                "broken rule listed"
            );
        }
    }
    // For scripts: --json prints the outcome as one document, with the same exit code.
    let plan = write_plan(tmp.path(), &threshold_plan(free_port(), "requests_per_s > 1000000000"));
    let out = Command::new(BIN)
        .args(["run", "--json", "--runs-dir"])
        .arg(tmp.path().join("runs"))
        .arg(&plan)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["schema"], "perflab.run/1");
    assert_eq!(doc["exit_code"], 1);
    assert_eq!(doc["status"], "complete");
    let broken = doc["thresholds_failed"][0].as_str().unwrap_or("");
    assert!(broken.starts_with("requests_per_s > 1000000000 at "), "{doc}");
    assert!(doc["reports"].as_array().is_some_and(|r| !r.is_empty()), "{doc}");
}

#[test]
fn dry_run_lists_the_trials_in_the_order_a_real_run_follows() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(
        tmp.path(),
        &serve_plan(free_port(), SHORT, "").replace("order = \"interleaved\"", "order = \"shuffled\"\nseed = 7"),
    );
    let a = Command::new(BIN).args(["run", "--dry-run"]).arg(&plan).output().expect("dry run");
    let b = Command::new(BIN).args(["run", "--dry-run"]).arg(&plan).output().expect("dry run");
    assert_eq!(a.status.code(), Some(0), "{}", String::from_utf8_lossy(&a.stderr));
    assert_eq!(a.stdout, b.stdout, "same seed, same order");
    let text = String::from_utf8_lossy(&a.stdout);
    let trial_lines = text.lines().filter(|l| l.contains(". point ") && l.contains("concurrency="));
    assert_eq!(trial_lines.count(), 8, "8 trials listed:\n{text}");
    // And once per point, what its workload runs.
    let described = text
        .lines()
        .filter(|l| l.starts_with("point ") && l.contains(": http: ") && l.contains("url = \"http://127.0.0.1:"));
    assert_eq!(described.count(), 4, "4 points described:\n{text}");
    assert!(!tmp.path().join("runs").exists(), "a dry run measures nothing");
}

#[test]
fn with_cpus_1_a_busy_loop_target_uses_at_most_1_1_cores() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(
        tmp.path(),
        r#"name = "pinned"
repetitions = 1
[target]
command = "yes > /dev/null & yes > /dev/null & wait"
ready = { delay = "200ms" }
cpus = 1
[workload]
type = "exec"
command = ["sleep", "1.5"]
[phases]
baseline = "300ms"
warmup = "0s"
load = "1.5s"
recovery = "200ms"
interval = "250ms"
"#,
    );
    let runs = tmp.path().join("runs");
    let out = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    let store = Store::open(only_run_dir(&runs)).expect("store");
    let trials = store.trials().expect("trials");
    let t = &trials[0];
    // The target is started inside its limits; where the machine offers neither cgroups nor
    // sched_setaffinity, the trial fails naming that, and this test says so instead of passing.
    let failure = t.failure.as_ref().map(|f| f.to_string()).unwrap_or_default();
    if failure.contains("did not start") && ["affinity", "cgroup", "cpuset"].iter().any(|w| failure.contains(w)) {
        crate::common::skip_unless_required(&format!("neither cgroups nor affinity can limit the target here: {failure}"));
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{err} / {failure}");
    let mechanism = t.limit_mechanism.as_deref().unwrap_or("none");
    assert_ne!(mechanism, "none", "a mechanism was used and stored");
    // The proof read back from the target: one CPU allowed.
    let proof = t.limit_proof.as_deref().unwrap_or("");
    let allowed = proof
        .split("Cpus_allowed_list:")
        .nth(1)
        .and_then(|r| r.split(';').next())
        .map(str::trim)
        .unwrap_or("");
    assert!(
        !allowed.is_empty() && allowed.chars().all(|c| c.is_ascii_digit()),
        "one CPU in the proof: {proof:?}"
    );
    let samples = store.samples(t.id).expect("samples");
    let load: Vec<f64> = samples
        .iter()
        .filter(|s| s.phase == "load")
        .filter_map(|s| s.values.iter().find(|(k, _)| k == "proc_target_cpu_pct").map(|(_, v)| *v))
        .collect();
    assert!(load.len() >= 3, "target CPU sampled during load: {load:?}");
    let mean = load.iter().sum::<f64>() / load.len() as f64;
    assert!(
        mean <= 110.0,
        "two busy loops limited to one CPU use at most 1.1 cores: {mean:.1} % ({load:?})"
    );
}

#[test]
fn a_kept_target_restarts_only_when_its_configuration_changes() {
    let tmp = tempfile::tempdir().expect("tmp");
    let port = free_port();
    let log = tmp.path().join("starts.log");
    // `model` changes the target; `concurrency` only the workload: 4 points, 2 target configurations.
    let body = format!(
        r#"name = "kept"
order = "sequential"

[target]
command = "echo start ${{model}} >> {log}; exec {BIN} serve --port {port} --model ${{model}} --workers 2"
ready = {{ tcp = "127.0.0.1:{port}", timeout = "10s" }}
restart = "keep"

[workload]
type = "http"
url = "http://127.0.0.1:{port}/bytes/100"
connections = "${{concurrency}}"

[matrix]
model = ["pool", "event-loop"]
concurrency = [1, 2]

[phases]
{SHORT}
"#,
        log = log.display()
    );
    let plan = write_plan(tmp.path(), &body);
    let runs = tmp.path().join("runs");
    let out = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("run perflab");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let trials = Store::open(only_run_dir(&runs)).expect("store").trials().expect("trials");
    assert_eq!(trials.len(), 4);
    assert!(
        trials.iter().all(|t| t.ok()),
        "{:?}",
        trials.iter().map(|t| &t.failure).collect::<Vec<_>>()
    );
    let starts = std::fs::read_to_string(&log).expect("the target logged its starts");
    assert_eq!(starts, "start pool\nstart event-loop\n", "one start per target configuration");
}
