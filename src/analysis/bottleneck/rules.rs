//! The rules R1–R12 (docs/metrics.md, "Bottleneck rules"), one function each. A check returns None
//! when the sample lacks the rule's metrics, Some(empty) when the condition does not hold, and the
//! culprit metrics (with the thresholds they crossed) when it does.

use super::{Culprit, Env, Kind, Op, Rule};

fn c(metric: impl Into<String>, op: Op, threshold: f64, source: &'static str) -> Culprit {
    Culprit {
        metric: metric.into(),
        op,
        threshold,
        source,
    }
}

/// Caveat indexes into `CAVEATS`.
const UTIL: usize = 0;
const IOWAIT: usize = 1;
const LOADAVG: usize = 2;
const NIC: usize = 3;
const SOFTIRQ: usize = 4;

pub(crate) const RULES: &[Rule] = &[
    Rule {
        id: "R1",
        title: "CPU saturated",
        resource: "CPU",
        kind: Kind::Saturation,
        event: false,
        check: r1_cpu_saturated,
        caveats: &[],
    },
    Rule {
        id: "R2",
        title: "run queue longer than the cores",
        resource: "CPU",
        kind: Kind::Saturation,
        event: false,
        check: r2_run_queue,
        caveats: &[LOADAVG],
    },
    Rule {
        id: "R3",
        title: "single-thread bound",
        resource: "CPU (one core)",
        kind: Kind::Utilization,
        event: false,
        check: r3_single_thread,
        caveats: &[],
    },
    Rule {
        id: "R4",
        title: "kernel-heavy CPU use",
        resource: "CPU (kernel)",
        kind: Kind::Utilization,
        event: false,
        check: r4_kernel_heavy,
        caveats: &[],
    },
    Rule {
        id: "R5",
        title: "CPU quota throttled",
        resource: "CPU quota",
        kind: Kind::Saturation,
        event: false,
        check: r5_throttled,
        caveats: &[],
    },
    Rule {
        id: "R6",
        title: "disk-bound",
        resource: "disk",
        kind: Kind::Saturation,
        event: false,
        check: r6_disk,
        caveats: &[UTIL, IOWAIT],
    },
    Rule {
        id: "R7",
        title: "memory pressure / swap thrash",
        resource: "memory",
        kind: Kind::Saturation,
        event: false,
        check: r7_memory,
        caveats: &[],
    },
    Rule {
        id: "R8",
        title: "OOM kill",
        resource: "memory",
        kind: Kind::Errors,
        event: true,
        check: r8_oom,
        caveats: &[],
    },
    Rule {
        id: "R9",
        title: "NIC at line rate",
        resource: "network",
        kind: Kind::Utilization,
        event: false,
        check: r9_line_rate,
        caveats: &[NIC],
    },
    Rule {
        id: "R10",
        title: "network errors, drops or retransmits",
        resource: "network",
        kind: Kind::Errors,
        event: false,
        check: r10_net_errors,
        caveats: &[],
    },
    Rule {
        id: "R11",
        title: "noisy host",
        resource: "host",
        kind: Kind::Saturation,
        event: false,
        check: r11_noisy_host,
        caveats: &[SOFTIRQ],
    },
    Rule {
        id: "R12",
        title: "the load generator itself saturated",
        resource: "load generator",
        kind: Kind::Utilization,
        event: false,
        check: r12_loadgen,
        caveats: &[],
    },
];

/// `prefix + middle + suffix` in `buf` (reused: no string made per lookup).
fn named<'b>(buf: &'b mut String, prefix: &str, middle: &str, suffix: &str) -> &'b str {
    buf.clear();
    buf.push_str(prefix);
    buf.push_str(middle);
    buf.push_str(suffix);
    buf
}

/// Culprits when `any` is true, else none.
fn when(any: bool, culprits: Vec<Culprit>) -> Vec<Culprit> {
    if any {
        culprits
    } else {
        Vec::new()
    }
}

