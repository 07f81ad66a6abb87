//! The bottleneck rules, each declared once: its id, what it names, whom it blames, its condition
//! over one monitor sample (metrics, operators, thresholds and where each threshold comes from) and
//! what this build cannot see of it. docs/metrics.md's table is printed from these declarations
//! (`docs::table`, checked by a test); the evaluation, the gate, the read set and the knee's
//! saturation test read them.
//!
//! A new rule is one more entry here (its id next in its family) and a test that it fires on a
//! series built for it (tests/it/analysis_bottleneck.rs).

use super::probes::{INFLATION_FACTOR, MIN_INCREASE_MS};
use super::rule::Val::{Add, Base, Ctx, Div, Else, Max, Min, Mul, K, M};
use super::rule::{blind, each, guard, knee, outside, rule, t, with_caveats};
use super::rule::{Cond, CtxVal, Culprit, Rule, RuleId, TitleFigure, When, NCPU};
use super::Kind;

/// Caveat indexes into `CAVEATS`.
const UTIL: usize = 0;
const IOWAIT: usize = 1;
const LOADAVG: usize = 2;
const NIC: usize = 3;
const SOFTIRQ: usize = 4;

/// Other CPU than the target's and the load generator's, in % of the machine, is compared with
/// this (p).
pub const OTHERS_PCT: f64 = 10.0;

