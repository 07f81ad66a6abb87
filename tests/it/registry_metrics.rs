//! The workload registry (an unknown `type`, every kind's keys in docs/plan.md, the dry run's line
//! per point) and metrics that say what they are: kinds kept in the store (and inferred in stores
//! written before), thresholds on tool-printed percentiles judged on the median of the trials, the
//! declared primary throughput swept by the scaling analysis (fio IOPS, not only `*_per_s`).

use perflab::model::{Phase, PhaseSpan, TrialInfo};
use perflab::store::{RunInfo, Store, TrialRecord};
use perflab::workload::exec::{ExecConfig, ExecWorkload};
use perflab::workload::registry::{self, KINDS};
use perflab::workload::result::latency_histogram;
use perflab::workload::{Better, Metric, MetricKind, NamedHistogram, PrimaryMetrics, Workload, WorkloadResult};
use std::path::Path;
use std::process::Command;

use crate::adapters_common;
use crate::common::{only_run_dir, write_plan};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");
const WRK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tools/wrk");

const TINY: &str = r#"[phases]
baseline = "0s"
warmup = "0s"
load = "50ms"
recovery = "0s"
interval = "100ms"
"#;

#[test]
fn an_unknown_workload_type_gets_a_hint_at_its_place() {
    let src = "name = \"t\"\n\n[workload]\ntype = \"htp\"\nurl = \"http://127.0.0.1:9/\"\n";
    let e = perflab::plan::parse_str(src, "plan.toml").expect_err("htp is no workload type");
    assert_eq!(perflab::error::exit_code(&e), 2);
    assert_eq!(
        perflab::error::one_line(&e),
        "plan.toml:4:1: unknown workload type \"htp\" (did you mean \"http\"?)"
    );
    // Far from every name: the names are listed instead.
    let e = perflab::plan::parse_str(&src.replace("htp", "quantum"), "plan.toml").expect_err("unknown");
    let all = registry::quoted_list(&registry::names());
    assert_eq!(
        perflab::error::one_line(&e),
        format!("plan.toml:4:1: unknown workload type \"quantum\" (use {all})")
    );
    // And through the command line: one line, exit code 2.
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(tmp.path(), src);
    let out = Command::new(BIN).args(["run", "--dry-run"]).arg(&plan).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(":4:1: unknown workload type \"htp\" (did you mean \"http\"?)"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn every_kinds_keys_are_documented_in_docs_plan_md() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/plan.md")).expect("docs/plan.md");
    for kind in KINDS {
        let table = registry::docs_table(*kind);
        assert!(
            doc.contains(&table),
            "docs/plan.md must carry the `{}` key table exactly as the registry declares it:\n\n{table}",
            kind.name()
        );
        for key in kind.keys() {
            assert!(doc.contains(&format!("| `{}` |", key.name)), "{}.{}", kind.name(), key.name);
        }
    }
}

/// A threshold on `latency_p99` (the unit left out) is refused before the run at its place, with the
/// name it surely meant.
#[test]
fn a_threshold_without_its_unit_suggests_the_metric_it_meant() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(
        tmp.path(),
        &format!("name = \"t\"\nthresholds = [\"latency_p99 < 50\"]\n[workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:9/\"\n{TINY}"),
    );
    let out = Command::new(BIN).args(["run", "--dry-run"]).arg(&plan).output().expect("dry run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(":2:"), "at the threshold's line: {err}");
    assert!(
        err.contains("never produces `latency_p99` (did you mean `latency_p99_ms`?)"),
        "{err}"
    );
}

#[test]
fn a_dry_run_says_what_each_point_runs() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(
        tmp.path(),
        &format!(
            "name = \"d\"\nrepetitions = 2\n[workload]\ntype = \"exec\"\nadapter = \"wrk\"\n\
             command = [\"cat\", \"{WRK}/${{f}}.stdout\"]\n[matrix]\nf = [\"plain\", \"latency\"]\n{TINY}"
        ),
    );
    let out = Command::new(BIN).args(["run", "--dry-run"]).arg(&plan).output().expect("dry run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let line = |point: usize, f: &str| {
        format!(
            "point {point} f={f}: exec: output read by the wrk adapter · command = [\"cat\", \"{WRK}/{f}.stdout\"], \
             adapter = \"wrk\" · primary: throughput requests_per_s, latency first of latency_p99_ms / latency_avg_ms"
        )
    };
    assert!(text.contains(&line(1, "plain")), "{text}");
    assert!(text.contains(&line(2, "latency")), "{text}");
    assert!(text.contains("4 trial(s)"), "{text}");
}

