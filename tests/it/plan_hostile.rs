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
mod cases;
use cases::bad_plans;

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
    // The words after the plan's path (a random temporary directory may spell `i64`).
    let said = err.split_once("plan.toml:").map_or(err, |(_, rest)| rest);
    for word in FORBIDDEN {
        assert!(!said.contains(word), "{what}: the message holds `{word}`: {err}");
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