/// R1: cpu_busy ≥ 90 % and (run queue > ncpu or PSI cpu some ≥ 10 %).
fn r1_cpu_saturated(e: &Env) -> Option<Vec<Culprit>> {
    let busy = e.get("cpu_busy_pct")?;
    let rq = e.get("procs_running");
    let psi = e.get("psi_cpu_some_avg10_pct");
    let mut out = Vec::new();
    if busy < 90.0 {
        return Some(out);
    }
    if rq.is_some_and(|r| r > e.ncpu) {
        out.push(c("procs_running", Op::Gt, e.ncpu, "ncpu (Netflix USE)"));
    }
    if psi.is_some_and(|p| p >= 10.0) {
        out.push(c("psi_cpu_some_avg10_pct", Op::Ge, 10.0, "PSI cpu some (p)"));
    }
    if !out.is_empty() {
        out.insert(0, c("cpu_busy_pct", Op::Ge, 90.0, "atop, pmie, node-mixin 90 %"));
    }
    Some(out)
}

/// R2: run queue > ncpu, or load1 / ncpu > 2.
fn r2_run_queue(e: &Env) -> Option<Vec<Culprit>> {
    let rq = e.get("procs_running");
    let l1 = e.get("load_1");
    if rq.is_none() && l1.is_none() {
        return None;
    }
    let mut out = Vec::new();
    if rq.is_some_and(|r| r > e.ncpu) {
        out.push(c("procs_running", Op::Gt, e.ncpu, "ncpu (Netflix USE)"));
    }
    if l1.is_some_and(|l| l / e.ncpu > 2.0) {
        out.push(c("load_1", Op::Gt, 2.0 * e.ncpu, "2 x ncpu (node-mixin)"));
    }
    Some(out)
}

/// R3: one CPU ≥ 90 % while the average ≤ 100/ncpu + 10 (p), or the target's %CPU ≈ 100
/// (90..110, one core) with ncpu > 1.
fn r3_single_thread(e: &Env) -> Option<Vec<Culprit>> {
    if e.ncpu < 2.0 {
        return None;
    }
    let avg = e.get("cpu_busy_pct");
    let hot = e
        .matching("cpu", "_busy_pct")
        .filter(|(mid, _)| mid.bytes().all(|b| b.is_ascii_digit()))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let sut = e.get("proc_target_cpu_pct");
    if (avg.is_none() || hot.is_none()) && sut.is_none() {
        return None;
    }
    let mut out = Vec::new();
    let cap = 100.0 / e.ncpu + 10.0;
    if let (Some(a), Some((cpu, h))) = (avg, hot) {
        if h >= 90.0 && a <= cap {
            out.push(c(format!("cpu{cpu}_busy_pct"), Op::Ge, 90.0, "one hot CPU (Netflix)"));
            out.push(c("cpu_busy_pct", Op::Lt, cap, "100/ncpu + 10 (p)"));
        }
    }
    if sut.is_some_and(|s| (90.0..=110.0).contains(&s)) {
        out.push(c("proc_target_cpu_pct", Op::Ge, 90.0, "target ~ one core of several (Netflix)"));
    }
    Some(out)
}

/// R4: sys / (usr + sys) > 75 % while busy > 70 %.
fn r4_kernel_heavy(e: &Env) -> Option<Vec<Culprit>> {
    let (busy, sys, usr) = (e.get("cpu_busy_pct")?, e.get("cpu_system_pct")?, e.get("cpu_user_pct")?);
    let share = if usr + sys > 0.0 { sys / (usr + sys) } else { 0.0 };
    Some(when(
        busy > 70.0 && share > 0.75,
        vec![
            c("cpu_busy_pct", Op::Gt, 70.0, "pmie cpu.system"),
            c("cpu_system_pct", Op::Gt, 0.75 * (usr + sys), "75 % of usr+sys (pmie)"),
        ],
    ))
}

/// R5: throttled periods / periods > 10 % (p), from any `*throttled_pct` metric.
fn r5_throttled(e: &Env) -> Option<Vec<Culprit>> {
    let mut seen = false;
    let mut out = Vec::new();
    for (mid, v) in e.matching("", "throttled_pct") {
        seen = true;
        if v > 10.0 {
            out.push(c(format!("{mid}throttled_pct"), Op::Gt, 10.0, "throttled periods (below) (p)"));
        }
    }
    seen.then_some(out)
}

