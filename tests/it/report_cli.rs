//! `perflab report` / `perflab compare` from the command line: files written, summary printed, bad
//! input is one line with exit code 2.

use crate::report_common;

use assert_cmd::Command;

#[test]
fn report_writes_the_chosen_formats_and_prints_a_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    report_common::synthetic_run(&run);
    let out = tmp.path().join("out");
    let o = Command::cargo_bin("perflab")
        .unwrap()
        .arg("report")
        .arg(&run)
        .args(["--format", "md,json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("Summary"));
    assert!(stdout.contains("requests_per_s"));
    assert!(!stdout.contains(report_common::SECRET));
    assert!(out.join("report.md").is_file());
    assert!(out.join("report.json").is_file());
    assert!(!out.join("report.html").exists());
}

#[test]
fn compare_writes_into_the_second_run() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    report_common::synthetic_run(&a);
    report_common::synthetic_run(&b);
    let o = Command::cargo_bin("perflab")
        .unwrap()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(b.join("compare").join("report.html").is_file());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("no significant"));
}

#[test]
fn a_directory_that_is_not_a_run_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::cargo_bin("perflab")
        .unwrap()
        .arg("report")
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("not a perflab run directory"));

    let o = Command::cargo_bin("perflab")
        .unwrap()
        .args(["report", "--format", "pdf"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}
