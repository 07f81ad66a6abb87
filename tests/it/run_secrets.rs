//! No secret kept, anywhere: plans whose credentials come from the matrix, a multi-line string, an
//! escaped key, ab's `-C`, a `-H 'Cookie: ...'` argument and variables marked secret are run for
//! real (short phases, loopback); then every file of the run directory (the SQLite file and, while
//! the run is going, its -wal included), a report built again elsewhere, and what `perflab run`
//! printed are searched for each secret. The plan's copy must still be TOML.

use perflab::store::Store;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{files_under, free_port, only_run_dir, write_plan};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

const PHASES: &str = r#"[phases]
baseline = "200ms"
warmup = "0s"
load = "400ms"
recovery = "200ms"
interval = "100ms"
"#;

/// One secret per way in, so a leak names its source.
const FROM_MATRIX: &str = "mtxS3cret0001";
const MULTI_LINE: &str = "mlS3cret0002";
const ESCAPED_KEY: &str = "escS3cret0003";
const TARGET_ENV: &str = "envS3cret0004";
const AB_COOKIE: &str = "abS3cret0005";
const AB_AUTH: &str = "abS3cret0006";
const WORKLOAD_ENV: &str = "wenvS3cret0007";
const HEADER_ARG: &str = "hdrS3cret0008";

/// `perflab run` in `tmp` on `body`, with a snapshot of the run directory taken while the run is
/// going (once its first trial is stored, while the second runs: the -wal is there then). Returns
/// the run directory, what the run printed, and the snapshot.
fn run(tmp: &Path, body: &str, expect_code: i32) -> (PathBuf, String, Vec<(String, Vec<u8>)>) {
    let plan = write_plan(tmp, body);
    let runs = tmp.join("runs");
    let child = Command::new(BIN)
        .args(["run", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn perflab run");
    let mut snapshot = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let dir = std::fs::read_dir(&runs)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .map(|e| e.path());
        if let Some(dir) = dir {
            if Store::open(&dir).and_then(|s| s.trial_ids()).is_ok_and(|ids| !ids.is_empty()) {
                snapshot = readable_files(&dir);
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("wait");
    let printed = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(expect_code), "{printed}");
    assert!(!snapshot.is_empty(), "the run directory was seen during the run");
    (only_run_dir(&runs), printed, snapshot)
}

/// The files under `dir` that can be read now (one may go away while the run writes).
fn readable_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).ok()?)))
        .collect()
}

fn holds(bytes: &[u8], secret: &str) -> bool {
    bytes.windows(secret.len()).any(|w| w == secret.as_bytes())
}

