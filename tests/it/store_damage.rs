//! Damaged stores: a real run's store (one trial, so every command meets the same row first),
//! damaged by SQL in each way a store was found damaged (a trial naming a point that does not
//! exist, parameters or primary figures that are not JSON, a histogram or a packed series that does
//! not decode, a value of the wrong type, text that is not UTF-8, a missing row, table or column,
//! a file that is not a database). `report`, `export`, `compare` and `run --resume` each refuse it
//! with the same one line naming the damage and exit code 3; `perflab store check` lists it and
//! exits 3; the undamaged store (and the stores of older schema versions) check sound, exit 0.
//! A store on a full disk is said to be on a full disk (exit 1), not damaged.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{free_port, only_run_dir, write_plan};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

/// A real run of one trial of the http workload against the built-in server, sampled: every table
/// a report reads has rows (metrics, histograms, per-second series, packed samples, summaries).
fn real_store(tmp: &Path) -> PathBuf {
    let port = free_port();
    let plan = write_plan(
        tmp,
        &format!(
            r#"name = "damage"
[target]
command = ["{BIN}", "serve", "--port", "{port}", "--workers", "1"]
ready = {{ tcp = "127.0.0.1:{port}", timeout = "10s" }}
[workload]
type = "http"
url = "http://127.0.0.1:{port}/bytes/100"
connections = 2
[phases]
baseline = "300ms"
warmup = "0s"
load = "1s"
recovery = "300ms"
interval = "100ms"
"#
        ),
    );
    let runs = tmp.join("runs");
    let o = perflab(tmp)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = only_run_dir(&runs);
    let db = rusqlite::Connection::open(dir.join("perflab.db")).expect("db");
    for table in ["metric", "histogram", "series", "sample_series", "phase_summary"] {
        let n: i64 = db
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .expect("count");
        assert!(n > 0, "the run stored rows in {table}");
    }
    dir
}

/// perflab with its run list in `tmp/rt`.
fn perflab(tmp: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.env("PERFLAB_RUNTIME_DIR", tmp.join("rt"));
    c
}

