//! Hostile plans: whatever a plan holds, perflab never panics, never allocates without bound and
//! never starts what would fail at run time. Each bad plan is refused by `perflab run --dry-run`
//! with exit code 2 and one line on stderr, `file:line:col` first, in the plan's terms (no Rust type
//! names, no panic, no value echoed whole). The valid plans of the repository are still accepted.

use perflab::plan::{self, MAX_TRIALS};
use perflab::store::Store;
use std::path::Path;
use std::process::Command;

use crate::common::write_plan;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");
const WRK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tools/wrk");
const FIO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tools/fio");

const EXEC: &str = "name = \"t\"\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n";
const HTTP: &str = "name = \"t\"\n[workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:9/\"\n";
const TARGET: &str = "name = \"t\"\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n[target]\ncommand = [\"sleep\", \"5\"]\n";

const TINY: &str = "[phases]\nbaseline = \"0s\"\nwarmup = \"0s\"\nload = \"50ms\"\nrecovery = \"0s\"\ninterval = \"100ms\"\n";

/// Words a message for people never holds.
const FORBIDDEN: &[&str] = &[
    "struct",
    "enum",
    "untagged",
    "u64",
    "i64",
    "f64",
    "Option",
    "::",
    "panicked",
    "RUST_BACKTRACE",
];

/// (what, plan, a fragment the one line must hold).
fn bad_plans() -> Vec<(&'static str, String, &'static str)> {
    [overflows(), run_time_failures(), messages()].concat()
}

/// Durations, sizes and counts that overflowed or allocated without bound.
fn overflows() -> Vec<(&'static str, String, &'static str)> {
    vec![
        // Durations that overflowed a Duration or an Instant.
        (
            "load 1e20",
            format!("{EXEC}[phases]\nload = 1e20\n"),
            "longer than the longest duration",
        ),
        (
            "load u64::MAX s",
            format!("{EXEC}[phases]\nload = \"18446744073709551615s\"\n"),
            "longest duration",
        ),
        ("load 9e18", format!("{EXEC}[phases]\nload = 9e18\n"), "longest duration"),
        ("baseline 9e18", format!("{EXEC}[phases]\nbaseline = 9e18\n"), "longest duration"),
        ("warmup 366 days", format!("{EXEC}[phases]\nwarmup = \"366d\"\n"), "365 days"),
        ("load nan", format!("{EXEC}[phases]\nload = nan\n"), "not a number"),
        ("load inf", format!("{EXEC}[phases]\nload = inf\n"), "longest duration"),
        ("load -inf", format!("{EXEC}[phases]\nload = -inf\n"), "negative"),
        ("interval text nan", format!("{EXEC}[phases]\ninterval = \"nan\"\n"), "not a number"),
        ("exec timeout 1e300", format!("{EXEC}timeout = 1e300\n"), "longest duration"),
        ("http timeout 1e19s", format!("{HTTP}timeout = \"1e19s\"\n"), "invalid duration"),
        (
            "http duration 400d",
            format!("{HTTP}requests = 5\nduration = \"400d\"\n"),
            "longest duration",
        ),
        ("stop grace 1e19", format!("{TARGET}stop = {{ grace = 1e19 }}\n"), "grace"),
        ("ready delay 1.8e19", format!("{TARGET}ready = {{ delay = 1.8e19 }}\n"), "delay"),
        (
            "ready timeout -1",
            format!("{TARGET}ready = {{ tcp = \"127.0.0.1:1\", timeout = -1 }}\n"),
            "negative",
        ),
        // Sizes and CPU sets that allocated without bound.
        (
            "cpu range 0-99999999999",
            format!("{TARGET}cpus = \"0-99999999999\"\n"),
            "largest CPU number",
        ),
        ("cpu number 1e11", format!("{TARGET}cpus = [99999999999]\n"), "CPU numbers from 0"),
        (
            "cpu count 1e14",
            format!("{TARGET}cpus = 99999999999999\n"),
            "more CPUs than any machine",
        ),
        (
            "cpu list 20 digits",
            format!("{TARGET}cpus = \"99999999999999999999999\"\n"),
            "bad CPU list",
        ),
        ("cpu list twice", format!("{TARGET}cpus = [0, 0]\n"), "twice"),
        ("connections 1e12", format!("{HTTP}connections = 1000000000000\n"), "connections"),
        ("threads 1e12", format!("{HTTP}threads = 1000000000000\n"), "threads"),
        ("streams 1e9", format!("{HTTP}http2 = true\nstreams = 1000000000\n"), "streams"),
        ("rate 1e300", format!("{HTTP}rate = 1e300\n"), "rate"),
        ("rate 1e-300", format!("{HTTP}rate = 1e-300\n"), "rate"),
        (
            "memory 1e11 T",
            format!("{TARGET}memory = \"99999999999T\"\n"),
            "largest memory limit",
        ),
        ("memory 1 byte", format!("{TARGET}memory = 1\n"), "smallest memory limit"),
        ("memory nan", format!("{TARGET}memory = nan\n"), "size"),
        (
            "body_file /dev/zero",
            format!("{HTTP}body_file = \"/dev/zero\"\n"),
            "not a regular file",
        ),
        (
            "cacert /dev/zero",
            HTTP.replace("http://", "https://") + "cacert = \"/dev/zero\"\n",
            "not a regular file",
        ),
        ("exec timeout 0", format!("{EXEC}timeout = 0\n"), "longer than 0s"),
        ("http timeout 0", format!("{HTTP}timeout = \"0s\"\n"), "longer than 0s"),
        (
            "1001 thresholds",
            format!("thresholds = [{}]\n{EXEC}", vec!["\"wall_time_s < 1\""; 1001].join(", ")),
            "at most 1000",
        ),
        ("repetitions 1e6", format!("repetitions = 1000000\n{EXEC}"), "between 1 and 10000"),
    ]
}

