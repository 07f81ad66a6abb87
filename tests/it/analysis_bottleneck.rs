//! Each bottleneck rule fires on a synthetic series built to trigger it and stays quiet on an
//! idle one; the ≥ 50 % rule; the evidence quoted and how it reads; the target's own limits, the
//! loopback run's kernel work and the load generator's machine; errors along the swept parameter;
//! docs/metrics.md's table is the rules' declaration.

use perflab::analysis::bottleneck::{docs, errors_by_parameter, evaluate, Context, Finding, PointSamples, Severity, CAVEATS};
use perflab::analysis::phases::{refs, Sample};
use perflab::analysis::table::SampleTable;

fn idle() -> Vec<(String, f64)> {
    [
        ("cpu_busy_pct", 3.0),
        ("cpu_user_pct", 2.0),
        ("cpu_system_pct", 1.0),
        ("cpu_iowait_pct", 0.0),
        ("cpu_steal_pct", 0.0),
        ("cpu_softirq_pct", 0.0),
        ("cpu0_busy_pct", 3.0),
        ("cpu1_busy_pct", 3.0),
        ("procs_running", 1.0),
        ("load_1", 0.1),
        ("psi_cpu_some_avg10_pct", 0.0),
        ("psi_io_some_avg10_pct", 0.0),
        ("psi_mem_full_avg10_pct", 0.0),
        ("swap_out_pages_per_s", 0.0),
        ("major_faults_per_s", 0.0),
        ("mem_available_mb", 3000.0),
        ("mem_total_mb", 4000.0),
        ("mem_used_pct", 25.0),
        ("oom_kills", 0.0),
        ("cgroup_throttled_pct", 0.0),
        ("disk_vda_util_pct", 1.0),
        ("disk_vda_aqu_sz", 0.01),
        ("disk_vda_r_await_ms", 1.0),
        ("disk_vda_w_await_ms", 1.0),
        ("net_eth0_rx_mbitps", 1.0),
        ("net_eth0_tx_mbitps", 1.0),
        ("net_eth0_rx_pkts_per_s", 100.0),
        ("net_eth0_tx_pkts_per_s", 100.0),
        ("net_eth0_rx_errs_per_s", 0.0),
        ("net_eth0_tx_errs_per_s", 0.0),
        ("net_eth0_rx_drops_per_s", 0.0),
        ("net_eth0_tx_drops_per_s", 0.0),
        ("tcp_retrans_per_s", 0.0),
        ("tcp_out_segs_per_s", 1000.0),
        ("proc_target_cpu_pct", 1.0),
        ("proc_loadgen_cpu_pct", 1.0),
        ("proc_loadgen_threads", 2.0),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), *v))
    .collect()
}

fn with(over: &[(&str, f64)]) -> Vec<(String, f64)> {
    let mut v = idle();
    for (k, x) in over {
        match v.iter_mut().find(|(n, _)| n == k) {
            Some(e) => e.1 = *x,
            None => v.push((k.to_string(), *x)),
        }
    }
    v
}

/// 5 idle baseline samples, then 10 load samples of which the first `hot` carry `over`.
fn series(over: &[(&str, f64)], hot: usize) -> Vec<Sample> {
    let mut s: Vec<Sample> = (0..5).map(|i| (i as f64, "baseline".into(), idle())).collect();
    for i in 0..10 {
        let v = if i < hot { with(over) } else { idle() };
        s.push((5.0 + i as f64, "load".into(), v));
    }
    s
}

fn ctx() -> Context {
    Context {
        line_rate_mbitps: Some(1000.0),
        ..Context::of(2)
    }
}

fn run(rows: &[Sample], oom: bool) -> Vec<Finding> {
    run_in(rows, oom, &ctx())
}

fn run_in(rows: &[Sample], oom: bool, ctx: &Context) -> Vec<Finding> {
    let p = PointSamples {
        label: "c=10".into(),
        samples: SampleTable::from_refs(&refs(rows)),
        oom_killed: oom,
    };
    evaluate(&[p], ctx)
}

fn ids(f: &[Finding]) -> Vec<String> {
    f.iter().map(|f| f.rule.to_string()).collect()
}

#[test]
fn idle_is_quiet() {
    assert!(run(&series(&[], 10), false).is_empty());
}