/// Every rule, in id order.
pub static RULES: &[Rule] = &[
    rule(
        1,
        "CPU saturated",
        "CPU",
        Kind::Saturation,
        Culprit::System,
        Cond::All(&[
            knee!(M("cpu_busy_pct"), Ge, K(90.0), "atop, pmie, node-mixin 90 %"),
            Cond::Any(&[
                t!(M("procs_running"), Gt, NCPU, "ncpu (Netflix USE)"),
                knee!(M("psi_cpu_some_avg10_pct"), Ge, K(10.0), "PSI cpu some (p)"),
            ]),
        ]),
        "atop, pmie, node-mixin (90 %); Netflix/USE (run queue); PSI 10 % (p)",
    ),
    with_caveats(
        rule(
            2,
            "run queue longer than the cores",
            "CPU",
            Kind::Saturation,
            Culprit::System,
            Cond::Any(&[
                t!(M("procs_running"), Gt, NCPU, "ncpu (Netflix USE)"),
                t!(M("load_1"), Gt, Mul(&K(2.0), &NCPU), "2 x ncpu (node-mixin)"),
            ]),
            "Netflix/USE; node-mixin (2 × ncpu)",
        ),
        &[LOADAVG],
    ),
    rule(
        3,
        "single-thread bound",
        "CPU (one core)",
        Kind::Utilization,
        Culprit::System,
        Cond::All(&[
            guard!(NCPU, Ge, K(2.0)),
            // A target limited to about one CPU is R13's, not a single thread's.
            guard!(Else(&M("proc_target_cpu_limit_pct"), &K(f64::INFINITY)), Gt, K(110.0)),
            Cond::Any(&[
                Cond::All(&[
                    each!(
                        "cpu",
                        "_busy_pct",
                        Digits,
                        "a CPU N",
                        "N",
                        knee!(M("cpu{}_busy_pct"), Ge, K(90.0), "one hot CPU (Netflix)")
                    ),
                    t!(M("cpu_busy_pct"), Le, Add(&Div(&K(100.0), &NCPU), &K(10.0)), "100/ncpu + 10 (p)"),
                ]),
                Cond::All(&[
                    t!(M("proc_target_cpu_pct"), Ge, K(90.0), "target ~ one core of several (Netflix)"),
                    guard!(M("proc_target_cpu_pct"), Le, K(110.0)),
                ]),
            ]),
        ]),
        "Netflix (one hot CPU); the 100 / ncpu + 10 margin (p)",
    ),
    rule(
        4,
        "kernel-heavy CPU use",
        "CPU (kernel)",
        Kind::Utilization,
        Culprit::System,
        Cond::All(&[
            t!(M("cpu_busy_pct"), Gt, K(70.0), "pmie cpu.system"),
            t!(
                M("cpu_system_pct"),
                Gt,
                Mul(&K(0.75), &Add(&M("cpu_user_pct"), &M("cpu_system_pct"))),
                "75 % of usr+sys (pmie)"
            ),
        ]),
        "pmie",
    ),
    blind(
        rule(
            5,
            "CPU quota throttled",
            "CPU quota",
            Kind::Saturation,
            Culprit::TargetLimit,
            each!(
                "",
                "throttled_pct",
                Any,
                "a throttled share `…throttled_pct` (such as `proc_target_throttled_pct`)",
                "…",
                t!(M("{}throttled_pct"), Gt, K(10.0), "throttled periods (below) (p)")
            ),
            "below's throttled_pct (p)",
        ),
        "throttling is sampled only for a target started with a `cpu_quota`, from its cgroup's cpu.stat",
    ),
    with_caveats(
        rule(
            6,
            "disk-bound",
            "disk",
            Kind::Saturation,
            Culprit::System,
            Cond::All(&[
                Cond::Any(&[
                    knee!(M("cpu_iowait_pct"), Ge, K(20.0), "netdata 20 %"),
                    knee!(M("psi_io_some_avg10_pct"), Ge, K(10.0), "PSI io some (p)"),
                ]),
                each!(
                    "disk_",
                    "_util_pct",
                    Any,
                    "a disk D",
                    "D",
                    Cond::All(&[
                        Cond::Any(&[
                            knee!(M("disk_{}_util_pct"), Ge, K(90.0), "atop 90 %"),
                            t!(M("disk_{}_aqu_sz"), Gt, K(1.0), "Netflix USE"),
                        ]),
                        Cond::Any(&[
                            t!(
                                M("disk_{}_r_await_ms"),
                                Gt,
                                Mul(&K(2.0), &Max(&Else(&Base("disk_{}_r_await_ms"), &K(0.0)), &K(0.5))),
                                "2 x baseline await (p)"
                            ),
                            t!(
                                M("disk_{}_w_await_ms"),
                                Gt,
                                Mul(&K(2.0), &Max(&Else(&Base("disk_{}_w_await_ms"), &K(0.0)), &K(0.5))),
                                "2 x baseline await (p)"
                            ),
                        ]),
                    ])
                ),
            ]),
            "Netdata (iowait 20 %); atop (90 %); Netflix/USE (queue > 1); PSI 10 % and 2 × baseline (p)",
        ),
        &[UTIL, IOWAIT],
    ),
    rule(
        7,
        "memory pressure / swap thrash",
        "memory",
        Kind::Saturation,
        Culprit::System,
        Cond::Any(&[
            knee!(M("swap_out_pages_per_s"), Gt, K(10.0), "atop, netdata"),
            t!(M("major_faults_per_s"), Gt, K(500.0), "node-mixin"),
            knee!(M("mem_used_pct"), Gt, K(90.0), "under 10 % of RAM available (node-mixin)"),
            t!(
                M("psi_mem_full_avg10_pct"),
                Gt,
                K(1.0),
                "PSI memory full over 1 % of the time (netdata; less is a stall of milliseconds, often another cgroup at its own limit)"
            ),
        ]),
        "atop, Netdata (swap-out); node-mixin (major faults, 10 % available); Netdata (PSI)",
    ),
    blind(
        Rule {
            when: When::Event {
                cond: Cond::Any(&[
                    t!(M("oom_kills"), Gt, K(0.0), "vmstat oom_kill (pmie, netdata, atop)"),
                    t!(M("oom_kills_per_s"), Gt, K(0.0), "vmstat oom_kill (pmie, netdata, atop)"),
                ]),
                oom: true,
            },
            ..rule(
                8,
                "OOM kill",
                "memory",
                Kind::Errors,
                Culprit::Errors,
                Cond::All(&[]),
                "pmie, Netdata, atop",
            )
        },
        "the monitor records no oom_kill counts, so it fires only from the target's exit: status 137, or SIGKILL",
    ),
    with_caveats(
        blind(
            rule(
                9,
                "NIC at line rate",
                "network",
                Kind::Utilization,
                Culprit::System,
                Cond::Any(&[
                    each!(
                        "net_",
                        "_rx_mbitps",
                        NotLoopback,
                        "an interface I other than lo",
                        "I",
                        t!(
                            M("net_{}_rx_mbitps"),
                            Ge,
                            Mul(&K(0.9), &Ctx(CtxVal::LineRate)),
                            "90 % of the line rate (atop, pmie, netdata)"
                        )
                    ),
                    each!(
                        "net_",
                        "_tx_mbitps",
                        NotLoopback,
                        "an interface I other than lo",
                        "I",
                        t!(
                            M("net_{}_tx_mbitps"),
                            Ge,
                            Mul(&K(0.9), &Ctx(CtxVal::LineRate)),
                            "90 % of the line rate (atop, pmie, netdata)"
                        )
                    ),
                ]),
                "atop, pmie, Netdata (90 %)",
            ),
            "it needs the NIC's line rate, which `perflab report` does not take: virtual NICs report none",
        ),
        &[NIC],
    ),
    blind(
        rule(
            10,
            "network errors, drops or retransmits",
            "network",
            Kind::Errors,
            Culprit::System,
            Cond::Any(&[
                each!(
                    "net_",
                    "_rx_pkts_per_s",
                    Any,
                    "an interface I",
                    "I",
                    Cond::Any(&[
                        t!(
                            Add(
                                &Else(&M("net_{}_rx_errs_per_s"), &K(0.0)),
                                &Else(&M("net_{}_tx_errs_per_s"), &K(0.0))
                            ),
                            Gt,
                            Mul(
                                &K(0.01),
                                &Add(&M("net_{}_rx_pkts_per_s"), &Else(&M("net_{}_tx_pkts_per_s"), &K(0.0)))
                            ),
                            "1 % of packets (node-mixin)"
                        ),
                        Cond::All(&[
                            t!(
                                Add(
                                    &Else(&M("net_{}_rx_drops_per_s"), &K(0.0)),
                                    &Else(&M("net_{}_tx_drops_per_s"), &K(0.0))
                                ),
                                Ge,
                                Mul(
                                    &K(0.02),
                                    &Add(&M("net_{}_rx_pkts_per_s"), &Else(&M("net_{}_tx_pkts_per_s"), &K(0.0)))
                                ),
                                "2 % of packets (netdata)"
                            ),
                            guard!(
                                Add(
                                    &Else(&M("net_{}_rx_drops_per_s"), &K(0.0)),
                                    &Else(&M("net_{}_tx_drops_per_s"), &K(0.0))
                                ),
                                Gt,
                                K(0.0)
                            ),
                        ]),
                    ])
                ),
                t!(M("tcp_listen_overflows_per_s"), Gt, K(0.0), "pmie, node_exporter"),
                Cond::All(&[
                    t!(
                        M("tcp_retrans_per_s"),
                        Gt,
                        Mul(&K(0.01), &M("tcp_out_segs_per_s")),
                        "1 % of out segments (p)"
                    ),
                    guard!(M("tcp_out_segs_per_s"), Gt, K(0.0)),
                ]),
            ]),
            "node-mixin (1 %); Netdata (2 %); pmie, node exporter (overflows); 1 % retransmits (p)",
        ),
        "its listen-overflow part needs `tcp_listen_overflows_per_s`, which the monitor does not record",
    ),
    with_caveats(
        rule(
            11,
            "noisy host",
            "host",
            Kind::Saturation,
            Culprit::Host,
            Cond::Any(&[
                knee!(M("cpu_steal_pct"), Ge, K(10.0), "netdata 10 %"),
                Cond::All(&[
                    t!(
                        M("cpu_busy_pct"),
                        Gt,
                        Add(
                            &Add(
                                &Div(&Add(&M("proc_target_cpu_pct"), &Else(&M("proc_loadgen_cpu_pct"), &K(0.0))), &NCPU),
                                &Else(&M("cpu_softirq_pct"), &K(0.0))
                            ),
                            &K(OTHERS_PCT)
                        ),
                        "target + load generator + softirq + 10 % of the machine (p)"
                    ),
                    guard!(Ctx(CtxVal::LoadgenUnsampled), Lt, K(0.5)),
                ]),
            ]),
            "Netdata (steal 10 %); others' share (p)",
        ),
        &[SOFTIRQ],
    ),
    rule(
        12,
        "the load generator itself saturated",
        "load generator",
        Kind::Utilization,
        Culprit::LoadGenerator,
        knee!(
            M("proc_loadgen_cpu_pct"),
            Ge,
            Mul(
                &K(90.0),
                &Else(
                    &Ctx(CtxVal::LoadgenCores),
                    &Else(&Min(&NCPU, &Max(&M("proc_loadgen_threads"), &K(1.0))), &NCPU)
                )
            ),
            "90 % of its cores (p)"
        ),
        "(p)",
    ),
    Rule {
        figure: Some(TitleFigure {
            metric: "proc_target_cpu_limit_pct",
            scale: 0.01,
            unit: "CPU",
            units: "CPUs",
        }),
        ..rule(
            13,
            "the target used its whole CPU limit",
            "the target's CPU limit",
            Kind::Utilization,
            Culprit::TargetLimit,
            t!(
                M("proc_target_cpu_pct"),
                Ge,
                Mul(&K(0.9), &M("proc_target_cpu_limit_pct")),
                "90 % of the CPUs or quota the plan gave it (p)"
            ),
            "90 % of the limit, as for the load generator (p)",
        )
    },
    with_caveats(
        rule(
            14,
            "the load generator shares the target's machine",
            "load generator",
            Kind::Saturation,
            Culprit::LoadGenerator,
            Cond::All(&[
                t!(
                    M("cpu_busy_pct"),
                    Gt,
                    Add(
                        &Add(&Div(&M("proc_target_cpu_pct"), &NCPU), &Else(&M("cpu_softirq_pct"), &K(0.0))),
                        &K(OTHERS_PCT)
                    ),
                    "target + softirq + 10 % of the machine (p)"
                ),
                guard!(Ctx(CtxVal::LoadgenUnsampled), Ge, K(0.5)),
            ]),
            "as R11's others' share (p)",
        ),
        &[SOFTIRQ],
    ),
    outside(
        RuleId::e(1),
        "errors appear from some value on",
        "errors",
        Kind::Errors,
        Culprit::Errors,
        e1_text,
        "the point's own error-free neighbours",
    ),
    outside(
        RuleId::e(2),
        "an error class appears from some value on",
        "database",
        Kind::Errors,
        Culprit::Errors,
        e2_text,
        "the point's own counts",
    ),
    outside(
        RuleId::p(1),
        "responsiveness lost under load",
        "responsiveness",
        Kind::Saturation,
        Culprit::System,
        p1_text,
        "flent's RRUL \"latency under load\" idea; the factor and floor (p)",
    ),
    outside(
        RuleId::d(1),
        "round-trip bound",
        "the load's concurrency",
        Kind::Saturation,
        Culprit::Load,
        super::diagnoses::d1_text,
        "Little's law (N = X × R); the 10 % margin (p)",
    ),
    outside(
        RuleId::d(2),
        "load generator too weak",
        "load generator",
        Kind::Utilization,
        Culprit::LoadGenerator,
        super::diagnoses::d2_text,
        "the asked rate; the 5 % margin (p); R12",
    ),
    outside(
        RuleId::d(3),
        "no bottleneck at this load",
        "headroom",
        Kind::Utilization,
        Culprit::Nobody,
        super::diagnoses::d3_text,
        "the other rules' thresholds; 1.25 × the lightest load's latency (p)",
    ),
];