/// Plans the dry run accepted and the run then failed.
fn run_time_failures() -> Vec<(&'static str, String, &'static str)> {
    vec![
        ("cpu_quota 1e308", format!("{TARGET}cpu_quota = 1e308\n"), "cpu_quota"),
        ("cpu_quota 1e-300", format!("{TARGET}cpu_quota = 1e-300\n"), "cpu_quota"),
        ("cpu_quota nan", format!("{TARGET}cpu_quota = nan\n"), "cpu_quota"),
        ("target program empty", TARGET.replace("[\"sleep\", \"5\"]", "[\"\"]"), "program"),
        ("target program missing", TARGET.replace("sleep", "/no/such/program"), "not found"),
        (
            "target program not on PATH",
            TARGET.replace("sleep", "no-such-program-xyz"),
            "not found on PATH",
        ),
        ("target cwd missing", format!("{TARGET}cwd = \"/no/such/dir\"\n"), "not a directory"),
        ("target argv NUL", TARGET.replace("\"5\"", "\"5\\u0000\""), "NUL"),
        ("target env NUL", format!("{TARGET}env = {{ A = \"x\\u0000y\" }}\n"), "NUL"),
        ("target env name =", format!("{TARGET}env = {{ \"A=B\" = \"x\" }}\n"), "`=`"),
        (
            "target env table",
            format!("{TARGET}env = {{ A = {{ b = 1 }} }}\n"),
            "expected a string",
        ),
        ("exec argv NUL", EXEC.replace("[\"true\"]", "[\"echo\", \"a\\u0000b\"]"), "NUL"),
        ("exec program empty", EXEC.replace("[\"true\"]", "[\"\"]"), "empty"),
        ("exec env NUL", format!("{EXEC}env = {{ A = \"x\\u0000y\" }}\n"), "NUL"),
        ("exec env name empty", format!("{EXEC}env = {{ \"\" = \"x\" }}\n"), "empty name"),
        (
            "exec warmup NUL",
            format!("{EXEC}warmup_command = [\"true\", \"\\u0000\"]\n"),
            "NUL",
        ),
        (
            "ready ftp",
            format!("{TARGET}ready = {{ http = \"ftp://127.0.0.1:9/\" }}\n"),
            "http://",
        ),
        (
            "ready https",
            format!("{TARGET}ready = {{ http = \"https://127.0.0.1:9/\" }}\n"),
            "http://",
        ),
        (
            "ready URL with a space",
            format!("{TARGET}ready = {{ http = \"http://127.0.0.1:9/a b\" }}\n"),
            "spaces",
        ),
        (
            "ready tcp no port",
            format!("{TARGET}ready = {{ tcp = \"localhost\" }}\n"),
            "host:port",
        ),
        ("ready tcp port 0", format!("{TARGET}ready = {{ tcp = \"127.0.0.1:0\" }}\n"), "port"),
        (
            "ready tcp port 70000",
            format!("{TARGET}ready = {{ tcp = \"127.0.0.1:70000\" }}\n"),
            "port",
        ),
        ("ready log bad regex", format!("{TARGET}ready = {{ log = \"(\" }}\n"), "log pattern"),
        (
            "header name with a space",
            format!("{HTTP}headers = {{ \"X Bad\" = \"1\" }}\n"),
            "header name",
        ),
        (
            "header name with a colon",
            format!("{HTTP}headers = {{ \"X:Bad\" = \"1\" }}\n"),
            "header name",
        ),
        (
            "header value CR LF",
            format!("{HTTP}headers = {{ X = \"a\\r\\nb: c\" }}\n"),
            "line break",
        ),
        (
            "header value NUL",
            format!("{HTTP}headers = {{ X = \"a\\u0000\" }}\n"),
            "control character",
        ),
        ("URL with a space", HTTP.replace("9/", "9/a b"), "space"),
        ("threshold < nan", format!("thresholds = [\"wall_time_s < nan\"]\n{EXEC}"), "finite"),
        ("threshold < inf", format!("thresholds = [\"wall_time_s < inf\"]\n{EXEC}"), "finite"),
        (
            "threshold table nan",
            format!("thresholds = [{{ metric = \"wall_time_s\", op = \"<\", value = nan }}]\n{EXEC}"),
            "finite",
        ),
        (
            "threshold unknown key",
            format!("thresholds = [{{ metric = \"x\", op = \"<\", value = 1, unit = \"s\" }}]\n{EXEC}"),
            "unknown key",
        ),
        (
            "threshold not a metric of exec",
            format!("thresholds = [\"requests_per_s > 5\"]\n{EXEC}"),
            "never produces `requests_per_s`",
        ),
        (
            "threshold typo",
            format!("thresholds = [\"error_rate_pc < 1\"]\n{HTTP}"),
            "did you mean `error_rate_pct`",
        ),
        (
            "adaptive metric unknown",
            format!("repetitions = {{ min = 2, max = 3, metric = \"duration_s\" }}\n{EXEC}"),
            "never produces `duration_s`",
        ),
        (
            "adaptive metric a number",
            format!("repetitions = {{ min = 2, max = 3, metric = 5 }}\n{EXEC}"),
            "metric",
        ),
        (
            "adaptive ci nan",
            format!("repetitions = {{ min = 2, max = 3, ci_pct = nan }}\n{EXEC}"),
            "ci_pct",
        ),
        (
            "adaptive typo",
            format!("repetitions = {{ min = 2, mx = 3 }}\n{EXEC}"),
            "did you mean `max`",
        ),
    ]
}