/// A copy of the run directory `good` (the store alone) at `to`, with `sql` run on its store.
fn damaged_copy(good: &Path, to: &Path, sql: &str) {
    std::fs::create_dir_all(to).expect("dir");
    std::fs::copy(good.join("perflab.db"), to.join("perflab.db")).expect("copy");
    std::fs::copy(good.join("plan.toml"), to.join("plan.toml")).expect("copy plan");
    // As a hand edit would: with the sqlite3 shell's defaults (foreign keys not enforced).
    rusqlite::Connection::open(to.join("perflab.db"))
        .and_then(|c| c.execute_batch(&format!("PRAGMA foreign_keys = OFF; {sql}")))
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// What each command that reads a store printed and returned for the damaged store `dir`.
fn every_command(tmp: &Path, dir: &Path, good: &Path) -> Vec<(&'static str, Output)> {
    let out = tmp.join("out");
    let _ = std::fs::remove_dir_all(&out);
    let run = |name: &'static str, args: &[&std::ffi::OsStr]| (name, perflab(tmp).args(args).output().expect(name));
    vec![
        run("report", &["report".as_ref(), dir.as_os_str(), "--out".as_ref(), out.as_os_str()]),
        run("export", &["export".as_ref(), dir.as_os_str(), "--out".as_ref(), out.as_os_str()]),
        run(
            "compare",
            &[
                "compare".as_ref(),
                dir.as_os_str(),
                good.as_os_str(),
                "--out".as_ref(),
                out.as_os_str(),
            ],
        ),
        run(
            "run --resume",
            &["run".as_ref(), "--quiet".as_ref(), "--resume".as_ref(), dir.as_os_str()],
        ),
    ]
}

/// The start and the end of the line every command gives for damage that begins `what` in the
/// store in `dir`.
fn line(dir: &Path, what: &str) -> (String, String) {
    (
        format!("perflab: error: {}: {what}", dir.join("perflab.db").display()),
        format!(
            "; the store is damaged: `perflab store check {}` lists what is wrong; restore it from a copy or run the plan again",
            dir.display()
        ),
    )
}

/// Each kind of damage: the SQL that makes it, and what the line says of it.
const CORPUS: &[(&str, &str)] = &[
    (
        "UPDATE trial SET point = 999 WHERE id = 0",
        "trial 0 names point 999, which the store does not have",
    ),
    (
        "UPDATE point SET params_json = '{\"c\": 1' WHERE id = 0",
        "point 0: its parameters (params_json) are not a JSON object: \"{\\\"c\\\": 1\"",
    ),
    (
        "UPDATE trial SET params_json = '[1, 2]' WHERE id = 0",
        "trial 0: its parameters (params_json) are not a JSON object: \"[1, 2]\"",
    ),
    (
        "UPDATE meta SET value = 'garbage' WHERE key = 'primary'",
        "the run's primary figures (meta key primary) are not the JSON perflab writes there: \"garbage\"",
    ),
    (
        "INSERT INTO meta (key, value) VALUES ('segment', '{\"segment\": \"1/2\"}')",
        "the facts of the run's segment (meta key segment) are not the JSON perflab writes there: \"{\\\"segment\\\": \\\"1/2\\\"}\"",
    ),
    (
        "UPDATE histogram SET hdr_v2_deflate = x'1c849303deadbeef' WHERE trial_id = 0 AND name = 'latency'",
        "trial 0's histograms: histogram latency cannot be decoded (its bytes are not the HdrHistogram encoding perflab writes)",
    ),
    (
        "UPDATE metric SET value = 'n/a' WHERE trial_id = 0 AND name = 'requests_per_s'",
        "trial 0's metrics: column value holds text where a number belongs",
    ),
    (
        "UPDATE metric SET name = CAST(x'72657173ff' AS TEXT) WHERE trial_id = 0 AND name = 'requests_per_s'",
        "trial 0's metrics: column name holds text that is not valid UTF-8 (its bytes were altered)",
    ),
    (
        "UPDATE trial SET workload = CAST(x'68ff' AS TEXT) WHERE id = 0",
        "trial 0: column workload holds text that is not valid UTF-8 (its bytes were altered)",
    ),
    (
        "UPDATE trial SET repetition = 'one' WHERE id = 0",
        "trial 0: column repetition holds text where a whole number belongs",
    ),
    (
        "UPDATE phase_summary SET n_load = 'many' WHERE trial_id = 0 AND metric_id = (SELECT min(metric_id) FROM phase_summary)",
        "trial 0's per-phase summaries: column n_load holds text where a whole number belongs",
    ),
    (
        "UPDATE sample_series SET vals = x'0102' WHERE trial_id = 0 AND metric_id = (SELECT min(metric_id) FROM sample_series)",
        "trial 0's monitor samples: a packed series is damaged: it ends early",
    ),
    (
        "UPDATE sample_series SET n_values = 1000000000000 WHERE trial_id = 0 AND metric_id = (SELECT min(metric_id) FROM sample_series)",
        "trial 0's monitor samples: a packed series is damaged: 1000000000000 values cannot fit in its",
    ),
    ("DELETE FROM run", "the run's facts are missing (table run has no row)"),
    (
        "UPDATE run SET status = 'finished'",
        "the run's status is \"finished\", not one perflab writes",
    ),
    ("DROP TABLE histogram", "table histogram is missing"),
    ("ALTER TABLE metric DROP COLUMN unit", "table metric has no column unit"),
    (
        "UPDATE meta SET value = 'three' WHERE key = 'schema_version'",
        "the store's schema version (meta key schema_version) is \"three\", not one perflab writes",
    ),
    (
        "DELETE FROM meta WHERE key = 'schema_version'",
        "the store's schema version (meta key schema_version) is missing",
    ),
];

#[test]
fn each_kind_of_damage_is_one_line_and_exit_3_from_every_command_and_store_check_lists_it() {
    let tmp = tempfile::tempdir().expect("tmp");
    let good = real_store(tmp.path());
    let o = perflab(tmp.path()).args(["store", "check"]).arg(&good).output().expect("check");
    let said = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{said}{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        said.contains(&format!(
            "perflab.db: sound: schema version {}, 1 trial(s) of 1 point(s), run complete",
            perflab::store::SCHEMA_VERSION
        )),
        "{said}"
    );
    let mut kinds = CORPUS
        .iter()
        .map(|(sql, what)| (sql.to_string(), what.to_string()))
        .collect::<Vec<_>>();
    // A file that is not a database at all: its first page overwritten.
    kinds.push((String::new(), "the file is not a SQLite database (cut short or overwritten)".into()));
    for (i, (sql, what)) in kinds.iter().enumerate() {
        let dir = tmp.path().join(format!("d{i}"));
        if sql.is_empty() {
            damaged_copy(&good, &dir, "SELECT 1");
            let mut bytes = std::fs::read(dir.join("perflab.db")).expect("read");
            bytes[..100].copy_from_slice(&[0x5a; 100]);
            std::fs::write(dir.join("perflab.db"), bytes).expect("write");
        } else {
            damaged_copy(&good, &dir, sql);
        }
        let (start, end) = line(&dir, what);
        let mut lines = Vec::new();
        for (cmd, o) in every_command(tmp.path(), &dir, &good) {
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(3), "{cmd} of `{sql}`: {err}");
            assert_eq!(err.lines().count(), 1, "{cmd} of `{sql}`: one line: {err}");
            let got = err.trim_end().to_string();
            assert!(
                got.starts_with(&start) && got.ends_with(&end),
                "{cmd} of `{sql}`:\n got {got}\nwant {start}…{end}"
            );
            assert!(!tmp.path().join("out").join("report.md").exists(), "{cmd} wrote no report");
            lines.push((cmd, got));
        }
        assert!(
            lines.iter().all(|(_, l)| *l == lines[0].1),
            "the same line from every command: {lines:#?}"
        );
        let o = perflab(tmp.path()).args(["store", "check"]).arg(&dir).output().expect("check");
        let listed = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.status.code(), Some(3), "store check of `{sql}`: {listed}");
        assert!(listed.contains(what.as_str()), "store check of `{sql}` names the damage: {listed}");
    }
}

