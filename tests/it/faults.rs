//! Nothing lost, nothing left behind: a second Ctrl-C hurries the cleanup but never skips it; a
//! perflab killed with SIGKILL takes its target with it and the next perflab cleans up the rest
//! from the run's ledger; a full disk fails the run (after its teardown) instead of leaving it
//! `running`; a report that cannot be written is exit code 1 and leaves no empty file.
//!
//! Every run here is small (short phases, loopback only). Each test points perflab's list of
//! running runs (`PERFLAB_RUNTIME_DIR`) at its own temporary directory, so tests do not clean up
//! after each other. The full-disk tests mount a small tmpfs (root only) and say so when they cannot.

use perflab::runner::limits::{detect, Hierarchy};
use perflab::store::{RunStatus, Store};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::{free_port, only_run_dir, write_plan};

mod disk_full;
mod oltp_stops;
mod peers;
mod stops;
mod stops_plans;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

const PHASES: &str = r#"baseline = "300ms"
warmup = "100ms"
load = "300ms"
recovery = "300ms"
interval = "100ms""#;

/// perflab with its run list in `tmp/rt`, started from `tmp`.
fn perflab(tmp: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.current_dir(tmp).env("PERFLAB_RUNTIME_DIR", tmp.join("rt"));
    c
}

/// The limits this machine can apply, so the target gets every cgroup it can (4 on a v1/v2 hybrid).
fn limits() -> String {
    let (quota, memory) = match detect() {
        Hierarchy::V2 { .. } => (true, true),
        Hierarchy::Hybrid { v1, .. } => (v1.contains_key("cpu"), v1.contains_key("memory")),
        Hierarchy::None => (false, false),
    };
    let mut s = "cpus = 1\n".to_string();
    if quota {
        s.push_str("cpu_quota = 0.9\n");
    }
    if memory {
        s.push_str("memory = \"512M\"\n");
    }
    s
}

/// A plan against `target_command` (TOML value) on `port`, with a variant `x` whose hooks append
/// `setup` / `teardown` to `log`.
fn plan(name: &str, target_command: &str, port: u16, grace: &str, log: &Path) -> String {
    format!(
        r#"name = "{name}"
repetitions = 2

[target]
command = {target_command}
ready = {{ tcp = "127.0.0.1:{port}", timeout = "10s" }}
stop = {{ signal = "SIGTERM", grace = "{grace}" }}
{limits}
[workload]
type = "http"
url = "http://127.0.0.1:{port}/"
connections = 2

[matrix]
variant = ["x"]

[variant.x]
setup = "echo setup >> {log}"
teardown = "echo teardown >> {log}"

[phases]
{PHASES}
"#,
        limits = limits(),
        log = log.display()
    )
}

/// The record of what the run in the only directory under `runs` started, once it names a
/// target's process group (waits up to 60 s): (run dir, pgid, the ledger's JSON).
fn wait_for_target(runs: &Path, child: &mut Child) -> (PathBuf, i32, serde_json::Value) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Ok(Some(st)) = child.try_wait() {
            panic!("perflab ended before its target started: {st}");
        }
        if let Some(dir) = std::fs::read_dir(runs)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .map(|e| e.path())
        {
            let rec: Option<serde_json::Value> = std::fs::read_to_string(dir.join("started.json"))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok());
            if let Some(rec) = rec {
                if let Some(pgid) = rec["targets"][0]["pgid"].as_i64() {
                    // Ready and into its phases: the ready check connects first.
                    std::thread::sleep(Duration::from_millis(400));
                    return (dir, pgid as i32, rec);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("no target was started within 60 s");
}

/// /proc/PID/stat fields: (state, pgid).
fn stat(pid: i32) -> Option<(char, i32)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest: Vec<&str> = s[s.rfind(')')? + 1..].split_whitespace().collect();
    Some((rest.first()?.chars().next()?, rest.get(2)?.parse().ok()?))
}

/// The live (not zombie) processes of the group `pgid`.
fn group(pgid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&p| stat(p).is_some_and(|(state, g)| g == pgid && state != 'Z' && state != 'X'))
        .collect()
}

fn alive(pid: i32) -> bool {
    stat(pid).is_some_and(|(state, _)| state != 'Z' && state != 'X')
}

/// Wait up to `limit` for `cond`.
fn eventually(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

/// cgroup directories whose name holds `tag` (perflab names them `perflab-<pid>-…`).
fn cgroups_named(tag: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![(PathBuf::from("/sys/fs/cgroup"), 0)];
    while let Some((d, depth)) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let is_dir = e.file_type().map(|t| t.is_dir() && !t.is_symlink()).unwrap_or(false);
            if is_dir {
                if e.file_name().to_string_lossy().contains(tag) {
                    found.push(e.path());
                }
                if depth < 6 {
                    stack.push((e.path(), depth + 1));
                }
            }
        }
    }
    found
}