/// A run of `cat`-ed wrk reports whose p99 is 10, 11 then 30 ms over the 3 repetitions: the mean
/// (17 ms) and the median (11 ms) are on either side of both thresholds.
#[test]
fn a_threshold_on_a_printed_p99_is_judged_on_the_median_of_the_trials() {
    let tmp = tempfile::tempdir().expect("tmp");
    let script = tmp.path().join("report.sh");
    let count = tmp.path().join("count");
    std::fs::write(
        &script,
        format!(
            "n=$(cat {c} 2>/dev/null || echo 0)\nn=$((n + 1))\necho $n > {c}\n\
             case $n in 1) p=10.00ms ;; 2) p=11.00ms ;; *) p=30.00ms ;; esac\nsed \"s/2\\.76ms/$p/\" {WRK}/latency.stdout\n",
            c = count.display()
        ),
    )
    .expect("script");
    let plan = write_plan(
        tmp.path(),
        &format!(
            "name = \"p99\"\nrepetitions = 3\norder = \"sequential\"\n\
             thresholds = [\"latency_p99_ms < 15\", \"latency_p99_ms > 16\", \"requests_per_s > 100000\"]\n\
             [workload]\ntype = \"exec\"\nadapter = \"wrk\"\ncommand = [\"sh\", \"{}\"]\n{TINY}",
            script.display()
        ),
    );
    let runs = tmp.path().join("runs");
    let out = Command::new(BIN)
        .args(["run", "--json", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(1),
        "one threshold breaks: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let broken: Vec<&str> = doc["thresholds_failed"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(broken.len(), 1, "{doc}");
    assert!(broken[0].starts_with("latency_p99_ms > 16 at "), "{doc}");
    assert!(broken[0].ends_with(": observed 11.000 (median of 3 trials' p99)"), "{doc}");

    let store = Store::open(only_run_dir(&runs)).expect("store");
    let trials = store.trials().expect("trials");
    let p99s: Vec<f64> = trials.iter().filter_map(|t| t.metric("latency_p99_ms")).collect();
    assert_eq!(p99s, [10.0, 11.0, 30.0], "the three reports as printed");
    let verdicts = store.thresholds().expect("thresholds");
    let v = |expr: &str| verdicts.iter().find(|v| v.expr == expr).expect("stored verdict");
    assert!(v("latency_p99_ms < 15").passed, "the mean, 17 ms, would have failed it");
    assert!(!v("latency_p99_ms > 16").passed, "the mean, 17 ms, would have passed it");
    assert_eq!(v("latency_p99_ms < 15").observed, Some(11.0));
    assert_eq!(v("latency_p99_ms < 15").basis.as_deref(), Some("median of 3 trials' p99"));
    assert_eq!(v("requests_per_s > 100000").basis.as_deref(), Some("mean of 3 trials"));
    // Kinds come back as stored: the adapter stated the spread of the threads' rates a gauge,
    // which its name and unit (req/s) would call a rate.
    let kind = |name: &str| trials[0].metrics.iter().find(|m| m.name == name).map(|m| m.kind);
    assert_eq!(kind("latency_p99_ms"), Some(MetricKind::Quantile(0.99)));
    assert_eq!(kind("requests_per_s"), Some(MetricKind::Rate));
    assert_eq!(kind("thread_req_per_s_stdev"), Some(MetricKind::Gauge));
    assert_eq!(MetricKind::infer("thread_req_per_s_stdev", "req/s"), MetricKind::Rate);
    // The primary figures the wrk adapter declares, as they resolved in this run.
    let primary = store.primary().expect("read").expect("stored");
    assert_eq!(primary.throughput.as_deref(), Some("requests_per_s"));
    assert_eq!(primary.latency.as_deref(), Some("latency_p99_ms"));
    assert_eq!(primary.latency_histogram, None);
}

fn run_info(name: &str, trials: usize) -> RunInfo {
    RunInfo {
        plan_name: name.into(),
        plan_file: format!("{name}.toml"),
        plan_source: format!("name = \"{name}\""),
        seed: 1,
        started_unix: 1_700_000_000.0,
        planned_trials: trials,
    }
}

fn trial(id: usize, point: usize, repetition: u32, params_json: &str, workload: &str, result: WorkloadResult) -> TrialRecord {
    TrialRecord {
        info: TrialInfo {
            id,
            point,
            repetition,
            params_json: params_json.into(),
            workload: workload.into(),
            failure: None,
            started_unix: 1_700_000_000.0 + 10.0 * id as f64,
            ended_unix: 1_700_000_005.0 + 10.0 * id as f64,
            limit_mechanism: None,
            limit_proof: None,
            stdout_tail: None,
            stderr_tail: None,
            phases: vec![PhaseSpan::new(Phase::Load, 0.0, 5.0)],
        },
        result: Some(result),
        samples: vec![],
        probes: vec![],
        profiles: vec![],
    }
}

/// Where a histogram was stored, its quantiles come from the merged histogram, not from the
/// per-trial figures.
#[test]
fn a_quantile_of_a_stored_histogram_is_judged_on_the_merged_histogram() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut s = Store::create(dir.path()).expect("store");
    s.write_run(&run_info("h", 3)).expect("run");
    s.write_point(0, "", "{}", 3, None).expect("point");
    // 100 values of 1, 2 and 50 ms: the merged p99 is 50 ms, the median of the per-trial p99s 2 ms.
    for (id, ms) in [(0usize, 1u64), (1, 2), (2, 50)] {
        let mut h = latency_histogram();
        h.record_n(ms * 1000, 100).expect("record");
        let r = WorkloadResult {
            metrics: vec![Metric::new("latency_p99_ms", "ms", ms as f64, Better::Lower)],
            histograms: vec![NamedHistogram {
                name: "latency".into(),
                hist: h,
            }],
            ..Default::default()
        };
        s.write_trial(&trial(id, 0, id as u32 + 1, "{}", "http", r)).expect("trial");
    }
    let trials = s.trials().expect("trials");
    let refs: Vec<_> = trials.iter().collect();
    let o = perflab::runner::thresholds::observed("latency_p99_ms", &refs).expect("a figure");
    assert!((o.value - 50.0).abs() < 0.05, "{o:?}");
    assert_eq!(o.basis, "p99 of the merged `latency` histogram of 3 trials");
    assert_eq!(o.n, 3);
    // A quantile of a stored histogram that no metric names is judged too.
    let o = perflab::runner::thresholds::observed("latency_p50_ms", &refs).expect("a figure");
    assert!((o.value - 2.0).abs() < 0.01, "{o:?}");
}

/// fio's IOPS at iodepth 1, 2, 4, 8 (2 repetitions each) growing up to 4 and flat after: the
/// scaling section sweeps the declared `read_iops` (not a `*_per_s` name) and finds the knee at 4.
#[test]
fn fio_read_iops_gets_a_scaling_section() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut s = Store::create(dir.path()).expect("store");
    s.write_run(&run_info("fio-depth", 8)).expect("run");
    let base = adapters_common::parse("fio", "fio", "randread");
    let base_iops = base.metric("read_iops").expect("read_iops").value;
    let fio = ExecWorkload::new(ExecConfig::argv(["fio", "--rw=randread", "--output-format=json"]));
    let mut id = 0;
    let mut results = Vec::new();
    for (point, depth) in [1u32, 2, 4, 8].into_iter().enumerate() {
        let params = format!("{{\"iodepth\":{depth}}}");
        s.write_point(point, &format!("iodepth={depth}"), &params, 2, Some("fixed N = 2"))
            .expect("point");
        for rep in 1..=2u32 {
            let mut r = base.clone();
            let gain = depth.min(4) as f64 * (1.0 + 0.001 * rep as f64);
            for m in r.metrics.iter_mut().filter(|m| m.kind == MetricKind::Rate) {
                m.value *= gain;
            }
            s.write_trial(&trial(id, point, rep, &params, &fio.name(), r.clone()))
                .expect("trial");
            results.push(r);
            id += 1;
        }
    }
    let primary = PrimaryMetrics::resolve(&[fio.primary()], results.iter().map(|r| r.metrics.as_slice()));
    assert_eq!(primary.throughput.as_deref(), Some("read_iops"));
    s.write_primary(&primary).expect("primary");
    s.finish_run(perflab::store::RunStatus::Complete, 1_700_001_000.0).expect("finish");

    // The analysis: the declared metric is chosen among the points' metrics, and swept.
    let trials = s.trials().expect("trials");
    let names: Vec<(&str, &str, Better)> = trials[0]
        .metrics
        .iter()
        .map(|m| (m.name.as_str(), m.unit.as_str(), m.better))
        .collect();
    let (metric, unit) =
        perflab::analysis::scaling::throughput_metric(primary.throughput.as_deref(), names.iter().copied()).expect("a throughput");
    assert_eq!((metric.as_str(), unit.as_str()), ("read_iops", "IO/s"));
    let points: Vec<perflab::analysis::scaling::ScalingPoint> = [1.0, 2.0, 4.0, 8.0]
        .iter()
        .enumerate()
        .map(|(p, x)| {
            let vals: Vec<f64> = trials.iter().filter(|t| t.point == p).filter_map(|t| t.metric(&metric)).collect();
            perflab::analysis::scaling::ScalingPoint {
                x: *x,
                throughput: perflab::analysis::stats::Summary::of(&vals).expect("values"),
                latency: None,
                system: vec![],
            }
        })
        .collect();
    let a = perflab::analysis::scaling::analyze(&points, 2);
    assert_eq!(a.rows.len(), 4);
    assert!((a.rows[3].throughput / base_iops - 4.006).abs() < 1e-6, "{:?}", a.rows[3]);
    assert_eq!(a.knee.as_ref().map(|k| k.x), Some(4.0));

    // The report built from the store has the section, on read_iops.
    perflab::report::write_default(dir.path()).expect("report");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).expect("report.json")).expect("json");
    let scaling = &json["scaling"];
    assert_eq!(scaling["parameter"], "iodepth", "{scaling}");
    assert_eq!(scaling["throughput_metric"], "read_iops", "{scaling}");
    assert_eq!(scaling["unit"], "IO/s");
    assert_eq!(scaling["rows"].as_array().map(Vec::len), Some(4), "{scaling}");
    assert_eq!(scaling["knees"][0][1], 4.0, "{scaling}");
}