#[test]
fn each_rule_fires_on_its_series() {
    let cases: Vec<(&str, Vec<(&str, f64)>)> = vec![
        ("R1", vec![("cpu_busy_pct", 97.0), ("procs_running", 4.0)]),
        ("R2", vec![("procs_running", 5.0)]),
        ("R3", vec![("cpu0_busy_pct", 98.0), ("cpu_busy_pct", 51.0)]),
        ("R4", vec![("cpu_busy_pct", 80.0), ("cpu_system_pct", 65.0), ("cpu_user_pct", 15.0)]),
        ("R5", vec![("cgroup_throttled_pct", 40.0)]),
        (
            "R6",
            vec![
                ("cpu_iowait_pct", 35.0),
                ("disk_vda_util_pct", 99.0),
                ("disk_vda_aqu_sz", 4.0),
                ("disk_vda_w_await_ms", 40.0),
            ],
        ),
        ("R7", vec![("swap_out_pages_per_s", 200.0)]),
        ("R8", vec![("oom_kills", 1.0)]),
        ("R9", vec![("net_eth0_tx_mbitps", 950.0)]),
        ("R10", vec![("net_eth0_rx_errs_per_s", 50.0)]),
        ("R10", vec![("tcp_retrans_per_s", 30.0)]),
        ("R11", vec![("cpu_steal_pct", 20.0)]),
        (
            "R11",
            vec![
                ("cpu_busy_pct", 70.0),
                ("proc_target_cpu_pct", 60.0),
                ("proc_loadgen_cpu_pct", 40.0),
            ],
        ),
        ("R12", vec![("proc_loadgen_cpu_pct", 195.0)]),
        ("R13", vec![("proc_target_cpu_pct", 48.0), ("proc_target_cpu_limit_pct", 50.0)]),
    ];
    for (rule, over) in cases {
        let hot = if rule == "R8" { 1 } else { 10 };
        let f = run(&series(&over, hot), false);
        let got = ids(&f);
        assert!(got.contains(&rule.to_string()), "{rule} did not fire: {got:?}");
        let finding = f.iter().find(|x| x.rule == rule).expect("present");
        assert_eq!(finding.points, vec!["c=10".to_string()]);
        assert!(!finding.evidence.is_empty(), "{rule} quotes no evidence");
        assert_eq!(finding.severity, Severity::Critical, "{rule}");
        for e in &finding.evidence {
            assert!(!e.source.is_empty());
            assert_eq!(e.samples, 10, "{rule} {}", e.metric);
        }
    }
}

#[test]
fn exactly_the_targeted_rules() {
    assert_eq!(ids(&run(&series(&[("swap_out_pages_per_s", 200.0)], 10), false)), ["R7"]);
    assert_eq!(ids(&run(&series(&[("procs_running", 5.0)], 10), false)), ["R2"]);
    assert_eq!(ids(&run(&series(&[("cgroup_throttled_pct", 40.0)], 10), false)), ["R5"]);
    assert_eq!(ids(&run(&series(&[], 10), true)), ["R8"], "OOM flag alone fires R8");
    // A memory stall of milliseconds in ten seconds (another cgroup at its own limit) is not
    // pressure on a machine with most of its memory available; a stall 5 % of the time is.
    assert!(run(&series(&[("psi_mem_full_avg10_pct", 0.01)], 10), false).is_empty());
    assert_eq!(ids(&run(&series(&[("psi_mem_full_avg10_pct", 5.0)], 10), false)), ["R7"]);
}

#[test]
fn fires_only_in_half_the_load_samples_or_more() {
    let over = [("swap_out_pages_per_s", 200.0)];
    assert!(run(&series(&over, 4), false).is_empty(), "4 of 10 is below 50 %");
    let f = run(&series(&over, 5), false);
    assert_eq!(ids(&f), ["R7"]);
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!((f[0].hits[0].held, f[0].hits[0].samples), (5, 10));
}

