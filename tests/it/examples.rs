//! examples/*.toml: one plan per experiment of the original reports perflab replaces. Each must
//! parse, validate and expand through the library exactly as `perflab run --dry-run` does, send load
//! only to loopback, and describe its experiment in its header.
//! The cheapest ones also run for real, with phases and the tools' own durations shortened through
//! the library (the files are not edited). `every_example_runs_with_short_phases` (ignored: minutes)
//! runs all of them the same way:
//!   cargo test --release --test it examples:: -- --ignored --nocapture

use crate::common::{run_shortened, Short};
use perflab::plan::{self, Plan};
use perflab::runner::execute::RunOutcome;
use perflab::runner::from_plan;
use perflab::store::{RunStatus, Store, StoredTrial};
use std::path::{Path, PathBuf};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    v
}

fn example(name: &str) -> PathBuf {
    examples()
        .into_iter()
        .find(|p| p.file_name().is_some_and(|f| f.to_string_lossy().starts_with(name)))
        .unwrap_or_else(|| panic!("no example {name}*"))
}

fn label(p: &Path) -> String {
    format!("examples/{}", p.file_name().unwrap().to_string_lossy())
}

fn load(p: &Path) -> Plan {
    let text = std::fs::read_to_string(p).expect("read example");
    plan::parse_str(&text, &label(p)).unwrap_or_else(|e| panic!("{e:#}"))
}

fn on_path(prog: &str) -> bool {
    perflab::workload::exec::preflight::find_program(prog, None, None).is_some()
}

#[test]
fn every_example_parses_validates_and_expands() {
    let all = examples();
    assert!(all.len() >= 5, "one plan per original report at least: {all:?}");
    for p in &all {
        let plan = load(p);
        let trials = plan::expand(&plan);
        assert!(!trials.is_empty(), "{}: no trials", label(p));
        assert_eq!(
            trials.len(),
            plan.points.len() * plan.repetitions.planned() as usize,
            "{}",
            label(p)
        );
        let listing = plan::dry_run_listing(&plan, &trials);
        assert!(listing.contains(&format!("{} trial(s)", trials.len())), "{listing}");
        // The runner's checks (workload keys, programs on PATH) pass, or name the missing tool's
        // Debian package: one clear line, as `perflab run` prints it.
        match from_plan::build(&plan, &trials, &label(p)) {
            Ok(exp) => assert_eq!(exp.trials.len(), trials.len()),
            Err(e) => {
                let msg = format!("{e:#}");
                // Or an icmp probe without the privilege, said with the sysctl that grants it.
                assert!(
                    msg.contains("not found on PATH (Debian package:") || msg.contains("net.ipv4.ping_group_range"),
                    "{}: {msg}",
                    label(p)
                );
            }
        }
    }
}

/// Each example stands alone: its header opens with `# Experiment: ` and a summary, describes the
/// original experiment and what the plan changes in a paragraph or more, and ends with the command
/// that runs it; the file points to nothing outside the repository. The examples keep the numbers of
/// the five original reports (000 to 004), at least one plan each.
#[test]
fn every_example_describes_its_experiment() {
    let outside = regex::Regex::new(r"(?i)\.\./|shared/|\.txt\b|\bseed ?\d|research §").unwrap();
    for prefix in ["000_", "001_", "002_", "003_", "004_"] {
        assert!(
            examples()
                .iter()
                .any(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix)),
            "no example {prefix}*"
        );
    }
    for p in examples() {
        let text = std::fs::read_to_string(&p).unwrap();
        let header: Vec<&str> = text.lines().take_while(|l| l.starts_with('#')).collect();
        let summary = header.first().and_then(|l| l.strip_prefix("# Experiment: ")).unwrap_or("");
        assert!(
            summary.len() >= 20,
            "{}: the first line is not `# Experiment: <summary>`",
            label(&p)
        );
        assert!(
            header.len() >= 8 && header.iter().filter(|l| l.trim() == "#").count() >= 2,
            "{}: the header is not a description in paragraphs",
            label(&p)
        );
        let run = header.iter().rev().find(|l| l.starts_with("# Run it")).copied().unwrap_or("");
        assert!(
            run.contains(&label(&p)),
            "{}: the header does not end with how to run it",
            label(&p)
        );
        if let Some(m) = outside.find(&text) {
            panic!("{}: points outside the repository: {}", label(&p), m.as_str());
        }
        let plan = load(&p);
        assert!(!plan.description.is_empty(), "{}: no description", label(&p));
    }
}