fn wait_bounded(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(Some(st)) = child.try_wait() {
            return Some(st);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn stderr_of(child: &mut Child) -> String {
    let mut s = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut s);
    }
    s
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Every file under `dir` that is empty or a temporary name left over, relative names.
fn empty_or_temporary_files(dir: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let name = e.file_name().to_string_lossy().into_owned();
                let len = e.metadata().map(|m| m.len()).unwrap_or(0);
                if len == 0 || name.contains(".tmp-") {
                    bad.push(p.strip_prefix(dir).unwrap_or(&p).display().to_string());
                }
            }
        }
    }
    bad
}

#[test]
fn a_second_ctrl_c_hurries_the_cleanup_but_never_skips_it() {
    let tmp = tempfile::tempdir().expect("tmp");
    let port = free_port();
    let log = tmp.path().join("hooks.log");
    // While `slow` exists the target ignores SIGTERM (and so do its children), so only the second
    // Ctrl-C can end it before its 60 s grace period; `--resume` runs without it.
    let slow = tmp.path().join("slow");
    std::fs::write(&slow, "").expect("marker");
    let command = format!(
        "\"[ -e {} ] && trap '' TERM; {BIN} serve --port {port} & sleep 300 & wait\"",
        slow.display()
    );
    let plan_path = write_plan(tmp.path(), &plan("second-ctrl-c", &command, port, "60s", &log));
    let runs = tmp.path().join("runs");
    // In its own process group, signalled as a terminal does on Ctrl-C: the whole group.
    let mut child = perflab(tmp.path())
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan_path)
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn perflab");
    let pid = child.id() as i32;
    let (dir, pgid, rec) = wait_for_target(&runs, &mut child);
    assert!(group(pgid).len() >= 2, "the target runs: {:?}", group(pgid));
    let made = cgroups_named(&format!("perflab-{pid}-"));
    let recorded = rec["targets"][0]["cgroups"].as_array().map_or(0, |a| a.len());
    assert_eq!(made.len(), recorded, "every cgroup made is recorded: {made:?} / {rec}");

    let ctrl_c = || nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGINT).expect("SIGINT");
    ctrl_c();
    std::thread::sleep(Duration::from_millis(50));
    ctrl_c();
    // Well within the target's 60 s grace period: the second Ctrl-C cut it short.
    let status = wait_bounded(&mut child, Duration::from_secs(30)).expect("perflab ended well before the grace period");
    let err = stderr_of(&mut child);
    assert_eq!(status.code(), Some(130), "interrupted; stderr: {err}");

    assert!(
        group(pgid).is_empty(),
        "no process of the target's group is left: {:?}",
        group(pgid)
    );
    assert!(
        cgroups_named(&format!("perflab-{pid}-")).is_empty(),
        "no cgroup the run made is left"
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap_or_default(),
        "setup\nteardown\n",
        "the teardown ran"
    );
    let store = Store::open(&dir).expect("store");
    assert_eq!(store.run().expect("run").status, RunStatus::Interrupted);
    drop(store);
    assert!(!dir.join("started.json").exists(), "nothing is left to clean up, so no record");
    assert!(!dir.join("space.reserve").exists());

    std::fs::remove_file(&slow).expect("remove marker");
    let out = perflab(tmp.path())
        .args(["run", "--quiet", "--resume"])
        .arg(&dir)
        .output()
        .expect("resume");
    assert_eq!(out.status.code(), Some(0), "resume: {}", text(&out));
    let store = Store::open(&dir).expect("store");
    assert_eq!(store.run().expect("run").status, RunStatus::Complete);
    assert_eq!(store.trial_ids().expect("ids"), vec![0, 1]);
}