#[test]
fn evidence_quotes_mean_p95_baseline_threshold() {
    let f = run(&series(&[("cpu_busy_pct", 97.0), ("procs_running", 4.0)], 10), false);
    let r1 = f.iter().find(|x| x.rule == "R1").expect("R1");
    let busy = r1.evidence.iter().find(|e| e.metric == "cpu_busy_pct").expect("busy");
    assert_eq!((busy.mean, busy.p95, busy.baseline), (97.0, 97.0, Some(3.0)));
    assert_eq!((busy.op.as_str(), busy.threshold, busy.crossed), (">=", 90.0, 10));
    let rq = r1.evidence.iter().find(|e| e.metric == "procs_running").expect("rq");
    assert_eq!(rq.threshold, 2.0);
    let text = r1.evidence_text();
    assert!(
        text.contains("c=10: cpu_busy_pct ≥ 90 % in 10 of 10 samples, mean 97 % (p95 97 %, baseline 3 %)"),
        "{text}"
    );
    // The disk rule carries the %util caveat.
    let f = run(
        &series(
            &[("cpu_iowait_pct", 35.0), ("disk_vda_util_pct", 99.0), ("disk_vda_w_await_ms", 40.0)],
            10,
        ),
        false,
    );
    let r6 = f.iter().find(|x| x.rule == "R6").expect("R6");
    assert!(r6.caveats.contains(&CAVEATS[0].to_string()));
}

#[test]
fn disk_await_must_grow_against_baseline() {
    // Busy device but await as in the baseline: not disk-bound.
    let f = run(&series(&[("cpu_iowait_pct", 35.0), ("disk_vda_util_pct", 99.0)], 10), false);
    assert!(!ids(&f).contains(&"R6".to_string()));
}

#[test]
fn errors_appear_above_some_concurrency() {
    let pts = vec![
        ("c=100".to_string(), 100.0, 0.2),
        ("c=1".to_string(), 1.0, 0.0),
        ("c=10".to_string(), 10.0, 0.0),
        ("c=50".to_string(), 50.0, 0.01),
    ];
    let f = errors_by_parameter("concurrency", &pts).expect("fires");
    assert_eq!(f.title, "errors appear from concurrency = 50 on");
    assert_eq!(f.points, vec!["c=50".to_string(), "c=100".to_string()]);
    assert_eq!(f.evidence.len(), 4);
    // Errors everywhere, or nowhere: no "from some value on".
    assert!(errors_by_parameter("concurrency", &[("a".into(), 1.0, 0.1), ("b".into(), 2.0, 0.1)]).is_none());
    assert!(errors_by_parameter("concurrency", &[("a".into(), 1.0, 0.0)]).is_none());
}

#[test]
fn the_evidence_says_the_statistic_that_met_the_rule() {
    // 6 of 10 load samples at 96 % CPU, 4 at 60 %: the mean (81.6 %) is under the threshold, so
    // "mean 81.6 >= 90" would read as a false statement; the samples over it met the rule.
    let mut rows = series(&[("cpu_busy_pct", 96.0), ("procs_running", 4.0)], 6);
    for r in rows.iter_mut().skip(11) {
        r.2.iter_mut().filter(|(k, _)| k == "cpu_busy_pct").for_each(|(_, v)| *v = 60.0);
    }
    let f = run(&rows, false);
    let r1 = f.iter().find(|x| x.rule == "R1").expect("R1 holds in 6 of 10");
    let busy = r1.evidence.iter().find(|e| e.metric == "cpu_busy_pct").expect("busy");
    let text = busy.text();
    assert!(
        text.starts_with("c=10: cpu_busy_pct ≥ 90 % in 6 of 10 samples, mean 81.6 %"),
        "{text}"
    );
    assert!(!text.contains("mean 81.6 >="), "{text}");
}

