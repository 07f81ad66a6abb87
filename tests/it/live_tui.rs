//! The terminal view in a real terminal: tmux runs `perflab run --tui` on a short http plan in an
//! 80×24 window; the screen shows the trial counter advancing and the per-second throughput; a
//! resize to 20×5 and back mid-run draws without a panic; `p` holds the next trial (none starts
//! while held, the footer says so) and `p` again releases it; `q` stops the run as Ctrl-C does (exit
//! 130, the finished trials stored, status `interrupted`) and leaves the terminal as it was (`stty
//! -a` before and after). A terminal that goes away mid-run (its tmux server killed) stops the run
//! as Ctrl-C does, without a panic. `--tui` where stdout is no terminal, or with --quiet, is refused.

use crate::common::{free_port, one_line_exit_2, only_run_dir, skip_unless_required, write_plan};
use crate::live_feed::http_plan;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

/// Our own tmux server (its own socket): killed at the end, whatever happens.
struct Tmux {
    sock: PathBuf,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.sock)
            .args(args)
            .output()
            .expect("run tmux")
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "tui"]).stdout).into_owned()
    }

    fn resize(&self, w: u16, h: u16) {
        let out = self.cmd(&["resize-window", "-t", "tui", "-x", &w.to_string(), "-y", &h.to_string()]);
        assert!(out.status.success(), "tmux resize: {}", String::from_utf8_lossy(&out.stderr));
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

/// The number after `what` on the screen (`trials done 2/4` → 2).
fn number_after(screen: &str, what: &str) -> Option<f64> {
    let at = screen.find(what)? + what.len();
    let digits: String = screen[at..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    digits.parse().ok()
}

/// Wait up to `limit` for `f` to hold.
fn wait(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

fn script(tmp: &Path, plan: &Path) -> PathBuf {
    let s = format!(
        "stty -a > before.txt\n'{BIN}' run --tui --runs-dir runs '{}' 2> stderr.txt\necho $? > rc.tmp\nstty -a > after.txt\nmv rc.tmp rc.txt\n",
        plan.display()
    );
    let p = tmp.join("run.sh");
    std::fs::write(&p, s).expect("script");
    p
}

/// Is tmux here (said loudly where it is not)?
fn has_tmux() -> bool {
    let here = Command::new("tmux").arg("-V").output().is_ok();
    if !here {
        skip_unless_required("tmux is not installed (Debian package tmux)");
    }
    here
}

#[test]
fn perflab_run_tui_in_tmux_shows_the_run_survives_a_resize_and_q_stops_it_as_ctrl_c() {
    if !has_tmux() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    // Four trials of 1.5 s of load each: `q` comes after the first is stored.
    let body = http_plan("live-tui", free_port(), 400, ["300ms", "250ms", "500ms"])
        .replace("repetitions = 2", "repetitions = 4")
        .replace("load = \"2500ms\"", "load = \"1500ms\"");
    let plan = write_plan(tmp.path(), &body);
    let run = script(tmp.path(), &plan);
    let tmux = Tmux {
        sock: tmp.path().join("tmux.sock"),
    };
    let dir = tmp.path().to_str().expect("utf-8 path");
    let cmd = format!("sh '{}'", run.display());
    let out = tmux.cmd(&["new-session", "-d", "-s", "tui", "-x", "80", "-y", "24", "-c", dir, &cmd]);
    assert!(out.status.success(), "tmux: {}", String::from_utf8_lossy(&out.stderr));

    // The counter from 0; the per-second throughput on the way; then `p` holds the next trial.
    let (mut counts, mut per_s, mut last) = (Vec::new(), Vec::new(), String::new());
    let mut count = |screen: &str| {
        if let Some(n) = number_after(screen, "trials done") {
            if counts.last() != Some(&n) {
                counts.push(n);
            }
        }
    };
    let measuring = wait(Duration::from_secs(30), || {
        last = tmux.screen();
        count(&last);
        if let Some(v) = number_after(&last, "throughput") {
            per_s.push(v);
        }
        per_s.iter().any(|v| *v > 0.0)
    });
    assert!(measuring, "throughput {per_s:?}; the screen:\n{last}");
    tmux.cmd(&["send-keys", "-t", "tui", "p"]);
    // Held: the trials started are all stored, the footer says so, the counter advanced.
    let runs = tmp.path().join("runs");
    let (mut started, mut stored) = (0, 0);
    let held = wait(Duration::from_secs(30), || {
        last = tmux.screen();
        count(&last);
        (started, stored) = started_and_stored(&runs);
        let shown = number_after(&last, "trials done") == Some(stored as f64);
        last.contains("held") && stored >= 1 && started == stored && shown
    });
    let held_since = Instant::now();
    assert!(held, "{started} started, {stored} stored; the screen:\n{last}");
    assert_eq!(counts.first(), Some(&0.0), "the counter from 0: {counts:?}");
    assert_eq!(counts.last(), Some(&(stored as f64)), "the counter advanced: {counts:?}");
    assert!(last.contains("trials done") && last.contains("/4"), "{last}");

    // 20×5 mid-run: the compact view, then 80×24 again: the panels.
    tmux.resize(20, 5);
    assert!(
        wait(Duration::from_secs(5), || {
            last = tmux.screen();
            last.lines().any(|l| l.starts_with("trials done"))
        }),
        "20×5:\n{last}"
    );
    assert!(last.lines().all(|l| l.chars().count() <= 20), "{last}");
    tmux.resize(80, 24);
    assert!(
        wait(Duration::from_secs(5), || {
            last = tmux.screen();
            last.contains("the latest second")
        }),
        "80×24 again:\n{last}"
    );

    // Held for 1 s (the resizes included; the runner looks every 100 ms): no trial started.
    std::thread::sleep(Duration::from_secs(1).saturating_sub(held_since.elapsed()));
    assert_eq!(started_and_stored(&runs), (started, stored), "nothing started while held");
    last = tmux.screen();
    assert!(last.contains("held"), "still held:\n{last}");
    // `p` again: released, the next trial starts.
    tmux.cmd(&["send-keys", "-t", "tui", "p"]);
    let released = wait(Duration::from_secs(10), || {
        last = tmux.screen();
        started_and_stored(&runs).0 > started && last.contains("released")
    });
    assert!(released, "the next trial after p again; the screen:\n{last}");

    // `q`: the run stops as on Ctrl-C.
    tmux.cmd(&["send-keys", "-t", "tui", "q"]);
    let rc = tmp.path().join("rc.txt");
    assert!(
        wait(Duration::from_secs(30), || rc.exists()),
        "no exit after q; the screen:\n{}",
        tmux.screen()
    );
    let read = |f: &str| std::fs::read_to_string(tmp.path().join(f)).unwrap_or_default();
    let stderr = read("stderr.txt");
    assert_eq!(read("rc.txt").trim(), "130", "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(read("before.txt"), read("after.txt"), "the terminal's settings after the view");
    assert!(read("before.txt").contains("icanon"), "stty -a read: {}", read("before.txt"));
    let store = perflab::store::Store::open(only_run_dir(&runs)).expect("store");
    let trials = store.trials().expect("trials");
    assert!(!trials.is_empty() && trials.len() < 4, "{} trials stored", trials.len());
    assert_eq!(trials.len(), stored, "the trial released and then stopped by q is not stored");
    assert!(trials.iter().all(|t| t.failure.is_none()), "the finished trials are whole");
    let status = store.run().expect("run").status;
    assert_eq!(status.as_str(), "interrupted");
}

/// The trials whose start the run's store shows (its `trial_start` events), and those stored (0, 0
/// before the run directory is made).
fn started_and_stored(runs: &Path) -> (usize, usize) {
    let Some(dir) = std::fs::read_dir(runs).ok().and_then(|mut d| d.next()).and_then(Result::ok) else {
        return (0, 0);
    };
    let Ok(store) = perflab::store::Store::open(dir.path()) else {
        return (0, 0);
    };
    let started = store.events(0).map_or(0, |e| e.iter().filter(|e| e.kind == "trial_start").count());
    (started, store.trials().map_or(0, |t| t.len()))
}

#[test]
fn a_terminal_lost_mid_run_stops_it_as_ctrl_c_without_a_panic() {
    if !has_tmux() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let body = http_plan("live-tui-lost", free_port(), 200, ["300ms", "250ms", "500ms"]).replace("load = \"2500ms\"", "load = \"1500ms\"");
    let plan = write_plan(tmp.path(), &body);
    // The shell outlives the hang-up (it ignores SIGHUP; perflab takes it back) to write the exit
    // code; perflab's stderr stays the lost terminal, where a print would fail.
    let run = tmp.path().join("lost.sh");
    let text = format!(
        "trap '' HUP\n'{BIN}' run --tui --runs-dir runs '{}'\necho $? > rc.tmp\nmv rc.tmp rc.txt\n",
        plan.display()
    );
    std::fs::write(&run, text).expect("script");
    let tmux = Tmux {
        sock: tmp.path().join("tmux.sock"),
    };
    let dir = tmp.path().to_str().expect("utf-8 path");
    let cmd = format!("sh '{}'", run.display());
    let out = tmux.cmd(&["new-session", "-d", "-s", "tui", "-x", "80", "-y", "24", "-c", dir, &cmd]);
    assert!(out.status.success(), "tmux: {}", String::from_utf8_lossy(&out.stderr));
    let mut last = String::new();
    let shown = wait(Duration::from_secs(30), || {
        last = tmux.screen();
        last.contains("· load")
    });
    assert!(shown, "the view never showed a load phase:\n{last}");
    tmux.cmd(&["kill-server"]);
    let rc = tmp.path().join("rc.txt");
    assert!(
        wait(Duration::from_secs(30), || rc.exists()),
        "perflab did not end after the hang-up"
    );
    // 130 as on Ctrl-C (a panic on a failed print is 101, a panic while panicking 134).
    assert_eq!(std::fs::read_to_string(&rc).unwrap_or_default().trim(), "130");
    let store = perflab::store::Store::open(only_run_dir(&tmp.path().join("runs"))).expect("store");
    assert_eq!(store.run().expect("run").status.as_str(), "interrupted");
}

#[test]
fn tui_is_refused_without_a_terminal_or_with_quiet_or_json() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(tmp.path(), &http_plan("live-tui-no", free_port(), 100, ["1s", "1s", "1s"]));
    let runs = tmp.path().join("runs");
    let run = |extra: &[&str]| {
        Command::new(BIN)
            .args(["run", "--tui", "--runs-dir"])
            .arg(&runs)
            .args(extra)
            .arg(&plan)
            .output()
            .expect("perflab")
    };
    one_line_exit_2(&run(&[]), "--tui needs a terminal");
    one_line_exit_2(&run(&["--quiet"]), "--tui cannot be used with --quiet or --json");
    one_line_exit_2(&run(&["--json"]), "--tui cannot be used with --quiet or --json");
    assert!(!runs.exists(), "nothing ran");
    let watch = Command::new(BIN).args(["watch", "--tui"]).arg(&runs).output().expect("perflab");
    one_line_exit_2(&watch, "--tui needs a terminal");
}
