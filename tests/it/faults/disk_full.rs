//! A full disk: the run fails after its teardown instead of being left `running`, no half-made run
//! directory, and a report that cannot be written is exit code 1 with no empty file left. Each test
//! mounts a small tmpfs (root only) and says so when it cannot.

use super::*;

/// A small tmpfs mounted in a temporary directory, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// `None` (said loudly) where mounting is not permitted.
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().expect("tmp");
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            crate::common::skip_unless_required("cannot mount a tmpfs here (needs root); the full-disk test did not run");
            return None;
        }
        Some(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fill it up completely.
    fn fill(&self) {
        let _ = Command::new("dd")
            .arg("if=/dev/zero")
            .arg(format!("of={}", self.path().join("fill").display()))
            .arg("bs=64k")
            .stderr(Stdio::null())
            .status();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let ok = Command::new("umount").arg(self.dir.path()).status().is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount").arg("-l").arg(self.dir.path()).status();
        }
    }
}

#[test]
fn a_disk_that_fills_up_during_a_trial_fails_the_run_after_its_teardown() {
    let Some(disk) = Tmpfs::mount("4m") else { return };
    let tmp = tempfile::tempdir().expect("tmp");
    let log = tmp.path().join("hooks.log");
    // The workload itself fills the disk the run is stored on.
    let plan_path = write_plan(
        tmp.path(),
        &format!(
            r#"name = "full"
repetitions = 2
[workload]
type = "exec"
command = ["sh", "-c", "dd if=/dev/zero of={fill} bs=64k 2>/dev/null; true"]
[matrix]
variant = ["x"]
[variant.x]
setup = "echo setup >> {log}"
teardown = "echo teardown >> {log}"
[phases]
{PHASES}
"#,
            fill = disk.path().join("fill").display(),
            log = log.display()
        ),
    );
    let runs = disk.path().join("runs");
    let out = perflab(tmp.path())
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan_path)
        .output()
        .expect("run");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("cannot store trial 0: database or disk is full"),
        "the reason is said: {said}"
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap_or_default(),
        "setup\nteardown\n",
        "the teardown ran"
    );
    let dir = only_run_dir(&runs);
    let store = Store::open(&dir).expect("store");
    assert_eq!(store.run().expect("run").status, RunStatus::Failed);
    let why = store.failure().expect("meta").unwrap_or_default();
    assert!(why.contains("disk is full"), "the reason is stored: {why}");
    drop(store);
    assert_eq!(
        empty_or_temporary_files(&dir),
        Vec::<String>::new(),
        "no empty or half-written file"
    );
    assert!(!dir.join("started.json").exists() && !dir.join("space.reserve").exists());
}

#[test]
fn no_room_for_the_run_directory_leaves_nothing_half_made() {
    let Some(disk) = Tmpfs::mount("2m") else { return };
    disk.fill();
    let tmp = tempfile::tempdir().expect("tmp");
    let plan_path = write_plan(
        tmp.path(),
        "name = \"nowhere\"\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n[phases]\nload = \"50ms\"\n",
    );
    let runs = disk.path().join("runs");
    let out = perflab(tmp.path())
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan_path)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot start the run in") && err.contains("full"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(!runs.exists(), "no run directory, not even the runs directory it made");
}

#[test]
fn a_report_that_cannot_be_written_is_exit_1_and_leaves_no_empty_file() {
    let tmp = tempfile::tempdir().expect("tmp");
    // The variant's teardown (the last thing before the report) puts a directory where the
    // report's HTML goes.
    let plan_path = write_plan(
        tmp.path(),
        r#"name = "no-report"
[workload]
type = "exec"
command = ["true"]
[matrix]
variant = ["x"]
[variant.x]
teardown = "for d in runs/*; do mkdir \"$d/report.html\"; done"
[phases]
baseline = "0s"
warmup = "0s"
load = "50ms"
recovery = "0s"
interval = "100ms"
"#,
    );
    let out = perflab(tmp.path())
        .args(["run", "--quiet", "--runs-dir", "runs"])
        .arg(&plan_path)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        err.contains("the report could not be written") && err.contains("report.html"),
        "{err}"
    );
    let dir = only_run_dir(&tmp.path().join("runs"));
    assert_eq!(Store::open(&dir).expect("store").run().expect("run").status, RunStatus::Complete);
    assert_eq!(empty_or_temporary_files(&dir), Vec::<String>::new());

    // The same run's report into a disk with no room: exit 1, and no empty chart or page.
    let Some(disk) = Tmpfs::mount("1m") else { return };
    disk.fill();
    let out_dir = disk.path().join("report");
    let out = perflab(tmp.path())
        .arg("report")
        .arg(&dir)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .expect("report");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(empty_or_temporary_files(disk.path()), Vec::<String>::new());
}