/// Messages that named Rust types, echoed long values whole, or lacked a key.
fn messages() -> Vec<(&'static str, String, &'static str)> {
    let long = "x".repeat(100_000);
    vec![
        (
            "name is a number",
            "name = 5\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n".into(),
            "`name`: expected a string, found 5",
        ),
        ("no name", "[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n".into(), "no `name`"),
        ("seed is text", format!("seed = \"x\"\n{EXEC}"), "`seed`: expected a whole number"),
        ("seed is a float", format!("seed = 1.5\n{EXEC}"), "`seed`"),
        (
            "skip_unsupported is text",
            format!("skip_unsupported = \"yes\"\n{EXEC}"),
            "true or false",
        ),
        (
            "hooks a number",
            format!("{EXEC}[matrix]\nvariant = [\"a\"]\n[variant.a]\nsetup = 5\n"),
            "a shell command or a list of them",
        ),
        (
            "hooks a string",
            format!("{EXEC}[matrix]\nvariant = [\"a\"]\n[variant]\na = \"x\"\n"),
            "expected a table",
        ),
        (
            "hook NUL",
            format!("{EXEC}[matrix]\nvariant = [\"a\"]\n[variant.a]\nsetup = \"echo \\u0000\"\n"),
            "NUL",
        ),
        ("target is text", format!("target = \"x\"\n{EXEC}"), "`target`: expected a table"),
        ("thresholds is text", format!("thresholds = \"x < 1\"\n{EXEC}"), "expected a list"),
        (
            "connections text",
            format!("{HTTP}connections = \"many\"\n"),
            "`connections`: expected integer",
        ),
        ("connections -1", format!("{HTTP}connections = -1\n"), "found -1"),
        ("connections 1.5", format!("{HTTP}connections = 1.5\n"), "found 1.5"),
        ("keepalive text", format!("{HTTP}keepalive = \"no\"\n"), "`keepalive`"),
        (
            "url a number",
            "name = \"t\"\n[workload]\ntype = \"http\"\nurl = 5\n".into(),
            "`url`",
        ),
        ("no url", "name = \"t\"\n[workload]\ntype = \"http\"\n".into(), "needs `url`"),
        (
            "exec command a number",
            "name = \"t\"\n[workload]\ntype = \"exec\"\ncommand = 5\n".into(),
            "`command`",
        ),
        (
            "exec command nested list",
            "name = \"t\"\n[workload]\ntype = \"exec\"\ncommand = [[\"a\"]]\n".into(),
            "`command`",
        ),
        ("exec timeout bool", format!("{EXEC}timeout = true\n"), "`timeout`"),
        ("exec env list", format!("{EXEC}env = [\"A\"]\n"), "`env`"),
        ("exec env number", format!("{EXEC}env = {{ A = 1 }}\n"), "`env`"),
        ("headers number", format!("{HTTP}headers = {{ A = 1 }}\n"), "`headers`"),
        (
            "duplicate key",
            format!("{EXEC}[phases]\nload = \"1s\"\nload = \"2s\"\n"),
            "`load` is given twice",
        ),
        (
            "matrix value a table",
            format!("{EXEC}[matrix]\nx = [{{ a = 1 }}]\n"),
            "a string, number or boolean",
        ),
        ("order a number", format!("order = 5\n{EXEC}"), "`order`"),
        // Long values are cut.
        ("long adapter", format!("{EXEC}adapter = \"{long}\"\n"), "…"),
        ("long signal", format!("{TARGET}stop = {{ signal = \"{long}\" }}\n"), "…"),
        ("long order", format!("order = \"{long}\"\n{EXEC}"), "…"),
        ("long threshold", format!("thresholds = [\"{long} <\"]\n{EXEC}"), "…"),
        (
            "long URL",
            HTTP.replace("http://127.0.0.1:9/", &format!("http://127.0.0.1:9/{long} x")),
            "…",
        ),
        ("long duration", format!("{EXEC}[phases]\nload = \"{long}\"\n"), "…"),
        (
            "long matrix reference",
            format!("{EXEC}[target]\ncommand = [\"${{{long}}}\"]\n"),
            "…",
        ),
        // Too many trials.
        ("matrix of 1e21 points", big_matrix(7, 1000), "about 1e21 points"),
        (
            "points × repetitions",
            format!("repetitions = 10000\n{}", big_matrix(1, 11)),
            "110000 trials",
        ),
        (
            "adaptive max counts",
            format!("repetitions = {{ min = 2, max = 10000 }}\n{}", big_matrix(1, 11)),
            "110000 trials",
        ),
    ]
}

