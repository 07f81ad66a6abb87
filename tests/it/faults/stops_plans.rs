//! Every workload kind, as a plan, ends its load phase at its duration and its run within a second
//! of Ctrl-C, whatever its peer does: `http` (with an http probe whose timeout outlasts the run),
//! `net` (stream against a silent server, rr against one that never accepts), `exec` (a command
//! that ignores SIGTERM), `cpu`, `mem`, `disk` and `oltp` (a "database" that never answers).
//!
//! Each plan has two repetitions of a 2 s load. The first trial must end within its phases + 3 s
//! and be stored (failed, against a hostile peer); the run is sent SIGINT 1.2 s after that, in the
//! second trial, and must exit 130 within 1.5 s, the store `interrupted` with the first trial kept.
//! Bounds add [`allowance`] (perflab's own start and exit on this machine now).

use super::peers::{allowance, flush, in_parallel, no_internals, run_until, Hostile, Peer, BIN};
use perflab::store::{RunStatus, Store};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const PHASES: &str = r#"[phases]
baseline = "300ms"
warmup = "200ms"
load = "2s"
recovery = "300ms"
interval = "100ms"
"#;

/// baseline + warm-up + load + recovery.
const PHASES_TOTAL: Duration = Duration::from_millis(2800);

/// Trials stored so far in the only run under `runs` (0 while there is no store yet).
fn trials_stored(runs: &Path) -> i64 {
    let Some(dir) = std::fs::read_dir(runs).ok().and_then(|mut d| d.next()).and_then(|e| e.ok()) else {
        return 0;
    };
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    rusqlite::Connection::open_with_flags(dir.path().join("perflab.db"), flags)
        .and_then(|c| c.query_row("SELECT count(*) FROM trial", [], |r| r.get(0)))
        .unwrap_or(0)
}

/// Run `workload` (a `[workload]` table, `{addr}` the peer's address) as a two-trial plan and judge
/// both bounds; the problems found.
fn judge(name: &str, workload: &str, peer: Option<Hostile>) -> Vec<String> {
    let peer = peer.map(Peer::start);
    let addr = peer.as_ref().map(|p| p.addr().to_string()).unwrap_or_default();
    let tmp = tempfile::tempdir().expect("tmp");
    let body = format!(
        "name = \"stops\"\nrepetitions = 2\n\n{}\n{PHASES}",
        workload.replace("{addr}", &addr)
    );
    let plan = crate::common::write_plan(tmp.path(), &body);
    let mut cmd = Command::new(BIN);
    cmd.current_dir(tmp.path())
        .env("PERFLAB_RUNTIME_DIR", tmp.path().join("rt"))
        .args(["run", "-q"])
        .arg(&plan);
    let runs = tmp.path().join("runs");
    let mut first_stored: Option<Duration> = None;
    let r = run_until(
        cmd,
        |elapsed| {
            if first_stored.is_none() && trials_stored(&runs) >= 1 {
                first_stored = Some(elapsed);
            }
            first_stored.is_some_and(|t| elapsed >= t + Duration::from_millis(1200))
        },
        Duration::from_secs(120),
    );
    println!(
        "{name}: first trial stored after {first_stored:?}, exit {:?} after {:?} (after Ctrl-C: {:?})",
        r.code(),
        r.took,
        r.after_interrupt
    );
    flush();
    no_internals(&r, name);
    let mut problems = Vec::new();
    // The run starts (plan checks, the store) before the first trial: that is in the allowance too.
    let trial_bound = PHASES_TOTAL + Duration::from_secs(3) + allowance() * 2;
    match first_stored {
        None => problems.push(format!("{name}: no trial stored within {:?}\n{}", r.took, r.text())),
        Some(t) if t > trial_bound => problems.push(format!("{name}: the first trial was stored after {t:?}, more than {trial_bound:?}")),
        Some(_) => {}
    }
    let bound = Duration::from_millis(1500) + allowance();
    match r.after_interrupt {
        Some(t) if r.hung || t > bound => problems.push(format!("{name}: ended {t:?} after Ctrl-C, more than {bound:?}\n{}", r.text())),
        Some(_) if r.code() != Some(130) => problems.push(format!("{name}: exit {:?} after Ctrl-C\n{}", r.code(), r.text())),
        Some(_) => {}
        None => problems.push(format!("{name}: the run ended before its Ctrl-C\n{}", r.text())),
    }
    if let Some(dir) = std::fs::read_dir(&runs).ok().and_then(|mut d| d.next()).and_then(|e| e.ok()) {
        let store = Store::open(dir.path()).expect("store");
        let status = store.run().expect("run").status;
        let kept = store.trials().expect("trials").len();
        if r.after_interrupt.is_some() && (status != RunStatus::Interrupted || kept != 1) {
            problems.push(format!(
                "{name}: the store says {status:?} with {kept} trial(s), not interrupted with the first kept"
            ));
        }
    }
    drop(peer);
    problems
}

#[test]
fn every_workload_kind_ends_its_load_at_its_duration_and_its_run_on_ctrl_c() {
    let cases: Vec<(&str, String, Option<Hostile>)> = vec![
        (
            "http against a silent server, with a probe",
            "[workload]\ntype = \"http\"\nurl = \"http://{addr}/\"\nconnections = 2\n\n[[probes]]\nkind = \"http\"\ntarget = \"http://{addr}/\"\ntimeout = \"30s\"\n".into(),
            Some(Hostile::Silent),
        ),
        (
            "net stream against a silent server",
            "[workload]\ntype = \"net\"\ntarget = \"{addr}\"\n".into(),
            Some(Hostile::Silent),
        ),
        (
            "net rr against a server that never accepts",
            "[workload]\ntype = \"net\"\ntarget = \"{addr}\"\nmode = \"rr\"\n".into(),
            Some(Hostile::NeverAccepts),
        ),
        (
            "exec of a command that ignores SIGTERM",
            "[workload]\ntype = \"exec\"\ncommand = \"trap '' TERM INT; sleep 100\"\ntimeout = \"2s\"\nadapter = \"none\"\n".into(),
            None,
        ),
        ("cpu", "[workload]\ntype = \"cpu\"\nworkers = 1\n".into(), None),
        ("mem", "[workload]\ntype = \"mem\"\nmode = \"touch\"\nsize = \"64M\"\n".into(), None),
        ("disk", "[workload]\ntype = \"disk\"\nsize = \"64M\"\n".into(), None),
        (
            "oltp against a server that never answers",
            "[workload]\ntype = \"oltp\"\ndb = \"postgres://u:p@{addr}/x?connect_timeout=3\"\n".into(),
            Some(Hostile::Silent),
        ),
    ];
    let t0 = Instant::now();
    let problems: Vec<String> = in_parallel(&cases, 4, |(name, w, p)| judge(name, w, *p))
        .into_iter()
        .flatten()
        .collect();
    println!("all plans in {:?}", t0.elapsed());
    assert!(
        problems.is_empty(),
        "{} plan(s) did not stop in time:\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}