/// R6: (iowait ≥ 20 % or PSI io some ≥ 10 % (p)) and a device with (%util ≥ 90 or aqu-sz > 1)
/// whose await is > 2 × its baseline (p; baseline floored at 0.5 ms).
fn r6_disk(e: &Env) -> Option<Vec<Culprit>> {
    let iow = e.get("cpu_iowait_pct");
    let psi = e.get("psi_io_some_avg10_pct");
    if iow.is_none() && psi.is_none() {
        return None;
    }
    let devs: Vec<(&str, f64)> = e.matching("disk_", "_util_pct").collect();
    if devs.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    if iow.is_some_and(|v| v >= 20.0) {
        out.push(c("cpu_iowait_pct", Op::Ge, 20.0, "netdata 20 %"));
    }
    if psi.is_some_and(|v| v >= 10.0) {
        out.push(c("psi_io_some_avg10_pct", Op::Ge, 10.0, "PSI io some (p)"));
    }
    if out.is_empty() {
        return Some(out);
    }
    let mut dev_out = Vec::new();
    let mut key = String::new();
    for (dev, util) in devs {
        let aqu = e.get(named(&mut key, "disk_", dev, "_aqu_sz"));
        let busy = util >= 90.0 || aqu.is_some_and(|a| a > 1.0);
        if !busy {
            continue;
        }
        for side in ["_r_await_ms", "_w_await_ms"] {
            let name = named(&mut key, "disk_", dev, side);
            let base = e.baseline(name).unwrap_or(0.0).max(0.5);
            if e.get(name).is_some_and(|a| a > 2.0 * base) {
                if util >= 90.0 {
                    dev_out.push(c(format!("disk_{dev}_util_pct"), Op::Ge, 90.0, "atop 90 %"));
                }
                if aqu.is_some_and(|a| a > 1.0) {
                    dev_out.push(c(format!("disk_{dev}_aqu_sz"), Op::Gt, 1.0, "Netflix USE"));
                }
                dev_out.push(c(name.to_string(), Op::Gt, 2.0 * base, "2 x baseline await (p)"));
            }
        }
    }
    if dev_out.is_empty() {
        return Some(Vec::new());
    }
    out.extend(dev_out);
    Some(out)
}

/// R7: swap-out > 10 pages/s, major faults > 500/s, MemAvailable < 10 % or PSI mem full > 0.
fn r7_memory(e: &Env) -> Option<Vec<Culprit>> {
    let so = e.get("swap_out_pages_per_s");
    let mf = e.get("major_faults_per_s");
    let avail = e.get("mem_available_mb").zip(e.get("mem_total_mb"));
    let psi = e.get("psi_mem_full_avg10_pct");
    if so.is_none() && mf.is_none() && avail.is_none() && psi.is_none() {
        return None;
    }
    let mut out = Vec::new();
    if so.is_some_and(|v| v > 10.0) {
        out.push(c("swap_out_pages_per_s", Op::Gt, 10.0, "atop, netdata"));
    }
    if mf.is_some_and(|v| v > 500.0) {
        out.push(c("major_faults_per_s", Op::Gt, 500.0, "node-mixin"));
    }
    if let Some((a, t)) = avail {
        if t > 0.0 && a < 0.1 * t {
            out.push(c("mem_available_mb", Op::Lt, 0.1 * t, "10 % of RAM (node-mixin)"));
        }
    }
    if psi.is_some_and(|v| v > 0.0) {
        out.push(c("psi_mem_full_avg10_pct", Op::Gt, 0.0, "PSI memory full (netdata)"));
    }
    Some(out)
}

/// R8: an OOM kill (`oom_kills` or `oom_kills_per_s` > 0 in any sample).
fn r8_oom(e: &Env) -> Option<Vec<Culprit>> {
    let mut seen = false;
    let mut out = Vec::new();
    for name in ["oom_kills", "oom_kills_per_s"] {
        if let Some(v) = e.get(name) {
            seen = true;
            if v > 0.0 {
                out.push(c(name, Op::Gt, 0.0, "vmstat oom_kill (pmie, netdata, atop)"));
            }
        }
    }
    seen.then_some(out)
}

/// R9: max(rx, tx) ≥ 90 % of the given line rate on a non-loopback interface.
fn r9_line_rate(e: &Env) -> Option<Vec<Culprit>> {
    let rate = e.ctx.line_rate_mbitps.filter(|r| *r > 0.0)?;
    let mut seen = false;
    let mut out = Vec::new();
    for dir in ["rx", "tx"] {
        let suffix = format!("_{dir}_mbitps");
        for (iface, v) in e.matching("net_", &suffix) {
            if iface == "lo" {
                continue;
            }
            seen = true;
            if v >= 0.9 * rate {
                out.push(c(
                    format!("net_{iface}{suffix}"),
                    Op::Ge,
                    0.9 * rate,
                    "90 % of the line rate (atop, pmie, netdata)",
                ));
            }
        }
    }
    seen.then_some(out)
}