#[test]
fn stores_of_older_schema_versions_check_sound() {
    for v in ["v1", "v2"] {
        let tmp = tempfile::tempdir().expect("tmp");
        let sql =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/store/{v}.sql"))).expect("fixture");
        rusqlite::Connection::open(tmp.path().join("perflab.db"))
            .and_then(|c| c.execute_batch(&sql))
            .expect("load");
        let o = perflab(tmp.path())
            .args(["store", "check"])
            .arg(tmp.path())
            .output()
            .expect("check");
        let said = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{v}: {said}{}", String::from_utf8_lossy(&o.stderr));
        assert!(said.contains(": sound: schema version"), "{said}");
    }
}

#[test]
fn a_store_on_a_full_disk_is_said_to_be_on_a_full_disk_not_damaged() {
    let tmp = tempfile::tempdir().expect("tmp");
    let good = real_store(tmp.path());
    let mnt = tmp.path().join("full");
    std::fs::create_dir_all(&mnt).expect("mnt");
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "perflab-test"])
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        crate::common::skip_unless_required("mounting a tmpfs needs root: a store on a full disk is not tested");
        return;
    }
    let result = std::panic::catch_unwind(|| {
        let dir = mnt.join("run");
        damaged_copy(&good, &dir, "SELECT 1");
        let mut fill = std::fs::File::create(mnt.join("fill")).expect("fill");
        let block = vec![0u8; 64 * 1024];
        while std::io::Write::write_all(&mut fill, &block).is_ok() {}
        drop(fill);
        for (cmd, o) in every_command(tmp.path(), &dir, &good) {
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{cmd}: {err}");
            assert_eq!(err.lines().count(), 1, "{cmd}: {err}");
            assert!(err.contains("run/perflab.db: no room left on its device"), "{cmd}: {err}");
        }
    });
    let _ = Command::new("umount").arg(&mnt).status();
    if let Err(p) = result {
        std::panic::resume_unwind(p);
    }
}
