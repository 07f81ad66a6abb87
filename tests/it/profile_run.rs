//! `[profile]` end to end, with C programs compiled by the test (known answers): a program that
//! spends ~70 % of its CPU in `hot_function` gets that share in the stored on-CPU profile, whose
//! samples all lie in the load phase; a program that sleeps in `nanosleep` shows it in the off-CPU
//! profile; two builds where one doubles `hot_function`'s work give a differential in which it
//! grew; `perflab profile --folded` writes the same stacks stand-alone; the report has the section,
//! the flame graphs and the top frames. Where perf or gcc cannot run, each test skips loudly.

use perflab::model::{Profile, ProfileKind};
use perflab::store::Store;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{only_run_dir, skip_unless_required, write_plan};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

/// `hot_function` does `hot` iterations for every `cold` of `cold_function`, the same work per
/// iteration (a volatile add): its share of the CPU is hot / (hot + cold). Both start on a 64-byte
/// boundary, so their loops sit alike in the instruction cache lines: unaligned, the same loop took
/// twice as long per iteration in one of them on an AMD EPYC (hot_function 83 % instead of 70 %).
pub(crate) fn busy_program(hot: u32, cold: u32) -> String {
    format!(
        r#"#include <stdint.h>
volatile uint64_t sink;
__attribute__((noinline, aligned(64))) void hot_function(uint64_t n) {{ for (uint64_t i = 0; i < n; i++) sink += i; }}
__attribute__((noinline, aligned(64))) void cold_function(uint64_t n) {{ for (uint64_t i = 0; i < n; i++) sink += i; }}
int main(void) {{ for (uint64_t k = 0; k < 2000000; k++) {{ hot_function({hot}); cold_function({cold}); }} return 0; }}
"#
    )
}

/// The program whose `hot_function` takes 70 % of its CPU, compiled into `dir`; None (said, or
/// failed under `PERFLAB_REQUIRE_ALL=1`) where perf cannot take on-CPU profiles or gcc is missing.
pub(crate) fn hot_program(dir: &Path) -> Option<PathBuf> {
    if perf_unusable(ProfileKind::OnCpu) {
        return None;
    }
    let prog = compile(dir, "hot", &busy_program(70_000, 30_000));
    if prog.is_none() {
        skip_unless_required("gcc is not installed");
    }
    prog
}

/// Sleeps 10 ms at a time in `nanosleep`, for at most 60 s.
const SLEEPER: &str = r#"#include <time.h>
__attribute__((noinline)) void nap(void) { struct timespec t = {0, 10000000}; nanosleep(&t, 0); }
int main(void) { for (int i = 0; i < 6000; i++) nap(); return 0; }
"#;

/// Compile `src` into `dir/name` with frame pointers; None (skipped) without gcc.
pub(crate) fn compile(dir: &Path, name: &str, src: &str) -> Option<PathBuf> {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).expect("write C");
    let out = dir.join(name);
    let ok = Command::new("gcc")
        .args(["-O1", "-fno-omit-frame-pointer", "-fno-inline", "-o"])
        .arg(&out)
        .arg(&c)
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(out)
}

/// Whether perf can take `kind` profiles of own processes here; if not, the test skips loudly.
pub(crate) fn perf_unusable(kind: ProfileKind) -> bool {
    let scope = perflab::profile::Scope::Processes(vec![std::process::id() as i32]);
    match perflab::profile::availability(kind, &scope) {
        Ok(()) => false,
        Err(m) => skip_unless_required(&format!("perf cannot profile here: {m}")),
    }
}

fn plan(name: &str, target: &str, profile: &str, matrix: &str) -> String {
    format!(
        r#"name = "{name}"
{matrix}
[target]
command = ["{target}"]

[workload]
type = "exec"
command = "sleep 3"

[phases]
baseline = "300ms"
warmup = "300ms"
load = "3s"
recovery = "300ms"
interval = "250ms"

[profile]
{profile}
"#
    )
}

fn run(dir: &Path, plan_text: &str) -> PathBuf {
    let plan = write_plan(dir, plan_text);
    let runs = dir.join("runs");
    let out = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    only_run_dir(&runs)
}

