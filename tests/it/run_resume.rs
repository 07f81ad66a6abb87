//! `perflab run --resume DIR` without the plan file: the run directory keeps its plan, so an
//! interrupted run is completed from it alone, every trial stored exactly once. A plan whose
//! secrets were taken out of the store needs its file again (one line, exit 2). `--retry-failed`
//! runs the failed trials of a run again.

use perflab::store::{RunStatus, Store};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::{free_port, only_run_dir, write_plan};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

/// 2 points × 3 repetitions against `perflab serve`, short phases.
fn serve_plan(port: u16) -> String {
    format!(
        r#"name = "resume-alone"
repetitions = 3

[target]
command = ["{BIN}", "serve", "--port", "{port}", "--model", "${{model}}", "--workers", "2"]
ready = {{ tcp = "127.0.0.1:{port}", timeout = "10s" }}

[workload]
type = "http"
url = "http://127.0.0.1:{port}/bytes/100"
connections = 2

[matrix]
model = ["pool", "event-loop"]

[phases]
baseline = "200ms"
warmup = "100ms"
load = "500ms"
recovery = "200ms"
interval = "100ms"
"#
    )
}

#[test]
fn sigint_then_resume_without_the_plan_file_stores_every_trial_exactly_once() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(tmp.path(), &serve_plan(free_port()));
    let runs = tmp.path().join("runs");
    let child = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // Wait (bounded) until two trials are stored, then interrupt.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut stored = 0;
    while Instant::now() < deadline && stored < 2 {
        std::thread::sleep(Duration::from_millis(100));
        if let Ok(Some(Ok(e))) = std::fs::read_dir(&runs).map(|mut d| d.next()) {
            if let Ok(s) = Store::open(e.path()) {
                stored = s.trial_ids().map(|v| v.len()).unwrap_or(0);
            }
        }
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT).expect("SIGINT");
    let out = child.wait_with_output().expect("wait");
    assert!(stored >= 2, "two trials were stored before the interrupt");
    assert_eq!(
        out.status.code(),
        Some(130),
        "interrupted: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = only_run_dir(&runs);
    // The hint names the run directory alone.
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!("resume with: perflab run --resume {}\n", dir.display())),
        "{said}"
    );
    let store = Store::open(&dir).expect("store");
    assert_eq!(store.run().expect("run").status, RunStatus::Interrupted);
    let kept = store.trial_ids().expect("ids").len();
    assert!((2..6).contains(&kept), "finished trials kept: {kept}");
    drop(store);

    // The plan file is gone: the run's own copy is all there is.
    std::fs::remove_file(&plan).expect("remove the plan file");
    let out = Command::new(BIN)
        .args(["run", "--quiet", "--resume"])
        .arg(&dir)
        .output()
        .expect("resume");
    assert_eq!(out.status.code(), Some(0), "resume: {}", String::from_utf8_lossy(&out.stderr));

    let store = Store::open(&dir).expect("store");
    assert_eq!(store.run().expect("run").status, RunStatus::Complete);
    let trials = store.trials().expect("trials");
    let ids: Vec<usize> = trials.iter().map(|t| t.id).collect();
    assert_eq!(ids, (0..6).collect::<Vec<_>>(), "every trial id once");
    let mut runs_of: Vec<(usize, u32)> = trials.iter().map(|t| (t.point, t.repetition)).collect();
    runs_of.sort();
    assert_eq!(
        runs_of,
        [(0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (1, 3)],
        "each point × repetition once"
    );
    assert!(
        trials.iter().all(|t| t.ok()),
        "{:?}",
        trials.iter().map(|t| &t.failure).collect::<Vec<_>>()
    );
    let points = store.points().expect("points");
    assert!(points.iter().all(|p| p.repetitions == 3), "{points:?}");
}

#[test]
fn a_plan_whose_credentials_were_redacted_needs_its_file_to_resume() {
    const PHASES: &str = "[phases]\nbaseline = \"0s\"\nwarmup = \"0s\"\nload = \"50ms\"\nrecovery = \"0s\"\ninterval = \"100ms\"\n";
    needs_its_file(
        &format!(
            "name = \"secret\"\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\nenv = {{ AUTHORIZATION = \"Bearer s3cret\" }}\n{PHASES}"
        ),
        1,
    );
    // A variable marked secret, fed by two matrix values: the copy reads `[redacted-1]` and
    // `[redacted-2]`, and the store's own flag says the plan had secrets.
    needs_its_file(
        &format!(
            "name = \"secret\"\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\nenv = {{ TOKEN = \"${{tok}}\" }}\n\
             secrets = [\"TOKEN\"]\n[matrix]\ntok = [\"a-s3cret\", \"b-s3cret\"]\n{PHASES}"
        ),
        2,
    );
}