/// An exec plan whose matrix has `params` parameters of `n` values each (all used).
fn big_matrix(params: usize, n: usize) -> String {
    let names: Vec<String> = (0..params).map(|i| format!("p{i}")).collect();
    let refs: String = names.iter().map(|p| format!("${{{p}}}")).collect();
    let list = (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
    let mut s = format!("name = \"big\"\n[workload]\ntype = \"exec\"\ncommand = [\"echo\", \"{refs}\"]\n[matrix]\n");
    for p in &names {
        s.push_str(&format!("{p} = [{list}]\n"));
    }
    s
}

/// `perflab run --dry-run` on `body`: the exit code and stderr.
fn dry_run(dir: &Path, body: &[u8]) -> (Option<i32>, String) {
    let p = dir.join("plan.toml");
    std::fs::write(&p, body).expect("write plan");
    let out = Command::new(BIN).args(["run", "--dry-run"]).arg(&p).output().expect("run perflab");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// One line, exit code 2, `plan.toml:L:C: `, in the plan's words.
fn assert_refused(what: &str, code: Option<i32>, err: &str, fragment: &str) {
    assert_eq!(code, Some(2), "{what}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{what}: one line: {err}");
    let located = regex::Regex::new(r"plan\.toml:\d+:\d+: ").expect("regex");
    assert!(located.is_match(err), "{what}: no file:line:col: {err}");
    for word in FORBIDDEN {
        assert!(!err.contains(word), "{what}: the message holds `{word}`: {err}");
    }
    assert!(err.len() < 600, "{what}: a long value was echoed whole ({} bytes)", err.len());
    assert!(err.contains(fragment), "{what}: expected `{fragment}` in: {err}");
}

#[test]
fn every_hostile_plan_is_one_located_line_and_exit_code_2() {
    let tmp = tempfile::tempdir().expect("tmp");
    for (what, plan, fragment) in bad_plans() {
        let (code, err) = dry_run(tmp.path(), plan.as_bytes());
        assert_refused(what, code, &err, fragment);
    }
}

#[test]
fn a_plan_that_is_not_utf8_is_refused_at_its_first_bad_byte() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut body = b"name = \"t\"\n[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n# caf".to_vec();
    body.extend_from_slice(&[0xe9, b'\n']);
    let (code, err) = dry_run(tmp.path(), &body);
    assert_refused("latin-1 byte", code, &err, "plan.toml:5:6: the plan is not UTF-8");
    assert!(err.contains("0xe9"), "{err}");
}

#[test]
fn a_plan_file_that_is_a_device_is_refused_without_reading_it_all() {
    let out = Command::new(BIN).args(["run", "--dry-run", "/dev/zero"]).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("cannot read plan /dev/zero: not a regular file"), "{err}");
}

