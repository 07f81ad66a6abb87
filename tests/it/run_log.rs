//! `perflab run` with stderr a log file (CI): no bar to redraw, one line per finished trial: trial
//! i/N, the point, its status, its headline figure, the time elapsed and the ETA.

use std::process::Command;

use crate::common::{free_port, write_plan};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

#[test]
fn a_run_logged_to_a_file_says_each_finished_trial_on_one_line() {
    let tmp = tempfile::tempdir().expect("tmp");
    let port = free_port();
    let plan = write_plan(
        tmp.path(),
        &format!(
            r#"name = "logged"
repetitions = 2

[target]
command = ["{BIN}", "serve", "--port", "{port}", "--model", "pool", "--workers", "2"]
ready = {{ tcp = "127.0.0.1:{port}", timeout = "10s" }}

[workload]
type = "http"
url = "http://127.0.0.1:{port}/bytes/100"
connections = "${{connections}}"

[matrix]
connections = [1, 2]

[phases]
baseline = "100ms"
warmup = "0s"
load = "400ms"
recovery = "100ms"
interval = "100ms"
"#
        ),
    );
    // stderr into a file, as a CI job's log is: not a terminal.
    let log = tmp.path().join("run.log");
    let out = Command::new(BIN)
        .args(["run", "--runs-dir"])
        .arg(tmp.path().join("runs"))
        .arg(&plan)
        .stderr(std::fs::File::create(&log).expect("log file"))
        .output()
        .expect("perflab run");
    let text = std::fs::read_to_string(&log).expect("the log");
    assert_eq!(out.status.code(), Some(0), "{text}");
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(" trial ")).collect();
    assert_eq!(lines.len(), 4, "one line per trial: {text}");
    for (i, l) in lines.iter().enumerate() {
        assert!(l.starts_with('✓'), "the status: {l}");
        assert!(
            l.contains(&format!("trial {}/4 connections=", i + 1)),
            "trial i/N and the point: {l}"
        );
        assert!(l.contains(" req/s"), "the headline figure: {l}");
        assert!(l.contains(" elapsed"), "the time elapsed: {l}");
        assert_eq!(l.contains("ETA "), i < 3, "the ETA while trials remain: {l}");
    }
    // No progress bar's escape sequences or redraws in a log.
    assert!(!text.contains('\u{1b}') && !text.contains('\r'), "{text:?}");
}