/// Run `body`; resuming from the directory alone is refused in one line (exit 2) that shows no
/// secret; with the plan file it works as before.
fn needs_its_file(body: &str, trials: usize) {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(tmp.path(), body);
    let runs = tmp.path().join("runs");
    let out = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let dir = only_run_dir(&runs);
    let alone = Command::new(BIN)
        .args(["run", "--quiet", "--resume"])
        .arg(&dir)
        .output()
        .expect("resume");
    let err = String::from_utf8_lossy(&alone.stderr);
    assert_eq!(alone.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("give the plan file too"), "{err}");
    assert!(!err.contains("s3cret"), "{err}");
    // With the file, as before.
    let with = Command::new(BIN)
        .args(["run", "--quiet", "--resume"])
        .arg(&dir)
        .arg(&plan)
        .output()
        .expect("resume");
    assert_eq!(with.status.code(), Some(0), "{}", String::from_utf8_lossy(&with.stderr));
    let ids = Store::open(&dir).expect("store").trial_ids().expect("ids");
    assert_eq!(ids, (0..trials).collect::<Vec<_>>());
}

#[test]
fn neither_a_plan_nor_a_run_directory_is_one_line_and_exit_2() {
    let tmp = tempfile::tempdir().expect("tmp");
    let out = Command::new(BIN).args(["run", "--quiet"]).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("<PLAN>"), "names what is missing: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let out = Command::new(BIN)
        .args(["run", "--quiet", "--resume"])
        .arg(tmp.path())
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not a perflab run directory"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// A run whose trials all failed (the command's file was missing), then the cause fixed: `--resume`
/// alone runs nothing and says why; `--resume DIR --retry-failed` runs the failed trials again,
/// under the same ids, and the run is complete with every trial ok.
#[test]
fn retry_failed_runs_the_failed_trials_again() {
    let tmp = tempfile::tempdir().expect("tmp");
    let flag = tmp.path().join("ready");
    let plan = write_plan(
        tmp.path(),
        &format!(
            "name = \"retry\"\nrepetitions = 2\n[workload]\ntype = \"exec\"\ncommand = [\"test\", \"-e\", \"{}\"]\n\
             [matrix]\nn = [1, 2]\n[phases]\nbaseline = \"0s\"\nwarmup = \"0s\"\nload = \"50ms\"\nrecovery = \"0s\"\ninterval = \"100ms\"\n",
            flag.display()
        ),
    );
    let runs = tmp.path().join("runs");
    let run = |args: &[&str]| Command::new(BIN).arg("run").args(args).output().expect("perflab run");
    let runs_arg = runs.display().to_string();
    let first = run(&["--quiet", "--runs-dir", &runs_arg, plan.to_str().expect("utf-8")]);
    assert_eq!(first.status.code(), Some(1), "{}", String::from_utf8_lossy(&first.stderr));
    let dir = only_run_dir(&runs);
    let failed = |dir: &std::path::Path| {
        let trials = Store::open(dir).expect("store").trials().expect("trials");
        (trials.len(), trials.iter().filter(|t| !t.ok()).count())
    };
    assert_eq!(failed(&dir), (4, 4), "every trial failed");
    std::fs::write(&flag, "").expect("the cause fixed");

    let dir_arg = dir.display().to_string();
    let again = run(&["--resume", &dir_arg]);
    let err = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(1), "{err}");
    assert_eq!(failed(&dir), (4, 4), "--resume alone runs nothing again");
    assert!(err.contains("4 stored trial(s) failed") && err.contains("--retry-failed"), "{err}");

    let retried = run(&["--resume", &dir_arg, "--retry-failed"]);
    let err = String::from_utf8_lossy(&retried.stderr);
    assert_eq!(retried.status.code(), Some(0), "{err}");
    assert!(
        err.contains("0 trial(s) already stored, 4 to run (4 that failed, run again)"),
        "{err}"
    );
    assert_eq!(failed(&dir), (4, 0), "the failed trials ran again and passed");
    let store = Store::open(&dir).expect("store");
    assert_eq!(store.trial_ids().expect("ids"), vec![0, 1, 2, 3]);
    assert_eq!(store.run().expect("run").status, RunStatus::Complete);

    // --retry-failed without --resume is a usage error.
    let alone = run(&["--retry-failed", plan.to_str().expect("utf-8")]);
    assert_eq!(alone.status.code(), Some(2), "{}", String::from_utf8_lossy(&alone.stderr));
}
