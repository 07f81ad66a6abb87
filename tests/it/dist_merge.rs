//! `perflab merge`: the run directories of two segments of one http load (made by
//! `dist_segment`'s two-segment run, which calls [`merged_equals_the_union`]) merge into one
//! run whose counts are the segments' sum and whose percentiles are those of the union of their
//! latencies; a missing segment and segments of two plans are refused with one line, as are a
//! segment killed mid-run and one that began late, which `--allow-partial` merges marked PARTIAL.

use perflab::store::Store;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

fn merge(dirs: &[&Path], out: &Path) -> std::process::Output {
    merge_with(dirs, out, &[])
}

fn merge_with(dirs: &[&Path], out: &Path, flags: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .arg("merge")
        .args(dirs)
        .arg("--out")
        .arg(out)
        .args(flags)
        .output()
        .expect("run perflab merge")
}

/// A copy of the run directory `from`'s store in `tmp/name`, changed by the SQL `change`.
fn altered(tmp: &Path, from: &Path, name: &str, change: &str) -> PathBuf {
    let dir = tmp.join(name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::copy(from.join("perflab.db"), dir.join("perflab.db")).expect("copy the store");
    let db = rusqlite::Connection::open(dir.join("perflab.db")).expect("open");
    db.execute_batch(change).expect("alter the copy");
    dir
}

/// Merge the two segments' run directories `seg` (0/2 then 1/2, `requests` in all) into `tmp`,
/// and check the merged run, its report and the refusals.
pub fn merged_equals_the_union(tmp: &Path, seg: &[PathBuf], requests: f64) {
    let out = tmp.join("merged");
    let done = merge(&[&seg[1], &seg[0]], &out);
    let text = String::from_utf8_lossy(&done.stdout);
    assert_eq!(done.status.code(), Some(0), "{}", String::from_utf8_lossy(&done.stderr));
    assert!(text.contains("merged 2 segments (1 trial(s))"), "{text}");

    let merged = Store::open(&out).expect("the merged run is a run");
    let trials = merged.trials().expect("trials");
    assert_eq!(trials.len(), 1);
    assert_eq!(trials[0].metric("requests"), Some(requests), "the segments' requests add up");
    // The union of the segments' latencies, one histogram: the merged percentiles are its.
    let mut union = perflab::model::latency_histogram();
    for dir in seg {
        let t = Store::open(dir).expect("segment").trials().expect("trials");
        let h = t[0].histograms.iter().find(|h| h.name == "latency").expect("latency histogram");
        union.add(&h.hist).expect("add");
    }
    let lat = trials[0].histograms.iter().find(|h| h.name == "latency").expect("merged histogram");
    assert_eq!(lat.hist.len(), requests as u64);
    for (name, q) in [("latency_p50_ms", 0.5), ("latency_p99_ms", 0.99)] {
        assert_eq!(trials[0].metric(name), Some(union.value_at_quantile(q) as f64 / 1000.0), "{name}");
    }
    let mark = merged.merged().expect("read").expect("a merged run says what it merged");
    assert_eq!(mark.count, 2);
    assert_eq!(mark.segments.iter().map(|s| s.segment.as_str()).collect::<Vec<_>>(), ["0/2", "1/2"]);
    // Each segment's machine keeps its own samples.
    let hosts = merged.sample_hosts().expect("hosts");
    assert!(
        hosts.contains(&"segment-0".to_string()) && hosts.contains(&"segment-1".to_string()),
        "{hosts:?}"
    );

    let report = std::fs::read_to_string(out.join("report.md")).expect("the merge writes the report");
    // On the first screen, the machines that ran it; in the notes, how late each began.
    assert!(report.contains("What ran: plan split merged from 2 segments (0/2 on "), "{report}");
    assert!(report.contains("2 segments merged: 0/2 on "), "{report}");

    refusals(tmp, seg, &out);
}

fn refusals(tmp: &Path, seg: &[PathBuf], out: &Path) {
    common::one_line_exit_2(&merge(&[&seg[0]], &tmp.join("m1")), "segment 1/2 of 2 is missing");
    common::one_line_exit_2(&merge(&[&seg[0], &seg[1]], out), "already holds a run");
    // Segment 1 of another plan: its store says so by its plan's hash.
    let other = tmp.join("other");
    std::fs::create_dir_all(&other).expect("mkdir");
    std::fs::copy(seg[1].join("perflab.db"), other.join("perflab.db")).expect("copy the store");
    let db = rusqlite::Connection::open(other.join("perflab.db")).expect("open");
    let mark: String = db
        .query_row("SELECT value FROM meta WHERE key = 'segment'", [], |r| r.get(0))
        .expect("mark");
    let mut mark: serde_json::Value = serde_json::from_str(&mark).expect("json");
    mark["plan_sha256"] = serde_json::Value::String("0".repeat(64));
    db.execute("UPDATE meta SET value = ?1 WHERE key = 'segment'", [mark.to_string()])
        .expect("write");
    drop(db);
    let two = tmp.join("m2");
    common::one_line_exit_2(&merge(&[&seg[0], &other], &two), "ran different plans");
    assert!(!two.exists() && !tmp.join("m1").exists(), "a refused merge leaves nothing");
    partial(tmp, seg);
    interrupted(tmp, seg);
}

/// Ctrl-C at any moment of a merge leaves either no merged run (exit 130) or, when the merge had
/// ended, the whole of it (exit 0, its report written): never half a run.
fn interrupted(tmp: &Path, seg: &[PathBuf]) {
    let mut stopped = 0;
    for (k, ms) in [5u64, 30, 80, 150, 300].into_iter().enumerate() {
        let out = tmp.join(format!("mi{k}"));
        let child = Command::new(BIN)
            .arg("merge")
            .args(seg)
            .arg("--out")
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run perflab merge");
        std::thread::sleep(std::time::Duration::from_millis(ms));
        // SAFETY: kill takes two integers; the pid is the merge this test started.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let o = child.wait_with_output().expect("merge ends");
        let err = String::from_utf8_lossy(&o.stderr);
        match o.status.code() {
            Some(130) => {
                stopped += 1;
                assert!(!out.exists(), "an interrupted merge left {}: {err}", out.display());
                assert!(err.contains("interrupted: nothing merged"), "{err}");
            }
            Some(0) => {
                assert!(out.join("report.md").is_file(), "a finished merge has its report");
                Store::open(&out).expect("a finished merge is a run");
            }
            // Before perflab took the signal (still starting): nothing was written yet.
            None => assert!(!out.exists(), "a merge killed while starting left {}", out.display()),
            c => panic!("merge after Ctrl-C at {ms} ms: exit {c:?}: {err}"),
        }
    }
    eprintln!("{stopped} of 5 merges stopped by Ctrl-C");
}

/// A segment killed mid-run (its run still `running`, as a SIGKILL leaves it) and one that began
/// later than its tolerance are refused, naming them; `--allow-partial` merges what is there,
/// marked PARTIAL on the report's first line, the killed segment left out of the totals.
fn partial(tmp: &Path, seg: &[PathBuf]) {
    let killed = altered(tmp, &seg[1], "killed", "UPDATE run SET status = 'running', ended_unix = NULL");
    let out = tmp.join("m3");
    let refused = merge(&[&seg[0], &killed], &out);
    common::one_line_exit_2(&refused, "cannot merge: segment 1/2 (");
    let line = String::from_utf8_lossy(&refused.stderr);
    assert!(line.contains("killed) did not complete (its run is running)"), "{line}");
    assert!(line.contains("--allow-partial"), "{line}");
    let late = altered(
        tmp,
        &seg[1],
        "late",
        "UPDATE meta SET value = json_set(value, '$.late_s', 5.0, '$.tolerance_s', 0.5) WHERE key = 'segment'",
    );
    common::one_line_exit_2(&merge(&[&seg[0], &late], &out), "began 5.000 s after its --start-at");
    assert!(!out.exists(), "a refused merge leaves nothing");

    let done = merge_with(&[&seg[0], &killed], &out, &["--allow-partial", "--format", "md"]);
    assert_eq!(done.status.code(), Some(0), "{}", String::from_utf8_lossy(&done.stderr));
    let warned = String::from_utf8_lossy(&done.stderr);
    assert!(warned.contains("warning: PARTIAL: 1 of 2 segments merged"), "{warned}");
    let merged = Store::open(&out).expect("the partial merge is a run");
    let zero = Store::open(&seg[0]).expect("segment 0");
    let requests = |s: &Store| s.trials().expect("trials")[0].metric("requests").expect("requests");
    assert_eq!(requests(&merged), requests(&zero), "the killed segment is left out of the totals");
    let mark = merged.merged().expect("read").expect("mark");
    assert_eq!(mark.segments.len(), 1);
    assert!(mark.partial[0].contains("did not complete"), "{:?}", mark.partial);
    let report = std::fs::read_to_string(out.join("report.md")).expect("report");
    assert!(report.contains("merged from 1 of 2 segments (0/2 on "), "{report}");
    assert!(report.contains("PARTIAL: segment 1/2 ("), "{report}");
    // And a warning of its own on the first screen.
    assert!(
        report.contains("merged only part of the load (--allow-partial): segment 1/2 ("),
        "{report}"
    );
}