/// Share (%) of a profile's weight in stacks whose innermost frame outside the kernel is `frame`
/// (on a busy machine many samples land in an interrupt or a preemption on top of the program's
/// own frame: kernel frames end in `_[k]`).
pub(crate) fn self_share(p: &Profile, frame: &str, in_time: bool) -> f64 {
    let w = |s: &perflab::model::FoldedStack| if in_time { s.ns } else { s.samples } as f64;
    let total: f64 = p.stacks.iter().map(w).sum();
    let user_leaf = |s: &perflab::model::FoldedStack| s.stack.split(';').rev().find(|f| !f.ends_with("_[k]")).map(str::to_string);
    let mine: f64 = p.stacks.iter().filter(|s| user_leaf(s).as_deref() == Some(frame)).map(w).sum();
    100.0 * mine / total.max(1.0)
}

#[test]
fn the_hot_function_gets_its_share_within_the_load_phase_and_the_report_shows_it() {
    let tmp = tempfile::tempdir().expect("tmp");
    let Some(prog) = hot_program(tmp.path()) else {
        return;
    };
    let dir = run(
        tmp.path(),
        &plan("hot", &prog.display().to_string(), "on_cpu = true\nfrequency = 199", ""),
    );
    let store = Store::open(&dir).expect("store");
    let trial = &store.trials().expect("trials")[0];
    let profiles = store.profiles(trial.id).expect("profiles");
    assert_eq!(profiles.len(), 1, "{profiles:?}");
    let p = &profiles[0].profile;
    assert_eq!(p.kind, Some(ProfileKind::OnCpu));
    assert!(p.notes.is_empty(), "{:?}", p.notes);
    // At 199 Hz over 3 s, even a busy machine gives the target dozens of samples (a share within
    // ±10 points of 70 % is then more than 2.5 standard errors wide).
    assert!(p.total_samples() >= 20, "{} samples", p.total_samples());
    let share = self_share(p, "hot_function", false);
    assert!(
        (60.0..=80.0).contains(&share),
        "hot_function has {share:.1} % of the samples: {}",
        p.folded(false)
    );
    // Every sample lies within the load phase.
    let load = trial
        .phases
        .iter()
        .find(|s| s.phase == perflab::model::Phase::Load)
        .expect("load phase");
    let (first, last) = p.sampled.expect("sampled");
    assert!(
        first >= load.start_s && last <= load.end_s,
        "samples {first}..{last}, load {}..{}",
        load.start_s,
        load.end_s
    );
    assert!(p.window.0 >= load.start_s && p.window.1 <= load.end_s, "window {:?}", p.window);

    // The report: the section with the top frames and the flame graph, and report.json's figures.
    let md = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    assert!(md.contains("## Profiles") && md.contains("| hot_function |"), "{md}");
    let svg = std::fs::read_to_string(dir.join("charts/flame_00_on_cpu.svg")).expect("flame graph");
    assert!(
        svg.contains("hot_function (") && svg.contains("<script"),
        "a searchable inferno graph"
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("report.json")).expect("json")).expect("parse");
    let top = &json["profiles"]["points"][0]["top"][0];
    assert_eq!(top["frame"], "hot_function", "{top}");

    // `perflab export` writes the stacks as folded text.
    let out = Command::new(BIN).arg("export").arg(&dir).output().expect("export");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let folded = std::fs::read_to_string(dir.join(format!("csv/profiles/trial-{}-local-on_cpu.folded", trial.id))).expect("folded");
    assert_eq!(folded, p.folded(false));
}