/// A store written before kinds were stored (schema version 1, kept as its SQL dump) opens: its
/// metrics get the kinds their names and units imply, and `--resume` may upgrade it in place.
#[test]
fn a_store_written_before_kinds_opens_with_inferred_kinds() {
    let dir = tempfile::tempdir().expect("tmp");
    let sql = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/store/v1.sql")).expect("fixture");
    rusqlite::Connection::open(dir.path().join(perflab::store::DB_FILE))
        .and_then(|c| c.execute_batch(&sql))
        .expect("load the version 1 store");

    let store = Store::open(dir.path()).expect("an old store opens");
    assert_eq!(store.schema_version(), 1);
    assert_eq!(store.run().expect("run").plan_name, "old");
    let trials = store.trials().expect("trials");
    assert_eq!(trials.len(), 2);
    let kind = |name: &str| trials[0].metrics.iter().find(|m| m.name == name).map(|m| m.kind);
    assert_eq!(kind("requests_per_s"), Some(MetricKind::Rate));
    assert_eq!(kind("latency_p99_ms"), Some(MetricKind::Quantile(0.99)));
    assert_eq!(kind("latency_mean_ms"), Some(MetricKind::Duration));
    assert_eq!(kind("complete_requests"), Some(MetricKind::Count));
    assert_eq!(kind("read_iops"), Some(MetricKind::Rate));
    assert_eq!(kind("errors"), Some(MetricKind::Count));
    assert_eq!(store.primary().expect("read"), None, "nothing declared then");
    let th = store.thresholds().expect("thresholds");
    assert_eq!((th.len(), th[0].basis.clone()), (1, None));
    // Thresholds judge it by the inferred kinds: the merged histogram of its 2 trials.
    let refs: Vec<_> = trials.iter().collect();
    let o = perflab::runner::thresholds::observed("latency_p99_ms", &refs).expect("a figure");
    assert_eq!(o.basis, "p99 of the merged `latency` histogram of 2 trials");
    // The report reads it (its scaling falls back to requests_per_s: no primary was stored).
    perflab::report::write_default(dir.path()).expect("a report of an old store");
    drop(store);

    // Upgraded before a resumed run writes to it: new rows carry kinds, old ones stay inferred.
    let mut store = Store::open(dir.path()).expect("open");
    store.upgrade().expect("upgrade");
    assert_eq!(store.schema_version(), perflab::store::SCHEMA_VERSION);
    let r = WorkloadResult {
        metrics: vec![Metric::new("thread_spread", "req/s", 3.0, Better::Neither).with_kind(MetricKind::Gauge)],
        ..Default::default()
    };
    store
        .write_trial(&trial(2, 0, 3, "{\"concurrency\":4}", "exec:ab", r))
        .expect("a new trial");
    store
        .write_threshold("latency_p99_ms < 13", 0, Some(12.0), "median of 2 trials' p99", true)
        .expect("verdict");
    drop(store);
    let store = Store::open(dir.path()).expect("reopen");
    assert_eq!(store.schema_version(), perflab::store::SCHEMA_VERSION);
    let trials = store.trials().expect("trials");
    assert_eq!(trials[2].metrics[0].kind, MetricKind::Gauge, "stated, stored, read back");
    assert_eq!(
        trials[0].metrics.iter().find(|m| m.name == "latency_p99_ms").map(|m| m.kind),
        Some(MetricKind::Quantile(0.99))
    );
}
