//! `[[probes]]` in a plan, end to end: a run against `perflab serve` with a tcp and a udp probe
//! (the udp target from the matrix) stores every probe tagged with the phase it was sent in, the
//! per-phase figures as metrics a threshold can name, and the report's idle-vs-load table and
//! charts; bad probe tables are refused at their line; icmp without the privilege is refused
//! before the run with one line naming the sysctl.

use perflab::store::Store;
use std::process::Command;

use crate::common::{free_port, only_run_dir, write_plan};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

fn plan(port: u16, udp: u16, thresholds: &str) -> String {
    format!(
        r#"name = "probes"
{thresholds}

[target]
command = ["{BIN}", "serve", "--port", "{port}", "--udp-echo", "{udp}", "--workers", "2"]
ready = {{ tcp = "127.0.0.1:{port}", timeout = "10s" }}

[workload]
type = "http"
url = "http://127.0.0.1:{port}/bytes/100"
connections = 2

[matrix]
udp_port = [{udp}]

[phases]
baseline = "600ms"
warmup = "200ms"
load = "800ms"
recovery = "600ms"
interval = "100ms"

[[probes]]
kind = "tcp"
target = "127.0.0.1:{port}"
interval = "20ms"
timeout = "500ms"

[[probes]]
kind = "udp"
name = "echo"
target = "127.0.0.1:${{udp_port}}"
interval = "20ms"
timeout = "500ms"
"#
    )
}

#[test]
fn a_run_with_tcp_and_udp_probes_tags_phases_stores_figures_and_reports_the_table() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (port, udp) = (free_port(), free_port());
    let plan = write_plan(
        tmp.path(),
        &plan(
            port,
            udp,
            r#"thresholds = ["probe_echo_p50_ms < 60000", "probe_tcp_loss_pct <= 100"]"#,
        ),
    );
    let runs = tmp.path().join("runs");
    let out = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("run perflab");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let dir = only_run_dir(&runs);
    let store = Store::open(&dir).expect("open store");
    let trials = store.trials().expect("trials");
    assert_eq!(trials.len(), 1);
    let t = &trials[0];
    assert!(t.ok(), "{:?}", t.failure);
    let probes = store.probes(t.id).expect("probes");
    let names: Vec<&str> = probes.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["tcp", "echo"]);
    assert_eq!(probes[1].target, format!("127.0.0.1:{udp}"), "the matrix value substituted");
    let phase = |name: &str| {
        t.phases
            .iter()
            .find(|p| p.name() == name)
            .map(|p| (p.start_s, p.end_s))
            .expect(name)
    };
    for p in &probes {
        // Every phase of the trial has probes, in order, each within its phase's bounds.
        let order = ["baseline", "warmup", "load", "recovery"];
        let mut last = 0;
        for s in &p.samples {
            let i = order
                .iter()
                .position(|o| *o == s.phase)
                .unwrap_or_else(|| panic!("phase {}", s.phase));
            assert!(i >= last, "{}: seq {} is {} after a later phase", p.name, s.seq, s.phase);
            last = i;
            let (a, b) = phase(&s.phase);
            assert!(
                s.t_s >= a - 0.02 && s.t_s <= b + 0.02,
                "{} seq {} sent at {} s tagged {} [{a}, {b}]",
                p.name,
                s.seq,
                s.t_s,
                s.phase
            );
        }
        for ph in order {
            assert!(
                p.samples.iter().filter(|s| s.phase == ph).count() >= 3,
                "{}: probes in {ph}",
                p.name
            );
        }
        assert!(p.samples.iter().all(|s| s.outcome == "reply"), "{}: all answered", p.name);
        // Own traffic: a connect's segments (no payload), a datagram and its echo.
        assert!(p.samples.iter().all(|s| s.packets >= 2), "{}: own packets counted", p.name);
        assert_eq!(p.samples.iter().all(|s| s.bytes > 0), p.name == "echo", "{}: payload bytes", p.name);
    }
    for m in [
        "probe_tcp_p50_ms",
        "probe_tcp_baseline_p50_ms",
        "probe_echo_recovery_mean_ms",
        "probe_echo_packets_per_s",
    ] {
        assert!(t.metric(m).is_some_and(|v| v > 0.0), "{m}: {:?}", t.metric(m));
    }
    assert_eq!(t.metric("probe_echo_loss_pct"), Some(0.0));
    let load_n = probes[1].samples.iter().filter(|s| s.phase == "load").count() as f64;
    assert_eq!(
        t.metric("probe_echo_n"),
        Some(load_n),
        "the unqualified figures are the load phase's"
    );
    let verdicts = store.thresholds().expect("thresholds");
    assert_eq!(verdicts.len(), 2);
    assert!(verdicts.iter().all(|v| v.passed && v.observed.is_some()), "{verdicts:?}");

    let rep = tmp.path().join("rep");
    let out = Command::new(BIN)
        .args(["report", "--format", "md,json", "--out"])
        .arg(&rep)
        .arg(&dir)
        .output()
        .expect("report");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let md = std::fs::read_to_string(rep.join("report.md")).expect("report.md");
    assert!(md.contains("Latency probes: idle vs under load"), "{md}");
    assert!(md.contains("Probe echo (udp 127.0.0.1:"), "{md}");
    let header = md.lines().find(|l| l.contains("| phase | n | min | median |")).expect("the table");
    assert!(header.contains("| loss % |"), "{header}");
    for ph in ["baseline", "warmup", "load", "recovery"] {
        assert!(md.lines().any(|l| l.starts_with(&format!("| {ph} |"))), "{ph} row");
    }
    for f in ["probe_00_time.svg", "probe_00_cdf.svg", "probe_01_time.svg"] {
        assert!(rep.join("charts").join(f).is_file(), "{f}");
    }
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(rep.join("report.json")).expect("json")).expect("json");
    let probes = json["probes"].as_array().expect("probes in report.json");
    assert_eq!(probes.len(), 2);
    assert_eq!(probes[1]["phases"][0]["phase"], "baseline");
}