#[test]
fn a_sleeper_shows_nanosleep_off_cpu() {
    if perf_unusable(ProfileKind::OffCpu) {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let Some(prog) = compile(tmp.path(), "sleeper", SLEEPER) else {
        skip_unless_required("gcc is not installed");
        return;
    };
    let dir = run(tmp.path(), &plan("sleeper", &prog.display().to_string(), "off_cpu = true", ""));
    let store = Store::open(&dir).expect("store");
    let trial = &store.trials().expect("trials")[0];
    let p = store.profiles(trial.id).expect("profiles").remove(0).profile;
    assert_eq!(p.kind, Some(ProfileKind::OffCpu));
    let total = p.total_ns() as f64;
    let asleep: f64 = p.stacks.iter().filter(|s| s.stack.contains("nanosleep")).map(|s| s.ns as f64).sum();
    // Sleeping 10 ms at a time, the program is off its CPU nearly all of the load phase.
    assert!(
        asleep / total >= 0.9,
        "{:.0} % in nanosleep: {}",
        100.0 * asleep / total,
        p.folded(true)
    );
    let load = trial
        .phases
        .iter()
        .find(|s| s.phase == perflab::model::Phase::Load)
        .expect("load phase");
    let blocked_s = total * 1e-9;
    assert!(
        blocked_s <= (load.end_s - load.start_s) + 0.05,
        "{blocked_s} s blocked in a shorter load phase"
    );
    assert!(
        blocked_s >= 0.5 * (p.window.1 - p.window.0),
        "{blocked_s} s blocked of {:?}",
        p.window
    );
}

#[test]
fn the_differential_of_two_builds_shows_the_doubled_function_grown() {
    if perf_unusable(ProfileKind::OnCpu) {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let (Some(_), Some(_)) = (
        compile(tmp.path(), "prog_base", &busy_program(50_000, 50_000)),
        compile(tmp.path(), "prog_double", &busy_program(100_000, 50_000)),
    ) else {
        skip_unless_required("gcc is not installed");
        return;
    };
    let target = format!("{}/prog_${{build}}", tmp.path().display());
    let matrix = "[matrix]\nbuild = [\"base\", \"double\"]\n\n[report]\ncompare = \"build\"\nbaseline = \"base\"\n";
    let dir = run(tmp.path(), &plan("diff", &target, "on_cpu = true\nfrequency = 199", matrix));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("report.json")).expect("json")).expect("parse");
    let diffs = json["profiles"]["differentials"].as_array().expect("differentials");
    assert_eq!(diffs.len(), 1, "{diffs:?}");
    let changes = diffs[0]["changes"].as_array().expect("changes");
    let change = |f: &str| changes.iter().find(|c| c[0] == f).and_then(|c| c[1].as_f64());
    // 50 % → 67 % of the samples: about +17 points (the shares of a busy machine's samples vary).
    let grown = change("hot_function").expect("hot_function changed");
    assert!(grown >= 5.0, "hot_function grew by {grown} points: {changes:?}");
    assert!(change("cold_function").is_some_and(|d| d <= -5.0), "{changes:?}");
    let svg = std::fs::read_to_string(dir.join("charts/flame_diff_00_on_cpu.svg")).expect("differential graph");
    assert!(svg.contains("hot_function ("), "the differential names the function");
}

#[test]
fn perflab_profile_writes_folded_stacks_of_a_pid() {
    let tmp = tempfile::tempdir().expect("tmp");
    let Some(prog) = hot_program(tmp.path()) else {
        return;
    };
    let mut child = Command::new(&prog).spawn().expect("start");
    let folded = tmp.path().join("out.folded");
    let out = Command::new(BIN)
        .args([
            "profile",
            "--pid",
            &child.id().to_string(),
            "-d",
            "2s",
            "-F",
            "99",
            "--folded",
            "-o",
        ])
        .arg(&folded)
        .output()
        .expect("profile");
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&folded).expect("folded");
    let stacks = text
        .lines()
        .map(|l| {
            l.rsplit_once(' ').map(|(s, n)| perflab::model::FoldedStack {
                stack: s.to_string(),
                samples: n.parse().expect("count"),
                ns: 0,
            })
        })
        .collect::<Option<Vec<_>>>()
        .expect("folded lines");
    let p = Profile {
        stacks,
        ..Profile::default()
    };
    assert!(p.total_samples() >= 10, "{text}");
    let share = self_share(&p, "hot_function", false);
    assert!((60.0..=80.0).contains(&share), "{share:.1} %: {text}");
    // A process that does not exist is bad input: one line, exit code 2.
    let out = Command::new(BIN)
        .args(["profile", "--pid", "999999999", "-d", "1s"])
        .output()
        .expect("profile");
    crate::common::one_line_exit_2(&out, "--pid 999999999: no such process");
}