#[test]
fn a_target_limited_to_one_cpu_used_its_limit_it_is_not_single_thread_bound() {
    // A 2-CPU machine, the target confined to one CPU and using all of it: one hot CPU, the
    // average at half, the target at 98 % of one core.
    let limited = [
        ("cpu0_busy_pct", 99.0),
        ("cpu_busy_pct", 52.0),
        ("proc_target_cpu_pct", 98.0),
        ("proc_target_cpu_limit_pct", 100.0),
    ];
    let f = run(&series(&limited, 10), false);
    assert_eq!(ids(&f), ["R13"], "{f:#?}");
    assert_eq!(f[0].title, "the target used its whole CPU limit (1 CPU)");
    assert_eq!(f[0].culprit(), perflab::analysis::bottleneck::Culprit::TargetLimit);
    // Half a CPU of quota: "(0.5 CPUs)".
    let f = run(
        &series(&[("proc_target_cpu_pct", 49.0), ("proc_target_cpu_limit_pct", 50.0)], 10),
        false,
    );
    assert_eq!(f[0].title, "the target used its whole CPU limit (0.5 CPUs)");
    // Without a limit it is one thread of several cores, as before.
    let free = [("cpu0_busy_pct", 99.0), ("cpu_busy_pct", 52.0), ("proc_target_cpu_pct", 98.0)];
    assert_eq!(ids(&run(&series(&free, 10), false)), ["R3"]);
    // Limited to 2 CPUs and using one: single-thread bound.
    let two = [("proc_target_cpu_pct", 98.0), ("proc_target_cpu_limit_pct", 200.0)];
    assert_eq!(ids(&run(&series(&two, 10), false)), ["R3"]);
}

#[test]
fn a_loopback_runs_kernel_work_is_not_a_noisy_host() {
    // Measured shape of a loopback HTTP run on 2 CPUs: the target 70 % and the load generator
    // 60 % of a core (65 % of the machine), softirq 20 % for their traffic, 84 % busy.
    let loopback = [
        ("cpu_busy_pct", 84.0),
        ("cpu_softirq_pct", 20.0),
        ("proc_target_cpu_pct", 70.0),
        ("proc_loadgen_cpu_pct", 60.0),
    ];
    assert!(run(&series(&loopback, 10), false).is_empty(), "nothing else ran");
    // Another process taking 30 % of the machine on top of that is a noisy host.
    let noisy = [
        ("cpu_busy_pct", 100.0),
        ("cpu_softirq_pct", 5.0),
        ("proc_target_cpu_pct", 70.0),
        ("proc_loadgen_cpu_pct", 60.0),
    ];
    assert_eq!(ids(&run(&series(&noisy, 10), false)), ["R11"]);
}

#[test]
fn the_load_generator_on_the_targets_machine_is_said_to_be_the_other_load() {
    // A host that is a network namespace of this machine: its samples have the target but not the
    // load generator, whose CPU shows as other load there.
    let server: Vec<(&str, f64)> = vec![("cpu_busy_pct", 90.0), ("proc_target_cpu_pct", 70.0)];
    let strip = |rows: Vec<Sample>| -> Vec<Sample> {
        rows.into_iter()
            .map(|(t, p, v)| (t, p, v.into_iter().filter(|(k, _)| k != "proc_loadgen_cpu_pct").collect()))
            .collect()
    };
    let same = Context {
        loadgen_unsampled: true,
        ..ctx()
    };
    let f = run_in(&strip(series(&server, 10)), false, &same);
    assert_eq!(ids(&f), ["R14"], "{f:#?}");
    assert_eq!(f[0].title, "the load generator shares the target's machine");
    // Another machine: the same figures are other load there.
    assert_eq!(ids(&run_in(&strip(series(&server, 10)), false, &ctx())), ["R11"]);
}

#[test]
fn findings_rank_errors_and_the_targets_limits_first() {
    use perflab::analysis::bottleneck::rank;
    let mut f = run(
        &series(
            &[
                ("cpu_busy_pct", 97.0),
                ("procs_running", 4.0),
                ("proc_loadgen_cpu_pct", 195.0),
                ("cpu_steal_pct", 20.0),
                ("proc_target_throttled_pct", 50.0),
            ],
            10,
        ),
        false,
    );
    let pts = vec![("c=1".to_string(), 1.0, 0.0), ("c=10".to_string(), 10.0, 0.5)];
    f.extend(errors_by_parameter("c", &pts));
    rank(&mut f);
    assert_eq!(ids(&f), ["E1", "R5", "R1", "R2", "R12", "R11"]);
}

#[test]
fn docs_metrics_md_carries_the_rules_as_declared() {
    let doc = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/metrics.md")).expect("docs/metrics.md");
    let table = docs::table();
    assert!(
        doc.contains(&table),
        "docs/metrics.md must carry the rules' table exactly as rules.rs declares them; paste:\n\n{table}"
    );
}