/// Every address an example names (URLs, `-c HOST`, `--pgsql-host=`, ready checks) is loopback.
#[test]
fn examples_send_load_only_to_loopback() {
    let ipv4 = regex::Regex::new(r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b").unwrap();
    let url = regex::Regex::new(r"https?://([^/:\s\x22]+)").unwrap();
    for p in examples() {
        let text = std::fs::read_to_string(&p).unwrap();
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n");
        let mut seen = 0;
        for m in ipv4.find_iter(&code) {
            assert_eq!(m.as_str(), "127.0.0.1", "{}: {}", label(&p), m.as_str());
            seen += 1;
        }
        for c in url.captures_iter(&code) {
            assert!(["127.0.0.1", "localhost", "[::1]"].contains(&&c[1]), "{}: {}", label(&p), &c[1]);
        }
        // A plan with a client-server tool names its loopback server.
        if code.contains("[target]") {
            assert!(seen > 0, "{}: a target but no loopback address", label(&p));
        }
    }
}

#[test]
fn the_cores_example_reports_the_4_cpu_point_before_the_run() {
    let p = example("002_");
    let plan = load(&p);
    let online = perflab::util::cpus::online_cpus().len();
    let cpus4 = plan.points.iter().filter(|pt| pt.label.contains("cpus=4")).count();
    if online >= 4 {
        assert_eq!(cpus4, 3, "4 CPUs are online: the 4-CPU points run");
        return;
    }
    // skip_unsupported = true: the three 4-CPU points are dropped, each with a note.
    assert_eq!(cpus4, 0);
    assert_eq!(plan.points.len(), 6);
    let notes: Vec<&String> = plan.notes.iter().filter(|n| n.contains("cpus = 4 cannot be honoured")).collect();
    assert_eq!(notes.len(), 3, "{:?}", plan.notes);
    // Without the request, the plan is refused before anything runs, at the `cpus` key.
    let text = std::fs::read_to_string(&p).unwrap().replace("skip_unsupported = true", "");
    let err = format!("{:#}", plan::parse_str(&text, "002.toml").unwrap_err());
    assert!(err.starts_with("002.toml:") && err.contains("cpus = 4"), "{err}");
}

/// The swappiness variants run only where vm.swappiness is writable; elsewhere both are skipped
/// with the plan's own message.
#[test]
fn the_swappiness_example_is_skipped_where_sysctl_cannot_write() {
    let plan = load(&example("001_"));
    let trials = plan::expand(&plan);
    let exp = from_plan::build(&plan, &trials, "001").expect("build");
    assert_eq!(exp.hooks.len(), 2);
    assert!(exp
        .hooks
        .values()
        .all(|h| h.skip_unless.len() == 1 && !h.setup.is_empty() && !h.teardown.is_empty()));
    let writable = std::ffi::CString::new("/proc/sys/vm/swappiness")
        .map(|c| {
            // SAFETY: `c` is a NUL-terminated string alive for the call; access(2) only reads it.
            unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
        })
        .unwrap();
    let unmet = perflab::runner::hooks::unmet_preconditions(&exp.hooks);
    if writable && on_path("sysctl") {
        assert!(unmet.is_empty(), "{unmet:?}");
    } else {
        assert_eq!(unmet.len(), 2, "{unmet:?}");
        assert!(unmet
            .iter()
            .all(|(_, why)| why.ends_with("vm.swappiness is not writable here (run as root, outside a container)")));
    }
}

// ---- running examples with short phases ----

/// Shorten the tools' own durations in every point's workload command; returns how many options
/// were rewritten.
fn shorten_tools(plan: &mut Plan) -> usize {
    let mut n = 0;
    for pt in &mut plan.points {
        let Some(cmd) = pt.workload.get_mut("command") else {
            continue;
        };
        match cmd {
            toml::Value::Array(a) => {
                let mut words: Vec<String> = a
                    .iter()
                    .map(|v| match v {
                        toml::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect();
                n += shorten_words(&mut words);
                *a = words.into_iter().map(toml::Value::String).collect();
            }
            toml::Value::String(s) => {
                let mut words: Vec<String> = s.split(' ').map(str::to_string).collect();
                n += shorten_words(&mut words);
                *s = words.join(" ");
            }
            _ => {}
        }
    }
    n
}

fn shorten_words(w: &mut [String]) -> usize {
    let tool = w.first().map(|s| s.rsplit('/').next().unwrap_or(s).to_string()).unwrap_or_default();
    let mut n = 0;
    for i in 0..w.len() {
        let next = |w: &mut [String], v: &str| {
            if i + 1 < w.len() {
                w[i + 1] = v.to_string();
                1
            } else {
                0
            }
        };
        n += match (tool.as_str(), w[i].as_str()) {
            ("stress-ng", "--timeout") => next(w, "1s"),
            ("iperf3" | "ab", "-t") => next(w, "1"),
            ("ab", "-n") => next(w, "1000"),
            ("fio", a) if a.starts_with("--runtime=") => {
                w[i] = "--runtime=1".into();
                1
            }
            ("sysbench", a) if a.starts_with("--time=") => {
                w[i] = "--time=1".into();
                1
            }
            _ => 0,
        };
    }
    n
}

/// Run `plan` for real: one repetition, short phases, `perflab` targets → this build's binary.
fn run_short(plan: Plan, only: impl Fn(&plan::Point) -> bool) -> (RunOutcome, Vec<StoredTrial>, tempfile::TempDir) {
    let tmp = tempfile::tempdir().expect("tmp");
    let short = Short {
        baseline: Duration::from_millis(200),
        load: Duration::from_secs(2),
        recovery: Duration::from_millis(200),
        interval: Duration::from_millis(100),
    };
    let outcome = run_shortened(plan, short, only, &tmp.path().join("runs"));
    let stored = if outcome.status == RunStatus::Skipped {
        Vec::new()
    } else {
        Store::open(&outcome.dir).unwrap().trials().unwrap()
    };
    (outcome, stored, tmp)
}

fn failures(trials: &[StoredTrial]) -> Vec<String> {
    trials.iter().filter_map(|t| t.failure.as_ref().map(|f| f.to_string())).collect()
}

#[test]
fn the_cores_example_runs_with_short_phases() {
    let plan = load(&example("002_"));
    // 1 and 2 CPUs at 100 requests: 2 trials against perflab serve.
    let (out, trials, _tmp) = run_short(plan, |p| p.label.contains("requests=100 ") || p.label.ends_with("requests=100"));
    assert_eq!(out.status, RunStatus::Complete);
    assert_eq!(trials.len(), 2, "{:?}", failures(&trials));
    assert!(trials.iter().all(|t| t.ok()), "{:?}", failures(&trials));
    for t in &trials {
        assert_eq!(t.metric("requests"), Some(100.0), "every one of the 100 requests counted");
        assert_eq!(t.metric("error_rate_pct"), Some(0.0));
        assert!(t.limit_mechanism.is_some(), "the CPU limit's mechanism is stored");
    }
    // Where the machine has fewer than 4 CPUs, the 4-CPU points the plan skipped are said at the end,
    // kept in the store and printed in the report, not only in the dry run.
    if perflab::util::cpus::online_cpus().len() < 4 {
        let said = |notes: &[String]| notes.iter().filter(|n| n.contains("cpus = 4 cannot be honoured")).count();
        assert_eq!(said(&out.notes), 3, "{:?}", out.notes);
        assert_eq!(said(&Store::open(&out.dir).unwrap().notes().unwrap()), 3);
        let paths = perflab::report::write_report(&out.dir).unwrap();
        let md = std::fs::read_to_string(paths.file("md").expect("report.md")).unwrap();
        // Each under Run, and the three once in the summary, under its first line.
        assert_eq!(md.matches("cpus = 4 cannot be honoured").count(), 4, "{md}");
        assert!(
            md.contains("Not run: cpus=4 requests=10, cpus=4 requests=100, cpus=4 requests=1000: cpus = 4 cannot be honoured"),
            "{md}"
        );
    }
}

#[test]
fn the_stress_ng_cpu_example_runs_with_short_phases() {
    if !on_path("stress-ng") {
        crate::common::skip_unless_required("stress-ng is not installed (Debian package `stress-ng`): not run");
        return;
    }
    let mut plan = load(&example("000_stress_ng_cpu"));
    assert_eq!(shorten_tools(&mut plan), plan.points.len(), "one --timeout per point");
    let (out, trials, _tmp) = run_short(plan, |p| p.label == "workers=2");
    assert_eq!(out.status, RunStatus::Complete);
    assert_eq!(trials.len(), 1);
    let t = &trials[0];
    assert!(t.ok(), "{:?}", t.failure);
    assert_eq!(t.workload, "exec:stress-ng");
    let ops = t.metric("cpu_bogo_ops").expect("cpu_bogo_ops");
    let rate = t.metric("cpu_bogo_ops_per_s").expect("cpu_bogo_ops_per_s");
    let wall = t.metric("cpu_wall_time_s").expect("cpu_wall_time_s");
    assert!(ops > 0.0);
    // stress-ng's own definition: bogo ops/s (real time) = bogo ops / wall time, within its rounding.
    assert!((rate - ops / wall).abs() <= 0.01 * rate + 0.01, "{rate} vs {ops}/{wall}");
}

/// All examples, one repetition each, every point, short phases and tool durations. Minutes.
#[test]
#[ignore]
fn every_example_runs_with_short_phases() {
    let mut summary = Vec::new();
    for p in examples() {
        let mut plan = load(&p);
        let exec = plan.workload.kind == "exec";
        let rewritten = shorten_tools(&mut plan);
        if exec {
            assert!(rewritten >= plan.points.len(), "{}: a tool duration per point", label(&p));
        }
        let (out, trials, _tmp) = run_short(plan, |_| true);
        let failed = failures(&trials);
        let line = format!(
            "{}: {} — {} trial(s) ok, {} failed{}{}",
            label(&p),
            out.status,
            out.trials_ok,
            out.trials_failed,
            out.notes.iter().map(|n| format!("; note: {n}")).collect::<String>(),
            failed.first().map(|f| format!("; first failure: {f}")).unwrap_or_default()
        );
        let line = match out.thresholds_failed.first() {
            Some(t) => format!("{line}; threshold broken: {t}"),
            None => line,
        };
        eprintln!("{line}");
        // A threshold on a metric the workload does not give reads "no data" and breaks: this also
        // checks that the examples' thresholds name real metrics.
        summary.push((
            line,
            failed.is_empty() && out.thresholds_failed.is_empty() && matches!(out.status, RunStatus::Complete | RunStatus::Skipped),
        ));
    }
    // The fio example keeps its 1 GiB file for the next run and stress-ng's example its YAML
    // report for the reader; this test keeps neither.
    let _ = std::fs::remove_file("/tmp/perflab-example-fio.dat");
    let _ = std::fs::remove_file("/tmp/perflab-example-stress-ng-cpu.yaml");
    let bad: Vec<&String> = summary.iter().filter(|(_, ok)| !ok).map(|(l, _)| l).collect();
    assert!(bad.is_empty(), "{bad:#?}");
}

/// The built-in cpu example beside stress-ng's: its trials store the load asked and achieved and the
/// work per CPU-second, with the methods' version.
#[test]
fn the_builtin_cpu_example_runs_with_short_phases() {
    let plan = load(&example("000_builtin_cpu"));
    let (out, trials, _tmp) = run_short(plan, |p| p.label.contains("workers=2"));
    assert_eq!(out.status, RunStatus::Complete);
    assert_eq!(trials.len(), 1, "{:?}", failures(&trials));
    let t = &trials[0];
    assert!(t.ok(), "{:?}", failures(&trials));
    assert_eq!(t.metric("load_asked_pct"), Some(90.0));
    assert_eq!(t.metric("methods_version"), Some(1.0));
    assert!(t.metric("load_achieved_pct").is_some_and(|v| v > 0.0 && v <= 101.0));
    assert!(t.metric("matrix_ops_per_cpu_s").is_some_and(|v| v > 0.0));
    assert!(t.metric("ops_per_s").is_some_and(|v| v > 0.0));
}

/// The built-in oltp example (SQLite, nothing installed): read_only and read_write at 1 and 4
/// threads store tps, qps and the transaction latency, and the report puts them against threads.
#[test]
fn the_oltp_example_runs_with_short_phases_and_reports_against_threads() {
    let plan = load(&example("004_oltp"));
    let (out, trials, tmp) = run_short(plan, |p| p.label.split_whitespace().any(|w| w == "threads=1" || w == "threads=4"));
    assert_eq!(trials.len(), 4, "{:?} {:?}", out.status, failures(&trials));
    for t in &trials {
        assert!(t.ok(), "{:?}", failures(&trials));
        for m in [
            "transactions_per_s",
            "queries_per_s",
            "reads_per_s",
            "latency_p99_ms",
            "errors_duplicate_key",
        ] {
            assert!(t.metric(m).is_some(), "{m} missing");
        }
        assert!(t.metric("transactions_per_s").is_some_and(|v| v > 0.0));
        // SQLite's writers queue for its one write lock: no busy errors at 4 threads either.
        assert_eq!(t.metric("errors"), Some(0.0), "{:?}", t.errors);
        assert!(
            t.histograms.iter().any(|h| h.name == "latency"),
            "the transaction histogram is stored"
        );
    }
    let dir = perflab::report::write_default(&out.dir).map(|_| out.dir.clone()).expect("report");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).expect("report.json")).expect("json");
    let scaling = &json["scaling"];
    assert_eq!(scaling["parameter"], "threads", "{scaling}");
    assert_eq!(scaling["throughput_metric"], "transactions_per_s", "{scaling}");
    assert_eq!(scaling["rows"].as_array().map(Vec::len), Some(4), "{scaling}");
    drop(tmp);
}

/// A built-in example and its adapter counterpart (000_builtin_cpu beside 000_stress_ng_cpu) in
/// one document: `perflab report RUN_A RUN_B` writes a section per run and one summary across
/// them, each with its own primary figures.
#[test]
fn the_builtin_cpu_and_stress_ng_examples_report_side_by_side() {
    if !on_path("stress-ng") {
        crate::common::skip_unless_required(
            "stress-ng is not installed (Debian package `stress-ng`): the built-in vs adapter report is not checked",
        );
        return;
    }
    let (a, ta, _ka) = run_short(load(&example("000_builtin_cpu")), |p| p.label == "workers=2");
    let mut adapter = load(&example("000_stress_ng_cpu"));
    assert_eq!(shorten_tools(&mut adapter), adapter.points.len());
    let (b, tb, _kb) = run_short(adapter, |p| p.label == "workers=2");
    assert!(ta.iter().chain(&tb).all(|t| t.ok()), "{:?} {:?}", failures(&ta), failures(&tb));
    let ops = ta[0].metric("ops_per_s").expect("the built-in's ops_per_s");
    let bogo = tb[0].metric("cpu_bogo_ops_per_s").expect("stress-ng's cpu_bogo_ops_per_s");
    let out = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(BIN)
        .arg("report")
        .arg(&a.dir)
        .arg(&b.dir)
        .arg("--out")
        .arg(out.path())
        .arg("--format")
        .arg("md,json")
        .output()
        .expect("perflab report");
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let md = std::fs::read_to_string(out.path().join("report.md")).expect("report.md");
    for title in ["builtin-cpu: ", "stress-ng-cpu: "] {
        assert!(
            md.lines().any(|l| l.starts_with('#') && l.contains(title)),
            "no section {title}:\n{md}"
        );
    }
    assert!(md.contains("ops_per_s") && md.contains("cpu_bogo_ops_per_s"), "{md}");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.path().join("report.json")).unwrap()).unwrap();
    let experiments = json["experiments"].as_array().expect("experiments");
    assert_eq!(experiments.len(), 2, "{json}");
    let text = json.to_string();
    assert!(text.contains("\"ops_per_s\"") && text.contains("\"cpu_bogo_ops_per_s\""));
    assert!(ops > 0.0 && bogo > 0.0);
}
