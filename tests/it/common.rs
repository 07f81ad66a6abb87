//! Helpers several test modules share: a free loopback port, a plan written to disk, a plan run
//! with short phases, the one run directory a run left behind, and every file under a directory.

use perflab::model::{Phase, PhaseSpan, TrialInfo};
use std::path::{Path, PathBuf};

/// A loopback port that was free a moment ago (bound to port 0, read, released).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    l.local_addr().expect("its address").port()
}

/// `body` written to `dir/plan.toml`.
pub fn write_plan(dir: &Path, body: &str) -> PathBuf {
    let p = dir.join("plan.toml");
    std::fs::write(&p, body).expect("write plan");
    p
}

/// The phases of a plan cut short for a test (no warm-up), and its sampling interval.
pub struct Short {
    pub baseline: std::time::Duration,
    pub load: std::time::Duration,
    pub recovery: std::time::Duration,
    pub interval: std::time::Duration,
}

/// `plan` cut short and run into `runs_dir`: one repetition, the phases of `short`, only the
/// points `keep` holds (renumbered), a `perflab` target run by this build's binary. Panics with
/// the plan's label when it cannot be built or run.
pub fn run_shortened(
    mut plan: perflab::plan::Plan,
    short: Short,
    keep: impl Fn(&perflab::plan::Point) -> bool,
    runs_dir: &Path,
) -> perflab::runner::execute::RunOutcome {
    use perflab::runner::execute::{execute, RunOptions};
    let label = plan.source.label.clone();
    plan.repetitions = perflab::plan::Repetitions::Fixed(1);
    plan.phases.baseline = short.baseline;
    plan.phases.warmup = std::time::Duration::ZERO;
    plan.phases.load = short.load;
    plan.phases.recovery = short.recovery;
    plan.phases.interval = short.interval;
    plan.points.retain(|p| keep(p));
    assert!(!plan.points.is_empty(), "{label}: no point kept");
    for (i, p) in plan.points.iter_mut().enumerate() {
        p.id = i;
    }
    for t in plan.points.iter_mut().filter_map(|p| p.target.as_mut()) {
        if let perflab::util::command::CommandLine::Argv(a) = &mut t.command {
            if a[0] == "perflab" {
                a[0] = env!("CARGO_BIN_EXE_perflab").to_string();
            }
        }
    }
    let trials = perflab::plan::expand(&plan);
    let exp = perflab::runner::from_plan::build(&plan, &trials, &label).unwrap_or_else(|e| panic!("{label}: {e:#}"));
    let opts = RunOptions {
        runs_dir: runs_dir.to_path_buf(),
        resume: None,
        quiet: true,
        fail_fast: false,
        retry_failed: false,
        live: None,
        tui: false,
    };
    execute(exp, &opts, &perflab::util::Cancel::new()).unwrap_or_else(|e| panic!("{label}: {e:#}"))
}

/// The run directory under `runs`, which must be the only one.
pub fn only_run_dir(runs: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(runs)
        .expect("runs dir")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(dirs.len(), 1, "exactly one run directory: {dirs:?}");
    dirs[0].clone()
}

/// Every file under `dir` (relative name, bytes), sorted.
pub fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let name = p.strip_prefix(dir).expect("under dir").display().to_string();
                out.push((name, std::fs::read(&p).expect("read")));
            }
        }
    }
    out.sort();
    out
}

/// A `perflab load ... --json` run's stdout as JSON; on a parse error, both outputs in the panic.
pub fn stdout_json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Bad input: exit code 2 and one line on stderr that contains `want`.
pub fn one_line_exit_2(out: &std::process::Output, want: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(want), "want {want}: {err}");
}

/// A finished exec trial of 2 s (baseline 0.5 s, load 1 s, recovery 0.5 s) started at `started_unix`,
/// with `samples` and nothing else, for tests that write a store directly.
pub fn exec_trial(
    id: usize,
    point: usize,
    repetition: u32,
    params_json: &str,
    started_unix: f64,
    samples: Vec<perflab::store::TaggedSample>,
) -> perflab::store::TrialRecord {
    perflab::store::TrialRecord {
        info: TrialInfo {
            id,
            point,
            repetition,
            params_json: params_json.into(),
            workload: "exec".into(),
            failure: None,
            started_unix,
            ended_unix: started_unix + 2.0,
            limit_mechanism: None,
            limit_proof: None,
            stdout_tail: None,
            stderr_tail: None,
            phases: vec![
                PhaseSpan::new(Phase::Baseline, 0.0, 0.5),
                PhaseSpan::new(Phase::Load, 0.5, 1.5),
                PhaseSpan::new(Phase::Recovery, 1.5, 2.0),
            ],
        },
        result: None,
        samples,
        probes: vec![],
        profiles: vec![],
    }
}

/// A test that cannot run here for a missing capability (a server, a package, root): under
/// `PERFLAB_REQUIRE_ALL=1` (CI) it fails with `why`, otherwise it says SKIPPED loudly and the caller
/// returns. Use `if skip_unless_required(...) { return; }`; never for a busy machine (measure the
/// background and allow for it instead).
pub fn skip_unless_required(why: &str) -> bool {
    if std::env::var_os("PERFLAB_REQUIRE_ALL").is_some_and(|v| v == "1") {
        panic!("PERFLAB_REQUIRE_ALL=1 and this test cannot run here: {why}");
    }
    eprintln!("SKIPPED: {why}");
    true
}

static MACHINE_MEMORY: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Held by the tests that move the machine's memory by a GiB and judge the move by the machine's
/// own figures: two of them at once in this test binary would each read the other's GiB.
pub fn machine_memory_lock() -> std::sync::MutexGuard<'static, ()> {
    MACHINE_MEMORY.lock().unwrap_or_else(|p| p.into_inner())
}