/// R10: per interface errs / pkts > 1 %, drops / pkts ≥ 2 %; listen overflows > 0;
/// retransmits / out segments > 1 % (p) when out segments are known.
fn r10_net_errors(e: &Env) -> Option<Vec<Culprit>> {
    let mut seen = false;
    let mut out = Vec::new();
    let ifaces: Vec<&str> = e.matching("net_", "_rx_pkts_per_s").map(|x| x.0).collect();
    // One buffer for the names looked up (no string made per lookup per sample).
    let mut key = String::new();
    for iface in ifaces {
        let mut g = |k: &str| e.get(named(&mut key, "net_", iface, k));
        let pkts = g("_rx_pkts_per_s").unwrap_or(0.0) + g("_tx_pkts_per_s").unwrap_or(0.0);
        for (kind, rx_k, tx_k, frac, src) in [
            ("errs", "_rx_errs_per_s", "_tx_errs_per_s", 0.01, "1 % of packets (node-mixin)"),
            ("drops", "_rx_drops_per_s", "_tx_drops_per_s", 0.02, "2 % of packets (netdata)"),
        ] {
            let (rx, tx) = (g(rx_k), g(tx_k));
            if rx.is_none() && tx.is_none() {
                continue;
            }
            seen = true;
            let n = rx.unwrap_or(0.0) + tx.unwrap_or(0.0);
            let th = frac * pkts;
            if n > 0.0 && (n > th || (kind == "drops" && n >= th)) {
                for (dir, v) in [("rx", rx), ("tx", tx)] {
                    if v.is_some_and(|v| v > 0.0) {
                        out.push(c(format!("net_{iface}_{dir}_{kind}_per_s"), Op::Gt, th, src));
                    }
                }
            }
        }
    }
    if let Some(v) = e.get("tcp_listen_overflows_per_s") {
        seen = true;
        if v > 0.0 {
            out.push(c("tcp_listen_overflows_per_s", Op::Gt, 0.0, "pmie, node_exporter"));
        }
    }
    if let (Some(r), Some(s)) = (e.get("tcp_retrans_per_s"), e.get("tcp_out_segs_per_s")) {
        seen = true;
        if s > 0.0 && r > 0.01 * s {
            out.push(c("tcp_retrans_per_s", Op::Gt, 0.01 * s, "1 % of out segments (p)"));
        }
    }
    seen.then_some(out)
}

/// R11: steal ≥ 10 %, or CPU used by processes other than target and load generator > 10 % of
/// the machine (p): cpu_busy_pct − (target + loadgen %CPU) / ncpu.
fn r11_noisy_host(e: &Env) -> Option<Vec<Culprit>> {
    let steal = e.get("cpu_steal_pct");
    let other = match (e.get("cpu_busy_pct"), e.get("proc_target_cpu_pct"), e.get("proc_loadgen_cpu_pct")) {
        (Some(b), Some(t), Some(l)) => Some(b - (t + l) / e.ncpu),
        _ => None,
    };
    if steal.is_none() && other.is_none() {
        return None;
    }
    let mut out = Vec::new();
    if steal.is_some_and(|s| s >= 10.0) {
        out.push(c("cpu_steal_pct", Op::Ge, 10.0, "netdata 10 %"));
    }
    if let (Some(o), Some(b)) = (other, e.get("cpu_busy_pct")) {
        if o > 10.0 {
            out.push(c(
                "cpu_busy_pct",
                Op::Gt,
                b - o + 10.0,
                "target + load generator + 10 % of the machine (p)",
            ));
        }
    }
    Some(out)
}

/// R12: the load generator's %CPU ≥ 90 % of its cores (p). Cores: the context's
/// `loadgen_cores`, else min(ncpu, proc_loadgen_threads), else ncpu.
fn r12_loadgen(e: &Env) -> Option<Vec<Culprit>> {
    let cpu = e.get("proc_loadgen_cpu_pct")?;
    let cores = e
        .ctx
        .loadgen_cores
        .filter(|c| *c > 0.0)
        .unwrap_or_else(|| e.get("proc_loadgen_threads").map_or(e.ncpu, |t| t.max(1.0).min(e.ncpu)));
    let th = 90.0 * cores;
    Some(when(
        cpu >= th,
        vec![c("proc_loadgen_cpu_pct", Op::Ge, th, "90 % of its cores (p)")],
    ))
}