#[test]
fn a_duration_that_would_overflow_at_run_time_is_refused_before_anything_runs() {
    // `load = 9e18` passed the dry run and then panicked in the run, leaving the run `running`.
    let tmp = tempfile::tempdir().expect("tmp");
    let runs = tmp.path().join("runs");
    for load in ["9e18", "1e20", "\"18446744073709551615s\""] {
        let plan = write_plan(tmp.path(), &format!("{HTTP}[phases]\nbaseline = \"0s\"\nload = {load}\n"));
        let out = Command::new(BIN)
            .args(["run", "--quiet", "--runs-dir"])
            .arg(&runs)
            .arg(&plan)
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_refused(load, out.status.code(), &err, "longest duration");
        assert!(!runs.exists(), "nothing was started or stored for {load}");
    }
}

#[test]
fn matrices_are_counted_before_they_are_expanded() {
    // 10^6 points: refused with their count at [matrix], before any point is built.
    let e = plan::parse_str(&big_matrix(1, 1_000_000), "plan.toml").expect_err("too big");
    assert_eq!(perflab::error::exit_code(&e), 2);
    let line = perflab::error::one_line(&e);
    assert!(line.starts_with("plan.toml:5:2: the matrix makes 1000000 points"), "{line}");
    assert!(line.contains(&MAX_TRIALS.to_string()), "{line}");
    // Exactly the limit is accepted, one more point is not.
    let p = plan::parse_str(&big_matrix(1, MAX_TRIALS), "plan.toml").expect("at the limit");
    assert_eq!(plan::expand(&p).len(), MAX_TRIALS);
    assert!(plan::parse_str(&big_matrix(1, MAX_TRIALS + 1), "plan.toml").is_err());
    // 10^4 values in one list, each checked against the others for duplicates, with excludes.
    let mut src = big_matrix(2, 100);
    src.push_str("exclude = [");
    src.push_str(&(0..100).map(|i| format!("{{ p0 = {i}, p1 = {i} }}")).collect::<Vec<_>>().join(", "));
    src.push_str("]\n");
    let p = plan::parse_str(&src, "plan.toml").expect("valid");
    assert_eq!(p.points.len(), 100 * 100 - 100, "the diagonal is excluded");
    assert!(p.points.iter().all(|pt| pt.params[0].1 != pt.params[1].1));
    assert_eq!(p.points[0].label, "p0=0 p1=1", "declaration order, the last parameter fastest");
    let dup = big_matrix(1, 3).replace("[0, 1, 2]", "[0, 1, 2, 1]");
    let e = perflab::error::one_line(&plan::parse_str(&dup, "plan.toml").expect_err("duplicate"));
    assert!(e.contains("lists 1 twice"), "{e}");
}