#[test]
fn sigkill_mid_trial_takes_the_target_along_and_resume_cleans_up_the_rest() {
    let tmp = tempfile::tempdir().expect("tmp");
    let port = free_port();
    let log = tmp.path().join("hooks.log");
    let command = format!("[\"{BIN}\", \"serve\", \"--port\", \"{port}\"]");
    let plan_path = write_plan(tmp.path(), &plan("sigkill", &command, port, "3s", &log));
    let runs = tmp.path().join("runs");
    let mut child = perflab(tmp.path())
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan_path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn perflab");
    let pid = child.id() as i32;
    let (dir, target, rec) = wait_for_target(&runs, &mut child);
    assert_eq!(rec["owner"]["pid"].as_i64(), Some(pid as i64), "{rec}");
    assert_eq!(rec["teardown"]["variant"], "x", "the pending teardown is recorded: {rec}");
    // While its perflab lives, the run is not for --resume to take over.
    let early = perflab(tmp.path())
        .args(["run", "--quiet", "--resume"])
        .arg(&dir)
        .output()
        .expect("resume");
    let err = String::from_utf8_lossy(&early.stderr);
    assert_eq!(early.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("is being run right now by perflab (pid {pid})")), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    child.kill().expect("SIGKILL");
    let _ = child.wait();

    assert!(
        eventually(Duration::from_secs(5), || !alive(target)),
        "the target (pid {target}) died with perflab"
    );
    let left = cgroups_named(&format!("perflab-{pid}-"));
    let recorded = rec["targets"][0]["cgroups"].as_array().map_or(0, |a| a.len());
    assert_eq!(left.len(), recorded, "its cgroups are still there, and recorded: {left:?}");
    assert!(dir.join("started.json").exists());
    assert_eq!(Store::open(&dir).expect("store").run().expect("run").status, RunStatus::Running);
    assert_eq!(std::fs::read_to_string(&log).unwrap_or_default(), "setup\n");

    let out = perflab(tmp.path())
        .args(["run", "--quiet", "--resume"])
        .arg(&dir)
        .output()
        .expect("resume");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "resume completes: {said}");
    let line = said
        .lines()
        .find(|l| l.contains("cleaned up after the run in"))
        .unwrap_or_else(|| panic!("one line says what was cleaned up: {said}"));
    assert!(line.contains(&format!("pid {pid}")), "{line}");
    assert!(line.contains(&format!("removed {recorded} cgroup(s)")), "{line}");
    assert!(line.contains("ran the teardown of variant x"), "{line}");
    assert!(line.contains("marked it interrupted"), "{line}");
    assert!(left.iter().all(|c| !c.exists()), "the dead run's cgroups are gone");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap_or_default(),
        "setup\nteardown\nsetup\nteardown\n",
        "the pending teardown ran once, then the resumed run's own hooks"
    );
    let store = Store::open(&dir).expect("store");
    assert_eq!(store.run().expect("run").status, RunStatus::Complete);
    assert_eq!(store.trial_ids().expect("ids"), vec![0, 1]);
    assert!(!dir.join("started.json").exists());
}

#[test]
fn the_next_run_on_the_machine_cleans_up_after_a_killed_one() {
    let tmp = tempfile::tempdir().expect("tmp");
    let port = free_port();
    let log = tmp.path().join("hooks.log");
    // The shell dies with perflab, its children do not: they are left for the next run to stop.
    let command = format!("\"{BIN} serve --port {port} & sleep 300 & wait\"");
    let plan_path = write_plan(tmp.path(), &plan("killed", &command, port, "3s", &log));
    let runs = tmp.path().join("runs");
    let mut child = perflab(tmp.path())
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan_path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn perflab");
    let pid = child.id();
    let (dir, pgid, _) = wait_for_target(&runs, &mut child);
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    assert!(eventually(Duration::from_secs(5), || !alive(pgid)), "the shell died with perflab");
    let orphans = group(pgid);
    assert!(!orphans.is_empty(), "its children live on");
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(), "and still hold the port");

    // Another plan, another runs directory: the same machine.
    let other = tmp.path().join("other");
    std::fs::create_dir(&other).expect("mkdir");
    let other_plan = write_plan(
        &other,
        "name = \"other\"\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n[phases]\nbaseline = \"0s\"\nwarmup = \"0s\"\nload = \"50ms\"\nrecovery = \"0s\"\ninterval = \"100ms\"\n",
    );
    let out = perflab(tmp.path())
        .args(["run", "--quiet", "--runs-dir"])
        .arg(other.join("runs"))
        .arg(&other_plan)
        .output()
        .expect("run");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let lines: Vec<&str> = said.lines().filter(|l| l.contains("cleaned up after the run in")).collect();
    assert_eq!(lines.len(), 1, "one line: {said}");
    assert!(lines[0].contains(&dir.display().to_string()), "{}", lines[0]);
    assert!(
        lines[0].contains(&format!("stopped {} leftover process(es)", orphans.len())),
        "{}",
        lines[0]
    );
    assert!(group(pgid).is_empty(), "the leftovers are gone");
    assert!(std::net::TcpListener::bind(("127.0.0.1", port)).is_ok(), "the port is free again");
    assert!(
        cgroups_named(&format!("perflab-{pid}-")).is_empty(),
        "no cgroup of the dead run is left"
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap_or_default(), "setup\nteardown\n");
    assert_eq!(Store::open(&dir).expect("store").run().expect("run").status, RunStatus::Interrupted);
    assert!(!dir.join("started.json").exists());
    let listed = std::fs::read_dir(tmp.path().join("rt"))
        .expect("run list")
        .flatten()
        .filter(|e| e.file_name() != "lock")
        .count();
    assert_eq!(listed, 0, "the run list holds no run");
}