#[test]
fn the_agent_profiles_its_target_and_returns_the_stacks() {
    use perflab::remote::protocol::{CommandSpec, Request, Started, TargetSpec};
    use std::time::Duration;
    let tmp = tempfile::tempdir().expect("tmp");
    let Some(prog) = hot_program(tmp.path()) else {
        return;
    };
    let mut c = Command::new(BIN);
    c.args(["agent", "--stdio"]);
    let mut ch = perflab::remote::Channel::open("testhost", c).expect("open the agent");
    let target = TargetSpec {
        command: CommandSpec::Argv(vec![prog.display().to_string()]),
        cwd: None,
        env: vec![],
        stop_signal: libc::SIGTERM,
        grace_s: 1.0,
        cpus: None,
        cpu_quota: None,
        memory: None,
    };
    let long = Duration::from_secs(60);
    let _: Started = ch.call(Request::Start { name: "t".into(), target }, long).expect("start");
    let start = Request::ProfileStart {
        kind: "on_cpu".into(),
        target: Some("t".into()),
        scope: "target".into(),
        frequency_hz: 199,
        call_graph: "fp".into(),
    };
    let _: serde_json::Value = ch.call(start, long).expect("profile_start");
    let _: serde_json::Value = ch.call(Request::ProfileEnable, long).expect("profile_enable");
    std::thread::sleep(Duration::from_secs(3));
    let _: serde_json::Value = ch.call(Request::ProfileDisable, long).expect("profile_disable");
    let profiles: Vec<Profile> = ch.call(Request::ProfileStop, long).expect("profile_stop");
    let _: serde_json::Value = ch.call(Request::Stop { name: "t".into() }, long).expect("stop");
    ch.close().expect("bye");
    assert_eq!(profiles.len(), 1, "{profiles:?}");
    let p = &profiles[0];
    assert!(p.total_samples() >= 10, "{}", p.folded(false));
    let share = self_share(p, "hot_function", false);
    assert!((60.0..=80.0).contains(&share), "{share:.1} %: {}", p.folded(false));
    // Times count from the window's opening on the host.
    let (first, last) = p.sampled.expect("sampled");
    assert!((0.0..0.5).contains(&p.window.0), "{:?}", p.window);
    assert!(first >= p.window.0 && last <= p.window.1, "{:?} {:?}", p.window, p.sampled);
    // A profile of a target the agent does not run is refused in one line.
    let mut c = Command::new(BIN);
    c.args(["agent", "--stdio"]);
    let mut ch = perflab::remote::Channel::open("testhost", c).expect("open the agent");
    let bad = Request::ProfileStart {
        kind: "on_cpu".into(),
        target: Some("nobody".into()),
        scope: "target".into(),
        frequency_hz: 49,
        call_graph: "fp".into(),
    };
    let e = ch.call::<serde_json::Value>(bad, long).expect_err("no such target");
    assert!(e.to_string().contains("no target named `nobody`"), "{e}");
    ch.close().expect("bye");
}

#[test]
fn without_perf_the_run_goes_on_and_the_report_says_what_is_missing() {
    let tmp = tempfile::tempdir().expect("tmp");
    // A PATH with the shell and sleep but no perf.
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).expect("bin");
    for tool in ["sh", "sleep"] {
        let Some(path) = ["/bin", "/usr/bin"].iter().map(|d| Path::new(d).join(tool)).find(|p| p.exists()) else {
            skip_unless_required(&format!("no {tool} in /bin or /usr/bin"));
            return;
        };
        std::os::unix::fs::symlink(path, bin.join(tool)).expect("link");
    }
    let plan = write_plan(tmp.path(), &plan("noperf", "/bin/sleep\", \"30", "on_cpu = true", ""));
    let runs = tmp.path().join("runs");
    let out = Command::new(BIN)
        .env("PATH", &bin)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(err.matches("perf is not installed").count(), 1, "said once: {err}");
    let dir = only_run_dir(&runs);
    let store = Store::open(&dir).expect("store");
    let p = store.profiles(0).expect("profiles").remove(0).profile;
    assert!(p.stacks.is_empty() && p.notes[0].contains("perf is not installed"), "{p:?}");
    let md = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    assert!(
        md.contains("Missing: no on-CPU profile: perf is not installed (install it: apt-get install linux-perf"),
        "{md}"
    );
}

#[test]
fn ctrl_c_ends_perflab_profile_and_it_still_writes_what_it_has() {
    let tmp = tempfile::tempdir().expect("tmp");
    let Some(prog) = hot_program(tmp.path()) else {
        return;
    };
    let mut target = Command::new(&prog).spawn().expect("start");
    let folded = tmp.path().join("out.folded");
    let mut prof = Command::new(BIN)
        .args([
            "profile",
            "--pid",
            &target.id().to_string(),
            "-d",
            "120s",
            "-F",
            "99",
            "--folded",
            "-o",
        ])
        .arg(&folded)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("profile");
    std::thread::sleep(std::time::Duration::from_secs(3));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(prof.id() as i32), nix::sys::signal::Signal::SIGINT).expect("SIGINT");
    // Bounded: a recording that ignored Ctrl-C would run its 120 s.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(s) = prof.try_wait().expect("wait") {
            break s;
        }
        assert!(std::time::Instant::now() < deadline, "perflab profile did not end on Ctrl-C");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let _ = target.kill();
    let _ = target.wait();
    assert_eq!(status.code(), Some(130));
    let text = std::fs::read_to_string(&folded).expect("what it had is written");
    assert!(text.contains(";hot_function "), "{text}");
}