#[test]
fn thresholds_and_adaptive_metrics_are_checked_against_what_the_workload_produces() {
    let tmp = tempfile::tempdir().expect("tmp");
    // The wrk adapter gives requests_per_s and printed percentiles: accepted.
    let wrk = format!(
        "name = \"t\"\nthresholds = [\"requests_per_s > 1\", \"latency_p99_ms < 1000\"]\n\
         repetitions = {{ min = 2, max = 3, metric = \"latency_avg_ms\" }}\n\
         [workload]\ntype = \"exec\"\nadapter = \"wrk\"\ncommand = \"cat {WRK}/plain.stdout\"\n{TINY}"
    );
    let (code, err) = dry_run(tmp.path(), wrk.as_bytes());
    assert_eq!(code, Some(0), "{err}");
    // fio's per-job names are patterns: any job's name is accepted, a typo of a total is not.
    let fio = |th: &str| {
        format!(
            "name = \"t\"\nthresholds = [\"{th}\"]\n[workload]\ntype = \"exec\"\nadapter = \"fio\"\n\
             command = \"cat {FIO}/randread.stdout\"\n{TINY}"
        )
    };
    let (code, err) = dry_run(tmp.path(), fio("my_job_read_iops > 1").as_bytes());
    assert_eq!(code, Some(0), "{err}");
    let (code, err) = dry_run(tmp.path(), fio("read_clat_p99_ms < 5").as_bytes());
    assert_refused("fio unit typo", code, &err, "did you mean `read_clat_p99_us`");
    // http: the quantiles of every histogram it stores.
    let (code, err) = dry_run(
        tmp.path(),
        format!("thresholds = [\"ttfb_p99_9_ms < 5\", \"latency_max_us < 9\"]\n{HTTP}").as_bytes(),
    );
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn adaptive_repetitions_follow_the_workloads_primary_throughput_by_default() {
    let tmp = tempfile::tempdir().expect("tmp");
    let runs = tmp.path().join("runs");
    // wrk's primary throughput is requests_per_s; the same report every time: CI ±0 at min = 2.
    let plan = write_plan(
        tmp.path(),
        &format!(
            "name = \"adaptive\"\nrepetitions = {{ min = 2, max = 4 }}\n[workload]\ntype = \"exec\"\n\
             adapter = \"wrk\"\ncommand = \"cat {WRK}/plain.stdout\"\n{TINY}"
        ),
    );
    let dry = Command::new(BIN).args(["run", "--dry-run"]).arg(&plan).output().expect("run");
    let listing = String::from_utf8_lossy(&dry.stdout);
    assert!(listing.contains("until the 95% CI of the primary throughput"), "{listing}");
    assert!(listing.contains("primary: throughput requests_per_s"), "{listing}");
    let out = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let store = Store::open(crate::common::only_run_dir(&runs)).expect("store");
    let points = store.points().expect("points");
    assert_eq!(points[0].repetitions, 2);
    assert_eq!(points[0].stop_reason.as_deref(), Some("95 % CI ±0.0 % ≤ 5 % after 2 repetitions"));
    // Without an adapter the command's wall time is followed: a `true` varies, so it may run to max,
    // but it is never refused and never follows `requests_per_s`.
    let (code, err) = dry_run(tmp.path(), format!("repetitions = {{ min = 2, max = 3 }}\n{EXEC}").as_bytes());
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn every_name_an_adapter_gives_is_one_it_declares() {
    use perflab::workload::exec::adapters::{self, by_program};
    use perflab::workload::exec::names::produces;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(crate::adapters_common::DIR);
    let mut checked = 0;
    for tool in std::fs::read_dir(&dir).expect("fixtures").map(|e| e.expect("entry").path()) {
        let Some(a) = tool.file_name().and_then(|n| by_program(&n.to_string_lossy())) else {
            continue;
        };
        for case in std::fs::read_dir(&tool).expect("tool dir").map(|e| e.expect("entry").path()) {
            if case.extension().is_none_or(|e| e != "cmd") {
                continue;
            }
            let name = case.file_stem().expect("stem").to_string_lossy().into_owned();
            let tool_name = tool.file_name().expect("name").to_string_lossy().into_owned();
            let out = crate::adapters_common::fixture(&tool_name, &name);
            // stress-ng without --yaml reads its --metrics-brief lines: fewer names.
            let mut variants = vec![out.clone()];
            if out.option("--yaml", Some("-Y")).is_some() {
                let mut text_only = out.clone();
                text_only.args.retain(|w| w != "--yaml" && !w.ends_with(".yaml"));
                variants.push(text_only);
            }
            for o in variants {
                let Ok(r) = a.parse(&o) else { continue };
                let known = produces(Some(a), &o.args);
                for m in &r.metrics {
                    assert!(known.includes(&m.name), "{tool_name}/{name}: {} is not declared", m.name);
                    checked += 1;
                }
            }
        }
        let known = produces(Some(a), &[]);
        for p in a.primary().throughput.iter().chain(a.primary().latency) {
            assert!(known.includes(p), "{}: primary {p} is not declared", a.name());
        }
    }
    assert!(checked > 100, "only {checked} names checked");
    assert_eq!(adapters::all().len(), 8, "a new adapter needs its names in workload/exec/names.rs");
}

#[test]
fn the_repositorys_plans_are_still_accepted() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut plans = Vec::new();
    for dir in ["examples", "tests/fixtures/plans"] {
        for e in std::fs::read_dir(root.join(dir)).expect("dir") {
            let p = e.expect("entry").path();
            if p.extension().is_some_and(|x| x == "toml") {
                plans.push(p);
            }
        }
    }
    assert!(plans.len() >= 10, "{plans:?}");
    for p in plans {
        let out = Command::new(BIN)
            .args(["run", "--dry-run"])
            .arg(&p)
            .current_dir(root)
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        // Refused only for what this machine lacks: a tool (named with its Debian package), the
        // server a plan starts (`./server` of a fixture), a port another server already holds,
        // cgroups for a memory limit.
        let ok = out.status.code() == Some(0)
            || err.contains("not found on PATH (Debian package:")
            || err.contains("not found or not executable")
            || err.contains("is already in use")
            || err.contains("cannot be applied");
        assert!(ok, "{}: {err}", p.display());
    }
}

/// Every key of a plan given each of a set of hostile values, directly and through `${x}`: the
/// plan is accepted or refused with one located line in the plan's words, and nothing panics.
#[test]
fn hostile_values_on_every_key_never_panic() {
    const VALUES: &[&str] = &[
        "1e308",
        "-1",
        "nan",
        "inf",
        "-inf",
        "\"\"",
        "[]",
        "{}",
        "true",
        "\"\\u0000\"",
        "9223372036854775807",
        "-9223372036854775808",
        "0",
        "1.5",
        "[[1]]",
        "{ a = 1 }",
        "\"0-99999999\"",
        "\"1e400s\"",
        "\"  \"",
        "\"18446744073709551616\"",
        "\"\\r\\n\"",
        "\"http://[\"",
    ];
    let sections: &[(&str, &[&str])] = &[
        (
            "top",
            &[
                "name",
                "description",
                "repetitions",
                "order",
                "seed",
                "skip_unsupported",
                "thresholds",
            ],
        ),
        (
            "target",
            &["command", "cwd", "env", "ready", "stop", "cpus", "cpu_quota", "memory", "restart"],
        ),
        (
            "http",
            &[
                "url",
                "connections",
                "requests",
                "duration",
                "rate",
                "arrival",
                "seed",
                "max_inflight",
                "method",
                "headers",
                "body",
                "body_file",
                "keepalive",
                "http2",
                "streams",
                "insecure",
                "cacert",
                "timeout",
                "threads",
                "busy_poll",
            ],
        ),
        (
            "exec",
            &["command", "cwd", "env", "adapter", "timeout", "warmup_command", "warmup_run"],
        ),
        ("phases", &["baseline", "warmup", "load", "recovery", "interval"]),
        ("ready", &["tcp", "http", "log", "delay", "timeout"]),
        ("stop", &["signal", "grace"]),
        ("repetitions", &["min", "max", "ci_pct", "metric"]),
    ];
    let plan_with = |section: &str, key: &str, v: &str| -> String {
        let mut s = String::from("name = \"t\"\n");
        match section {
            "top" => s = format!("name = \"t\"\n{key} = {v}\n").replace("name = \"t\"\nname = ", "name = "),
            "repetitions" => s.push_str(&format!("repetitions = {{ {key} = {v} }}\n")),
            _ => {}
        }
        match section {
            "http" => s.push_str(&format!(
                "[workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:9/\"\n{key} = {v}\n"
            )),
            "exec" => s.push_str(&format!("[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n{key} = {v}\n")),
            _ => s.push_str("[workload]\ntype = \"exec\"\ncommand = [\"true\"]\n"),
        }
        match section {
            "target" => s.push_str(&format!("[target]\ncommand = [\"sleep\", \"5\"]\n{key} = {v}\n")),
            "ready" | "stop" => s.push_str(&format!("[target]\ncommand = [\"sleep\", \"5\"]\n{section} = {{ {key} = {v} }}\n")),
            "phases" => s.push_str(&format!("[phases]\n{key} = {v}\n")),
            _ => {}
        }
        s
    };
    let mut cases = 0;
    for (section, keys) in sections {
        for key in *keys {
            for v in VALUES {
                let direct = plan_with(section, key, v);
                // The same value through the matrix (where a string can hold `${x}`).
                let via_matrix = (!matches!(*section, "top" | "repetitions") && !v.starts_with(['[', '{']))
                    .then(|| format!("{}[matrix]\nx = [{v}]\n", plan_with(section, key, "\"${x}\"")));
                for text in std::iter::once(direct).chain(via_matrix) {
                    cases += 1;
                    let outcome = std::panic::catch_unwind(|| {
                        let p = plan::parse_str(&text, "plan.toml")?;
                        let trials = plan::expand(&p);
                        perflab::runner::from_plan::build(&p, &trials, "plan.toml").map(|_| ())
                    });
                    let Ok(result) = outcome else {
                        panic!("{section}.{key} = {v}: panicked on\n{text}");
                    };
                    if let Err(e) = result {
                        let line = perflab::error::one_line(&e);
                        let what = format!("{section}.{key} = {v}");
                        assert_eq!(perflab::error::exit_code(&e), 2, "{what}: {line}");
                        assert_refused(&what, Some(2), &format!("perflab: error: {line}\n"), "plan.toml:");
                    }
                }
            }
        }
    }
    assert!(cases > 1000, "{cases} cases");
}