fn dry_run(body: &str) -> (Option<i32>, String) {
    let tmp = tempfile::tempdir().expect("tmp");
    let plan = write_plan(tmp.path(), body);
    let out = Command::new(BIN).args(["run", "--dry-run"]).arg(&plan).output().expect("run");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn bad_probe_tables_are_refused_at_their_line() {
    let base = plan(free_port(), free_port(), "");
    let cases = [
        ("kind = \"tcp\"", "kind = \"smtp\"", "unknown probe kind `smtp`", 24),
        (
            "interval = \"20ms\"\ntimeout = \"500ms\"\n\n[[probes]]\nkind = \"udp\"",
            "interval = \"20ms\"\ntimeout = \"500ms\"\n\n[[probes]]\nkind = \"udp\"\nintervl = 1",
            "unknown key `intervl`",
            31,
        ),
        ("name = \"echo\"", "name = \"tcp\"", "two probes are named `tcp`", 31),
        ("name = \"echo\"", "name = \"my probe\"", "letters, digits and _", 31),
        (
            "target = \"127.0.0.1:${udp_port}\"",
            "target = \"127.0.0.1:${udp}\"",
            "`${udp}` is not a matrix parameter",
            32,
        ),
        ("target = \"127.0.0.1:${udp_port}\"", "target = \"127.0.0.1\"", "needs a port", 32),
    ];
    for (from, to, want, line) in cases {
        assert!(base.contains(from), "{from}");
        let (code, stderr) = dry_run(&base.replacen(from, to, 1));
        assert_eq!(code, Some(2), "{want}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(stderr.contains(want), "{want}: {stderr}");
        {
            assert!(stderr.contains(&format!("plan.toml:{line}:")), "line {line}: {stderr}");
        }
    }
    // A threshold on a probe the plan does not have is refused like any unknown metric.
    let (code, stderr) = dry_run(&plan(free_port(), free_port(), r#"thresholds = ["probe_nope_p99_ms < 5"]"#));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("probe_nope_p99_ms"), "{stderr}");
}

#[test]
fn an_icmp_probe_without_the_privilege_refuses_the_plan_naming_the_sysctl() {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ping_group_range").unwrap_or_default();
    let r: Vec<u64> = range.split_whitespace().filter_map(|v| v.parse().ok()).collect();
    if r.len() == 2 && r[0] <= 65534 && 65534 <= r[1] {
        crate::common::skip_unless_required(&format!(
            "net.ipv4.ping_group_range ({}) lets nobody ping: nothing to refuse",
            range.trim()
        ));
        return;
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        crate::common::skip_unless_required("no setpriv to run as nobody (Debian package `util-linux`)");
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let body = "name = \"icmp\"\n[workload]\ntype = \"exec\"\ncommand = \"true\"\n\n[[probes]]\nkind = \"icmp\"\ntarget = \"127.0.0.1\"\n";
    let plan = write_plan(tmp.path(), body);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::set_permissions(&plan, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN, "run", "--dry-run"])
        .arg(&plan)
        .output()
        .expect("run as nobody");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.contains("plan.toml:6:1") && stderr.contains("net.ipv4.ping_group_range"),
        "{stderr}"
    );
}

#[test]
fn a_probe_whose_target_stops_answering_mid_trial_records_timeouts_as_loss_and_the_trial_goes_on() {
    let tmp = tempfile::tempdir().expect("tmp");
    let flag = tmp.path().join("stalled");
    let flag = flag.display();
    // The workload makes the probe's command hang from the load phase on; the probe's timeout
    // (150 ms) turns each hang into a timeout.
    let body = format!(
        r#"name = "stall"

[workload]
type = "exec"
command = ["sh", "-c", "touch {flag}; sleep 0.6"]

[phases]
baseline = "500ms"
warmup = "0s"
load = "600ms"
recovery = "400ms"
interval = "100ms"

[[probes]]
kind = "command"
name = "stall"
target = "if [ -e {flag} ]; then sleep 5; fi"
interval = "50ms"
timeout = "150ms"
"#
    );
    let plan = write_plan(tmp.path(), &body);
    let runs = tmp.path().join("runs");
    let out = Command::new(BIN)
        .args(["run", "--quiet", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("run perflab");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let store = Store::open(only_run_dir(&runs)).expect("store");
    let t = store.trials().expect("trials").pop().expect("a trial");
    assert!(t.ok(), "the trial goes on: {:?}", t.failure);
    let p = store.probes(t.id).expect("probes").pop().expect("the probe");
    // No missing samples: every probe sent is a row, in order.
    assert!(p.samples.iter().enumerate().all(|(i, s)| s.seq == i as u64));
    let of = |ph: &str| p.samples.iter().filter(|s| s.phase == ph).collect::<Vec<_>>();
    assert!(!of("baseline").is_empty() && of("baseline").iter().all(|s| s.outcome == "reply"));
    let recovery = of("recovery");
    assert!(
        !recovery.is_empty() && recovery.iter().all(|s| s.outcome == "timeout"),
        "{recovery:?}"
    );
    assert!(recovery.iter().all(|s| s.rtt_ms.is_none()));
    assert_eq!(t.metric("probe_stall_baseline_loss_pct"), Some(0.0));
    assert_eq!(t.metric("probe_stall_recovery_loss_pct"), Some(100.0));
    assert!(
        t.metric("probe_stall_loss_pct").is_some_and(|v| v > 0.0),
        "{:?}",
        t.metric("probe_stall_loss_pct")
    );
}

/// A store with a trial per point (`c=1`, `c=2`, ...) whose probe answered in 1 ms at baseline
/// and in the point's `load_ms` under load (with one timeout); None: no probe sent under load.
fn run_with_probe(dir: &std::path::Path, load_ms: &[Option<f64>]) {
    use perflab::store::{RunInfo, RunStatus};
    let mut s = Store::create(dir).expect("store");
    s.write_run(&RunInfo {
        plan_name: "p".into(),
        plan_file: "p.toml".into(),
        plan_source: String::new(),
        seed: 1,
        started_unix: 1_700_000_000.0,
        planned_trials: load_ms.len(),
    })
    .expect("run");
    for (point, load_ms) in load_ms.iter().enumerate() {
        trial_with_probe(&mut s, point, *load_ms);
    }
    s.finish_run(RunStatus::Complete, 1_700_000_010.0).expect("finish");
}

fn trial_with_probe(s: &mut Store, point: usize, load_ms: Option<f64>) {
    use perflab::model::{Phase, PhaseSpan, TrialInfo};
    use perflab::store::{ProbeRecord, ProbeRow, TrialRecord};
    let (label, params) = (format!("c={}", point + 1), format!("{{\"c\":{}}}", point + 1));
    s.write_point(point, &label, &params, 1, None).expect("point");
    let under_load = match load_ms {
        Some(ms) => std::iter::repeat_n(("load", ms), 20).chain([("load", -1.0)]).collect(),
        None => Vec::new(),
    };
    let mut samples = Vec::new();
    for (i, (phase, ms)) in std::iter::repeat_n(("baseline", 1.0), 20).chain(under_load).enumerate() {
        samples.push(ProbeRow {
            seq: i as u64,
            phase: phase.into(),
            t_s: 0.1 * i as f64,
            outcome: if ms < 0.0 { "timeout".into() } else { "reply".into() },
            rtt_ms: (ms >= 0.0).then_some(ms),
            status: None,
            packets: 2,
            bytes: 128,
        });
    }
    s.write_trial(&TrialRecord {
        info: TrialInfo {
            id: point,
            point,
            repetition: 1,
            params_json: params,
            workload: "http".into(),
            failure: None,
            started_unix: 1_700_000_000.0,
            ended_unix: 1_700_000_005.0,
            limit_mechanism: None,
            limit_proof: None,
            stdout_tail: None,
            stderr_tail: None,
            phases: vec![PhaseSpan::new(Phase::Baseline, 0.0, 2.0), PhaseSpan::new(Phase::Load, 2.0, 4.1)],
        },
        result: Some(Default::default()),
        samples: vec![],
        probes: vec![ProbeRecord {
            name: "ssh".into(),
            kind: "command".into(),
            target: "ssh server true".into(),
            interval_s: 0.1,
            detail: "sh -c".into(),
            started_s: 0.0,
            samples,
        }],
        profiles: vec![],
    })
    .expect("trial");
}

#[test]
fn the_report_tables_a_probe_idle_vs_under_load_and_p1_quotes_both_medians() {
    let tmp = tempfile::tempdir().expect("tmp");
    run_with_probe(tmp.path(), &[Some(5.0)]);
    let m = perflab::report::build(&[tmp.path()], false).expect("report");
    assert_eq!(m.probes.len(), 1);
    let p = &m.probes[0];
    let (b, l) = (p.phase("baseline").expect("baseline"), p.phase("load").expect("load"));
    assert_eq!((b.n, b.rtt.median_ms, b.rtt.sd_ms, b.loss_pct), (20, Some(1.0), Some(0.0), 0.0));
    assert_eq!((l.n, l.rtt.count, l.rtt.median_ms, l.rtt.max_ms), (21, 20, Some(5.0), Some(5.0)));
    assert!((l.loss_pct - 100.0 / 21.0).abs() < 1e-9);
    assert_eq!(p.inflation, Some(5.0));
    assert_eq!(p.diff_mean_ms, Some(4.0));
    assert_eq!(p.diff_ci95_ms, Some((4.0, 4.0)), "no spread, no uncertainty");
    // 41 probes of 2 packets over 4 s (the last send at 4.0 s, plus one interval): 20.5 packets/s.
    assert!((p.packets_per_s - 82.0 / 4.1).abs() < 1e-9, "{}", p.packets_per_s);
    let f = m
        .findings
        .iter()
        .find(|f| f.rule == "P1")
        .expect("P1 fires at 5 × the baseline median");
    assert!(f.title.contains("5.00 ms") && f.title.contains("1.00 ms"), "{}", f.title);
    assert_eq!(f.evidence[0].baseline, Some(1.0));
    // 1 ms → 1.5 ms: under the factor, no finding.
    let tmp = tempfile::tempdir().expect("tmp");
    run_with_probe(tmp.path(), &[Some(1.5)]);
    let m = perflab::report::build(&[tmp.path()], false).expect("report");
    assert!(m.findings.iter().all(|f| f.rule != "P1"));
    assert_eq!(m.probes[0].inflation, Some(1.5));
}

/// Several points: a probe's mean per point, idle → under load; a point where none of its probes
/// was sent under load says so.
#[test]
fn a_point_whose_probe_sent_nothing_under_load_says_so_in_the_table() {
    let tmp = tempfile::tempdir().expect("tmp");
    run_with_probe(tmp.path(), &[Some(5.0), None]);
    let out = tmp.path().join("rep");
    perflab::report::write(&[tmp.path()], &out, perflab::report::Formats::parse("md").unwrap(), false).expect("report");
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| ssh (command) |")).collect();
    assert_eq!(
        rows,
        ["| ssh (command) | 1.000 → 5.000 (4.762 % lost) | 1.000 → – (none sent) |"],
        "{md}"
    );
}