/// Every file of the run, of a report built again elsewhere, of the snapshot, and what was printed:
/// none holds any of `secrets`. The plan copy is TOML. Returns the rebuilt report's directory.
fn assert_nothing_kept(tmp: &Path, dir: &Path, printed: &str, snapshot: &[(String, Vec<u8>)], secrets: &[&str]) -> PathBuf {
    assert!(
        snapshot.iter().any(|(n, b)| n.ends_with("-wal") && !b.is_empty()),
        "the snapshot holds the store's -wal: {:?}",
        snapshot.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    let again = tmp.join("report-again");
    let o = Command::new(BIN)
        .arg("report")
        .arg(dir)
        .arg("--out")
        .arg(&again)
        .output()
        .expect("report");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let run_files = files_under(dir);
    assert!(run_files.iter().any(|(n, _)| n == "perflab.db"), "the store is searched");
    assert!(run_files.iter().any(|(n, _)| n.ends_with(".svg")), "charts are searched");
    let files = run_files
        .into_iter()
        .chain(files_under(&again))
        .chain(snapshot.iter().map(|(n, b)| (format!("(during the run) {n}"), b.clone())))
        .chain([("(printed)".to_string(), printed.as_bytes().to_vec())]);
    for (name, bytes) in files {
        for s in secrets {
            assert!(!holds(&bytes, s), "{name} holds the secret {s}");
        }
    }
    let copy = std::fs::read_to_string(dir.join("plan.toml")).expect("plan copy");
    toml::from_str::<toml::Table>(&copy).unwrap_or_else(|e| panic!("the plan copy is not TOML: {e}\n{copy}"));
    again
}

#[test]
fn header_values_from_the_matrix_a_multi_line_string_an_escaped_key_and_a_marked_variable_are_kept_nowhere() {
    let tmp = tempfile::tempdir().expect("tmp");
    let port = free_port();
    // The target prints its secret variable, as a misbehaving server might: its output tail is stored.
    let body = format!(
        r#"name = "secrets-http"
repetitions = 2
[target]
command = "echo pw=$PGPASSWORD >&2; exec {BIN} serve --port {port} --workers 2"
env = {{ PGPASSWORD = "{TARGET_ENV}" }}
secrets = ["PGPASSWORD"]
ready = {{ tcp = "127.0.0.1:{port}", timeout = "10s" }}

[workload]
type = "http"
url = "http://127.0.0.1:{port}/bytes/100"
connections = 2
headers = {{ Authorization = "${{auth}}", "Proxy-Authorization" = """
Basic {MULTI_LINE}""", "Cook\u0069e" = "sid={ESCAPED_KEY}" }}

[matrix]
auth = ["Bearer {FROM_MATRIX}"]

{PHASES}"#
    );
    let (dir, printed, snapshot) = run(tmp.path(), &body, 0);
    let again = assert_nothing_kept(
        tmp.path(),
        &dir,
        &printed,
        &snapshot,
        &[FROM_MATRIX, MULTI_LINE, ESCAPED_KEY, TARGET_ENV],
    );
    // The run measured with the real values, and shows the parameter as [redacted].
    let store = Store::open(&dir).expect("store");
    let trials = store.trials().expect("trials");
    assert_eq!(trials.len(), 2);
    assert!(trials.iter().all(|t| t.ok()), "{:?}", trials[0].failure);
    assert!(trials[0].metric("requests_per_s").unwrap_or(0.0) > 0.0);
    assert!(trials[0].stderr_tail.as_deref().unwrap_or("").contains("pw=[redacted]"));
    assert_eq!(store.points().expect("points")[0].label, "auth=[redacted]");
    assert_eq!(trials[0].params_json, r#"{"auth":"[redacted]"}"#);
    for report in ["report.md", "report.json", "report.html"] {
        let text = std::fs::read_to_string(again.join(report)).expect("report");
        assert!(text.contains("auth=[redacted]"), "{report} names the point by its redacted label");
    }
    let copy = std::fs::read_to_string(dir.join("plan.toml")).expect("copy");
    let copy: toml::Table = toml::from_str(&copy).expect("TOML");
    assert_eq!(copy["workload"]["headers"]["Authorization"].as_str(), Some("${auth}"));
    assert_eq!(copy["workload"]["headers"]["Proxy-Authorization"].as_str(), Some("[redacted]"));
    assert_eq!(copy["matrix"]["auth"][0].as_str(), Some("[redacted]"));
    assert_eq!(copy["target"]["env"]["PGPASSWORD"].as_str(), Some("[redacted]"));
    drop(store);
    // Resuming from the store alone is refused (its requests would carry [redacted]).
    let out = Command::new(BIN)
        .args(["run", "--quiet", "--resume"])
        .arg(&dir)
        .output()
        .expect("resume");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("give the plan file too"), "{err}");
}

#[test]
fn ab_cookie_and_basic_auth_options_and_a_marked_workload_variable_are_kept_nowhere() {
    if perflab::workload::exec::preflight::find_program("ab", None, None).is_none() {
        eprintln!("SKIPPED: ab is not installed (Debian package apache2-utils): ab -C redaction not tested");
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let port = free_port();
    let body = format!(
        r#"name = "secrets-ab"
repetitions = 2
[target]
command = ["{BIN}", "serve", "--port", "{port}", "--workers", "2"]
ready = {{ tcp = "127.0.0.1:{port}", timeout = "10s" }}

[workload]
type = "exec"
command = ["ab", "-q", "-n", "200", "-c", "2", "-C", "sid={AB_COOKIE}", "-A", "bench:{AB_AUTH}", "http://127.0.0.1:{port}/bytes/100"]
env = {{ API_TOKEN = "{WORKLOAD_ENV}" }}
secrets = ["API_TOKEN"]

{PHASES}"#
    );
    let (dir, printed, snapshot) = run(tmp.path(), &body, 0);
    assert_nothing_kept(tmp.path(), &dir, &printed, &snapshot, &[AB_COOKIE, AB_AUTH, WORKLOAD_ENV]);
    let store = Store::open(&dir).expect("store");
    let trials = store.trials().expect("trials");
    assert!(trials[0].ok(), "{:?}", trials[0].failure);
    assert!(trials[0].metric("requests_per_s").unwrap_or(0.0) > 0.0, "ab measured");
}

#[test]
fn a_failing_command_that_prints_its_credentials_leaves_them_nowhere() {
    let tmp = tempfile::tempdir().expect("tmp");
    // The command prints its arguments and its secret variable on both streams, then fails: the
    // failure message (the command line and its last stderr line) and the raw output hold them.
    let body = format!(
        r#"name = "secrets-fail"
repetitions = 2
[workload]
type = "exec"
adapter = "none"
command = ["sh", "-c", "echo \"$*\"; echo \"token $API_TOKEN\"; echo \"$* $API_TOKEN\" >&2; exit 3", "x", "-H", "Cookie: sid={HEADER_ARG}"]
env = {{ API_TOKEN = "{WORKLOAD_ENV}" }}
secrets = ["API_TOKEN"]

{PHASES}"#
    );
    let (dir, printed, snapshot) = run(tmp.path(), &body, 1);
    assert_nothing_kept(tmp.path(), &dir, &printed, &snapshot, &[HEADER_ARG, WORKLOAD_ENV]);
    let store = Store::open(&dir).expect("store");
    let failure = store.trials().expect("trials")[0].failure.as_ref().expect("failed").to_string();
    assert!(
        failure.contains("Cookie: [redacted]") && failure.contains("[redacted]"),
        "{failure}"
    );
    let raw = store.raw_output(0).expect("raw").join("\n");
    assert!(raw.contains("token [redacted]"), "{raw}");
}

const HOOK: &str = "hookS3cret0009";
const TEARDOWN: &str = "tdS3cret0010";
const HTTP_HEADER: &str = "httpS3cret0011";
const DB_PASSWORD: &str = "dbS3cret0012";

/// Every file under the machine's run list `rt`: each entry's name, where it points, its bytes.
fn runtime_files(rt: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(rt).into_iter().flatten().flatten() {
        let p = e.path();
        let name = format!("(run list) {}", e.file_name().to_string_lossy());
        let target = std::fs::read_link(&p).map(|t| t.display().to_string()).unwrap_or_default();
        let bytes = std::fs::read(&p).unwrap_or_default();
        out.push((
            name,
            [e.file_name().to_string_lossy().as_bytes(), target.as_bytes(), &bytes].concat(),
        ));
    }
    out
}

#[test]
fn a_hook_secret_written_twice_and_a_marked_secret_a_teardown_names_are_kept_nowhere_even_by_a_killed_run() {
    let tmp = tempfile::tempdir().expect("tmp");
    let rt = tmp.path().join("rt");
    // The setup names the curl password twice; the teardown names the value of a variable marked
    // secret; the workload prints that variable.
    let body = format!(
        r#"name = "secrets-hooks"
repetitions = 4
[workload]
type = "exec"
adapter = "none"
command = ["sh", "-c", "sleep 0.3; echo token $API_TOKEN"]
env = {{ API_TOKEN = "{TEARDOWN}" }}
secrets = ["API_TOKEN"]

[matrix]
variant = ["a"]

[variant.a]
setup = ": curl -u admin:{HOOK} http://127.0.0.1:1/; echo hook {HOOK} >&2"
teardown = "test -n {TEARDOWN}"

{PHASES}"#
    );
    let plan = write_plan(tmp.path(), &body);
    let runs = tmp.path().join("runs");
    let perflab = || {
        let mut c = Command::new(BIN);
        c.env("PERFLAB_RUNTIME_DIR", &rt).stdout(Stdio::piped()).stderr(Stdio::piped());
        c
    };
    let mut child = perflab()
        .args(["run", "--json", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .spawn()
        .expect("spawn perflab run");
    // Once the first trial is stored (the WAL and started.json are there), perflab is killed.
    let mut snapshot = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline && snapshot.is_empty() {
        let dir = std::fs::read_dir(&runs)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .map(|e| e.path());
        if let Some(dir) = dir.filter(|d| Store::open(d).and_then(|s| s.trial_ids()).is_ok_and(|ids| !ids.is_empty())) {
            snapshot = readable_files(&dir);
            snapshot.extend(runtime_files(&rt));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL");
    let killed = child.wait_with_output().expect("wait");
    let dir = only_run_dir(&runs);
    assert!(
        snapshot.iter().any(|(n, _)| n == "started.json"),
        "the run's record was seen during the run: {:?}",
        snapshot.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    // What the killed run left: its record (teardown pending, withheld) and its run list entry.
    let left = std::fs::read_to_string(dir.join("started.json")).expect("started.json stays after SIGKILL");
    let rec: serde_json::Value = serde_json::from_str(&left).expect("JSON");
    assert_eq!(rec["teardown"]["withheld"], true, "{left}");
    assert_eq!(rec["teardown"]["commands"][0], "test -n [redacted]", "{left}");
    let mut after_kill = vec![("(after SIGKILL) started.json".to_string(), left.into_bytes())];
    after_kill.extend(runtime_files(&rt));
    assert!(after_kill.len() > 1, "the killed run is still listed in the run list");

    // Resumed with the plan file: the teardown the killed run left is not run from the record.
    let resumed = perflab()
        .args(["run", "--json", "--resume"])
        .arg(&dir)
        .arg(&plan)
        .output()
        .expect("resume");
    let said = String::from_utf8_lossy(&resumed.stderr);
    assert_eq!(resumed.status.code(), Some(0), "{said}");
    assert!(said.contains("did not run the teardown of variant a"), "{said}");
    let json: serde_json::Value = serde_json::from_slice(&resumed.stdout).expect("--json");
    assert_eq!(json["status"], "complete", "{json}");
    let export = Command::new(BIN).arg("export").arg(&dir).output().expect("export");
    assert_eq!(export.status.code(), Some(0), "{}", String::from_utf8_lossy(&export.stderr));
    let printed = [&killed.stdout, &killed.stderr, &resumed.stdout, &resumed.stderr]
        .iter()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect::<String>();
    snapshot.extend(after_kill);
    assert_nothing_kept(tmp.path(), &dir, &printed, &snapshot, &[HOOK, TEARDOWN]);
    assert!(dir.join("csv").join("run.csv").is_file(), "the export's CSV files are searched");
    let copy: toml::Table = toml::from_str(&std::fs::read_to_string(dir.join("plan.toml")).expect("copy")).expect("TOML");
    assert_eq!(
        copy["variant"]["a"]["setup"].as_str(),
        Some(": curl -u [redacted] http://127.0.0.1:1/; echo hook [redacted] >&2")
    );
    let store = Store::open(&dir).expect("store");
    assert_eq!(
        store.trials().expect("trials").len(),
        4,
        "every trial ran, before and after the kill"
    );
    assert!(store.run().expect("run").plan_source.contains("echo hook [redacted]"));
}

#[test]
fn the_json_of_stand_alone_commands_holds_no_credential() {
    let tmp = tempfile::tempdir().expect("tmp");
    let port = free_port();
    let mut server = Command::new(BIN)
        .args(["serve", "--port", &port.to_string(), "--workers", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let http = Command::new(BIN)
        .args([
            "http",
            &format!("http://127.0.0.1:{port}/bytes/10"),
            "-c",
            "1",
            "-d",
            "500ms",
            "--json",
        ])
        .args([
            "-H",
            &format!("Authorization: Bearer {HTTP_HEADER}"),
            "-H",
            &format!("Cookie: sid={HTTP_HEADER}"),
        ])
        .output()
        .expect("http");
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(http.status.code(), Some(0), "{}", String::from_utf8_lossy(&http.stderr));
    let oltp = Command::new(BIN)
        .args([
            "load",
            "oltp",
            "--db",
            &format!("postgres://bench:{DB_PASSWORD}@127.0.0.1:9/x"),
            "-d",
            "1s",
            "--json",
        ])
        .current_dir(tmp.path())
        .output()
        .expect("oltp");
    assert_ne!(oltp.status.code(), Some(0), "nothing listens on port 9");
    for (what, out) in [("http", &http), ("load oltp", &oltp)] {
        for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            for s in [HTTP_HEADER, DB_PASSWORD] {
                assert!(!holds(bytes, s), "{what} {stream} holds {s}: {}", String::from_utf8_lossy(bytes));
            }
        }
    }
}