fn e1_text() -> String {
    "along the swept parameter (per variant), the lowest value with errors per trial > 0 has at least one error-free \
     point below it; always critical"
        .into()
}

fn e2_text() -> String {
    "per class of the `errors_<class>` metrics (the oltp workload's: deadlock, duplicate_key, too_many_connections, \
     connection_lost, other), per variant, the lowest value of the swept parameter whose mean count per trial is > 0 \
     (said as such when it is the lowest value run), with the class's first message at that point; always critical"
        .into()
}

fn p1_text() -> String {
    format!(
        "a latency probe's (`[[probes]]`) median round trip under load is ≥ {INFLATION_FACTOR} × its baseline median \
         and at least {MIN_INCREASE_MS} ms more (all the point's trials pooled); critical from {} ×; the finding \
         quotes both medians",
        super::probes::CRITICAL_FACTOR
    )
}

/// The declaration of a rule.
pub fn rule_of(id: RuleId) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// Where a finding of this rule ranks: by whom it blames (unknown rules last).
pub fn culprit_of(id: RuleId) -> Culprit {
    rule_of(id).map_or(Culprit::Host, |r| r.culprit)
}

/// The rules read from the monitor samples, in id order.
pub fn sampled() -> impl Iterator<Item = &'static Rule> {
    RULES.iter().filter(|r| r.cond().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_in_order() {
        let ids: Vec<RuleId> = RULES.iter().map(|r| r.id).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(ids, sorted);
    }
}
