//! `perflab run --segment i/N [--start-at T0]`: each segment runs its slice of the load (the
//! closed model's connections and `-n` requests split so that they sum to the whole), is marked in
//! its store with the plan's hash, its segment and the common start, refuses a workload it cannot
//! split and a start it missed; the two segments' run directories are merged (`dist_merge`).
//! Loopback only, bounded runs.

use perflab::store::Store;
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::common;
use common::{free_port, only_run_dir, write_plan};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

pub fn http_plan(port: u16, workload: &str) -> String {
    format!(
        "name = \"split\"\n\n[workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:{port}/\"\n{workload}\n\n\
         [phases]\nbaseline = \"200ms\"\nwarmup = \"0s\"\nload = \"3s\"\nrecovery = \"200ms\"\ninterval = \"100ms\"\n"
    )
}

fn now_unix() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
}

/// Stops the `perflab serve` a test started, by its PID, on every exit path.
pub struct Served(std::process::Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn serve(port: u16) -> Served {
    let child = Command::new(BIN)
        .args(["serve", "--port", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start perflab serve");
    let served = Served(child);
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return served;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    panic!("perflab serve did not listen on {port}");
}

#[test]
fn two_segments_at_one_start_split_the_requests_and_are_marked_alike() {
    let tmp = tempfile::tempdir().expect("tmp");
    let port = free_port();
    let _served = serve(port);
    let plan = write_plan(tmp.path(), &http_plan(port, "connections = 3\nrequests = 11"));
    // A start far enough ahead for both processes to be waiting, whatever the machine's load.
    let t0 = format!("{:.3}", now_unix() + 4.0);
    let runs: Vec<_> = (0..2).map(|i| tmp.path().join(format!("runs{i}"))).collect();
    let children: Vec<_> = (0..2)
        .map(|i| {
            Command::new(BIN)
                .args([
                    "run",
                    "--quiet",
                    "--segment",
                    &format!("{i}/2"),
                    "--start-at",
                    &t0,
                    "--start-tolerance",
                    "30s",
                ])
                .arg("--runs-dir")
                .arg(&runs[i])
                .arg(&plan)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start perflab run")
        })
        .collect();
    let mut marks = Vec::new();
    let mut requests = Vec::new();
    for (i, out) in children.into_iter().enumerate() {
        let out = out.wait_with_output().expect("run perflab");
        assert_eq!(out.status.code(), Some(0), "segment {i}: {}", String::from_utf8_lossy(&out.stderr));
        let store = Store::open(only_run_dir(&runs[i])).expect("store");
        let mark = store.segment().expect("read mark").expect("a segment's store is marked");
        assert_eq!((mark.index, mark.count, mark.segment.as_str()), (i as u32, 2, ["0/2", "1/2"][i]));
        assert_eq!(mark.start_at_unix, Some(t0.parse().unwrap()));
        assert!(
            mark.late_s.is_some_and(|l| (0.0..=30.0).contains(&l)),
            "lateness recorded: {mark:?}"
        );
        marks.push(mark);
        let trials = store.trials().expect("trials");
        assert_eq!(trials.len(), 1);
        requests.push(trials[0].metric("requests").expect("requests measured"));
    }
    assert_eq!(marks[0].plan_sha256, marks[1].plan_sha256, "one plan");
    assert_eq!(marks[0].plan_sha256.len(), 64);
    // Requests 0, 2, 4, ... are segment 0's: 6 of 11, and 5 for segment 1.
    assert_eq!(requests, [6.0, 5.0]);
    let dirs: Vec<_> = runs.iter().map(|r| only_run_dir(r)).collect();
    crate::dist_merge::merged_equals_the_union(tmp.path(), &dirs, 11.0);
}

#[test]
fn the_dry_run_shows_the_segment_s_share_of_the_connections() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(tmp.path(), &http_plan(free_port(), "connections = 10"));
    let out = Command::new(BIN)
        .args(["run", "--dry-run", "--segment", "1/3"])
        .arg(&plan)
        .output()
        .expect("run perflab");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("over 3 connection(s)") && text.contains("segment 1/3"), "{text}");
}

#[test]
fn a_workload_that_cannot_be_split_and_a_bad_segment_are_one_line_exit_2() {
    let tmp = tempfile::tempdir().expect("tmp");
    let exec = write_plan(tmp.path(), "name = \"x\"\n[workload]\ntype = \"exec\"\ncommand = \"true\"\n");
    let run = |args: &[&str]| Command::new(BIN).arg("run").args(args).arg(&exec).output().expect("run perflab");
    common::one_line_exit_2(&run(&["--dry-run", "--segment", "0/2"]), "the `exec` workload cannot be split");
    common::one_line_exit_2(
        &run(&["--dry-run", "--segment", "2/2"]),
        "--segment 2/2: segment 2 of 2 does not exist",
    );
    common::one_line_exit_2(&run(&["--dry-run", "--segment", "auto"]), "--segment auto: no engine's index here");
}

#[test]
fn a_segment_that_missed_its_start_runs_nothing_and_exits_4() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(tmp.path(), &http_plan(free_port(), "connections = 2"));
    let runs = tmp.path().join("runs");
    let t0 = format!("{:.3}", now_unix() - 10.0);
    let out = Command::new(BIN)
        .args(["run", "--quiet", "--segment", "1/2", "--start-at", &t0, "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("run perflab");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("segment 1/2 began 10.") && err.contains("nothing was run"), "{err}");
    assert!(!runs.exists(), "no run directory");
}
