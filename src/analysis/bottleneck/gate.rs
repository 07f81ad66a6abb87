//! Which points need their samples read at all: a rule can fire at a point only if its condition
//! held in some load sample, and most conditions need some metric at or above a threshold, which
//! the per-phase summaries stored with each trial (the highest value under load, the mean and the
//! number of samples) can rule out without reading a sample. [`may_fire`] is false only when no
//! rule can hold in any load sample of the trial; the findings then need nothing of it.

use super::Context;
use crate::analysis::phases::PhaseStats;

/// Could any rule hold in some load sample of a trial with these summaries (sorted by metric, as
/// the store gives them)? False only when none can.
pub fn may_fire(summaries: &[PhaseStats], ctx: &Context) -> bool {
    let ncpu = ctx.ncpu.max(1) as f64;
    let get = |m: &str| {
        summaries
            .binary_search_by(|s| s.metric.as_str().cmp(m))
            .ok()
            .map(|i| &summaries[i])
            .filter(|s| s.n_load > 0)
    };
    // The highest load value reaches `th` (a missing peak, which a summary should not have, is
    // taken as reaching it).
    let reaches = |s: &PhaseStats, th: f64| !s.peak.is_some_and(|p| p < th);
    let exceeds = |s: &PhaseStats, th: f64| !s.peak.is_some_and(|p| p <= th);
    let peak_ge = |m: &str, th: f64| get(m).is_some_and(|s| reaches(s, th));
    let peak_gt = |m: &str, th: f64| get(m).is_some_and(|s| exceeds(s, th));
    let any = |f: &dyn Fn(&PhaseStats) -> bool| summaries.iter().filter(|s| s.n_load > 0).any(f);
    let r1 = peak_ge("cpu_busy_pct", 90.0);
    let r4 = peak_gt("cpu_busy_pct", 70.0);
    let r2 = peak_gt("procs_running", ncpu) || peak_gt("load_1", 2.0 * ncpu);
    let r3 = ncpu >= 2.0
        && (any(&|s| {
            s.metric
                .strip_prefix("cpu")
                .and_then(|m| m.strip_suffix("_busy_pct"))
                .is_some_and(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
                && reaches(s, 90.0)
        }) || peak_ge("proc_target_cpu_pct", 90.0));
    let r5 = any(&|s| s.metric.ends_with("throttled_pct") && exceeds(s, 10.0));
    let r6 = peak_ge("cpu_iowait_pct", 20.0) || peak_ge("psi_io_some_avg10_pct", 10.0);
    let r7 = peak_gt("swap_out_pages_per_s", 10.0)
        || peak_gt("major_faults_per_s", 500.0)
        || peak_gt("psi_mem_full_avg10_pct", 0.0)
        || available_may_fall(get("mem_available_mb"), get("mem_total_mb"));
    let r8 = peak_gt("oom_kills", 0.0) || peak_gt("oom_kills_per_s", 0.0);
    let r9 = ctx.line_rate_mbitps.filter(|r| *r > 0.0).is_some_and(|rate| {
        any(&|s| {
            s.metric.starts_with("net_") && (s.metric.ends_with("_rx_mbitps") || s.metric.ends_with("_tx_mbitps")) && reaches(s, 0.9 * rate)
        })
    });
    let r10 =
        any(&|s| s.metric.starts_with("net_") && ["_errs_per_s", "_drops_per_s"].iter().any(|k| s.metric.ends_with(k)) && exceeds(s, 0.0))
            || peak_gt("tcp_listen_overflows_per_s", 0.0)
            || peak_gt("tcp_retrans_per_s", 0.0);
    // Other CPU = busy − (target + load generator) / ncpu > 10 % needs busy above 10 % unless the
    // two processes' shares could be negative.
    let (target, loadgen) = (get("proc_target_cpu_pct"), get("proc_loadgen_cpu_pct"));
    let r11 = peak_ge("cpu_steal_pct", 10.0)
        || (target.is_some()
            && loadgen.is_some()
            && (peak_gt("cpu_busy_pct", 10.0) || may_be_negative(target) || may_be_negative(loadgen)));
    let cores = ctx.loadgen_cores.filter(|c| *c > 0.0).unwrap_or(1.0).min(1.0);
    let r12 = peak_ge("proc_loadgen_cpu_pct", 90.0 * cores);
    r1 || r2 || r3 || r4 || r5 || r6 || r7 || r8 || r9 || r10 || r11 || r12
}

/// The lowest of n values with mean m and highest h is at least n·m − (n−1)·h (less a margin for
/// the rounding of the stored mean).
fn lowest_bound(s: &PhaseStats) -> Option<f64> {
    let (mean, high) = (s.under_load?, s.peak?);
    let n = s.n_load as f64;
    Some(n * mean - (n - 1.0) * high - 1e-9 * n * high.abs().max(mean.abs()))
}

/// Could a load value of this metric be below zero?
fn may_be_negative(s: Option<&PhaseStats>) -> bool {
    s.is_some_and(|s| !lowest_bound(s).is_some_and(|l| l >= 0.0))
}

/// R7's `mem_available_mb < 10 % of mem_total_mb`: could it hold in some load sample?
fn available_may_fall(avail: Option<&PhaseStats>, total: Option<&PhaseStats>) -> bool {
    let (Some(a), Some(t)) = (avail, total) else {
        return false;
    };
    match (lowest_bound(a), t.peak) {
        (Some(lowest), Some(t_high)) => lowest.partial_cmp(&(0.1 * t_high)).is_none_or(|o| o.is_lt()),
        _ => true,
    }
}
