//! What can only be checked once the workloads are built and on this machine, before anything
//! starts (so `perflab run --dry-run` refuses it too), each at its place in the plan:
//!
//! - every threshold's metric, and an adaptive policy's `metric`, is one the point's workload can
//!   produce (with a did-you-mean hint); an adaptive policy without `metric` needs a primary figure;
//! - the target's program exists (on the target's PATH) and its `cwd` is a directory;
//! - this machine can apply the target's `cpu_quota` and `memory` limits.

use super::experiment::PreparedTrial;
use crate::plan::{Plan, Repetitions, ResolvedTarget};
use crate::workload::exec::preflight::{find_program, program_of};
use crate::workload::{Primary, Produces, Workload};
use std::collections::HashSet;

/// The targets of every point: program, working directory, limits.
pub fn targets(plan: &Plan) -> anyhow::Result<()> {
    let mut seen: Vec<&ResolvedTarget> = Vec::new();
    // A remote target's program, directory and limits are checked on its host, when it starts.
    for t in plan.points.iter().filter_map(|p| p.target.as_ref()).filter(|t| t.host.is_none()) {
        if seen.contains(&t) {
            continue;
        }
        seen.push(t);
        let at = |key: &str| plan.locate_key(&["target", key]);
        let usage = |key: &str, msg: String| located(&at(key), &format!("[target] {key}: {msg}"));
        if let Some(dir) = &t.cwd {
            if !dir.is_dir() {
                return Err(usage("cwd", format!("`{}` is not a directory", dir.display())));
            }
        }
        if let Some(prog) = program_of(&t.command) {
            let path = t.env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.as_str());
            // `perflab` is this very binary when none is on PATH (see `cli::use_this_perflab`).
            if prog != "perflab" && find_program(&prog, t.cwd.as_deref(), path).is_none() {
                let how = if prog.contains('/') {
                    "not found or not executable"
                } else {
                    "not found on PATH"
                };
                return Err(usage("command", format!("`{}` {how}", crate::util::text::clip(&prog))));
            }
        }
        if let Some((key, why)) = super::limits::unsupported(&t.limits) {
            return Err(usage(key, why));
        }
    }
    Ok(())
}

/// Thresholds and the adaptive metric against what each point's workload produces.
pub fn metrics(plan: &Plan, trials: &[PreparedTrial]) -> anyhow::Result<()> {
    let mut points = HashSet::new();
    // Points whose workloads produce the same names need one check.
    let mut seen: Vec<(String, Produces, Primary)> = Vec::new();
    for t in trials {
        if !points.insert(t.point) {
            continue;
        }
        let w = t.workload.as_ref();
        let kind = (w.name(), w.metrics(), w.primary());
        if seen.contains(&kind) {
            continue;
        }
        seen.push(kind);
        let label = &plan.points[t.point].label;
        for (i, th) in plan.thresholds.iter().enumerate() {
            if let Some(why) = unknown(w, &th.metric, label).filter(|_| !probe_metric(plan, &th.metric)) {
                return Err(located(
                    &plan.locate_threshold(i),
                    &format!("threshold \"{}\": {why}", crate::util::text::clip(&th.expr)),
                ));
            }
        }
        if let Repetitions::Adaptive { metric, .. } = &plan.repetitions {
            let at = || plan.locate_key(&["repetitions"]);
            match metric {
                Some(m) => {
                    if let Some(why) = unknown(w, m, label).filter(|_| !probe_metric(plan, m)) {
                        return Err(located(&at(), &format!("repetitions: metric: {why}")));
                    }
                }
                None => {
                    let p = w.primary();
                    if p.throughput.is_empty() && p.latency.is_empty() {
                        return Err(located(
                            &at(),
                            &format!(
                                "repetitions: the {} workload declares no primary figure to follow: give a `metric`",
                                w.name()
                            ),
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Whether `metric` is a figure of one of the plan's `[[probes]]` (`probe_<name>_p99_ms`).
fn probe_metric(plan: &Plan, metric: &str) -> bool {
    let names: Vec<String> = plan
        .points
        .first()
        .map(|p| p.probes.iter().filter_map(|s| s.name.clone()).collect())
        .unwrap_or_default();
    crate::probe::figures::is_probe_metric(&names, metric)
}

/// Every icmp probe can open its socket here (root, CAP_NET_RAW, or a group in
/// `net.ipv4.ping_group_range`), so a run never starts to find it cannot: refused with one line
/// naming the sysctl, at the probe's place in the plan. Other kinds are opened in each trial, once
/// its target runs.
pub fn probes(plan: &Plan) -> anyhow::Result<()> {
    let mut seen: Vec<&crate::probe::ProbeSpec> = Vec::new();
    for p in &plan.points {
        for (i, s) in p.probes.iter().enumerate() {
            if s.kind != crate::probe::Kind::Icmp || seen.contains(&s) {
                continue;
            }
            seen.push(s);
            if let Err(e) = crate::probe::ProbeSet::open(vec![s.clone()]) {
                let name = s.name.as_deref().unwrap_or("icmp");
                return Err(located(
                    &plan.locate_probe(i),
                    &format!("[[probes]] {name}: {}", crate::error::one_line(&e)),
                ));
            }
        }
    }
    Ok(())
}

/// A bad-input error at `at` (`file:line:col`), the message on one line with long values cut.
fn located(at: &str, msg: &str) -> anyhow::Error {
    crate::error::usage(format!("{at}: {}", crate::util::text::humanize(msg)))
}

/// Why `metric` cannot come out of `w`'s trials, or None when it can.
fn unknown(w: &dyn Workload, metric: &str, label: &str) -> Option<String> {
    let produces = w.metrics();
    if produces.includes(metric) {
        return None;
    }
    let hint = match produces.nearest(metric) {
        Some(n) => format!(" (did you mean `{n}`?)"),
        None => format!(" (it gives {})", produces.some(8)),
    };
    let at = if label.is_empty() { String::new() } else { format!(" at {label}") };
    Some(format!(
        "the {} workload{at} never produces `{}`{hint}",
        w.name(),
        crate::util::text::clip(metric)
    ))
}
