//! A few bottleneck rules over the phase tables, until `crate::analysis::bottleneck` lands. Each
//! finding quotes its evidence (the load-phase mean, the baseline and the threshold).

use super::model::{Finding, PointReport, RunFacts};

struct Rule {
    resource: &'static str,
    kind: &'static str,
    /// Does the metric name belong to this rule?
    matches: fn(&str) -> bool,
    /// Threshold on the load-phase mean (may depend on the cpu count).
    threshold: fn(u32) -> f64,
    source: &'static str,
}

const RULES: &[Rule] = &[
    Rule {
        resource: "CPU",
        kind: "utilization",
        matches: |m| m == "cpu_busy_pct",
        threshold: |_| 90.0,
        source: "USE method: busy >= 90 % under load",
    },
    Rule {
        resource: "CPU run queue",
        kind: "saturation",
        matches: |m| m == "procs_running",
        threshold: |ncpu| ncpu as f64 + 1.0,
        source: "more runnable tasks than cpus",
    },
    Rule {
        resource: "memory",
        kind: "utilization",
        matches: |m| m == "mem_used_pct",
        threshold: |_| 90.0,
        source: "used >= 90 % of RAM",
    },
    Rule {
        resource: "disk",
        kind: "utilization",
        matches: |m| m.starts_with("disk_") && m.ends_with("_util_pct"),
        threshold: |_| 90.0,
        source: "%util >= 90 (caveat: on virtio/NVMe %util is not capacity)",
    },
    Rule {
        resource: "load generator",
        kind: "utilization",
        matches: |m| m == "proc_loadgen_cpu_pct",
        threshold: |_| 90.0,
        source: "the load generator used >= 0.9 core: it may itself be the bottleneck",
    },
];

pub fn evaluate(points: &[PointReport], runs: &[RunFacts], swept: Option<&str>) -> Vec<Finding> {
    let ncpu = runs.iter().map(|r| r.ncpu).max().unwrap_or(1).max(1);
    let mut out = Vec::new();
    for rule in RULES {
        let mut hit_points = Vec::new();
        let mut evidence = Vec::new();
        for p in points {
            for row in p.system.iter().filter(|r| (rule.matches)(&r.metric)) {
                let th = (rule.threshold)(ncpu);
                if let Some(v) = row.under_load.filter(|v| *v >= th) {
                    hit_points.push(p.label.clone());
                    evidence.push(format!(
                        "{}: {} mean {:.1} under load (baseline {}, peak {}), threshold {:.1} ({})",
                        p.label,
                        row.metric,
                        v,
                        row.baseline.map_or("n/a".into(), |b| format!("{b:.1}")),
                        row.peak.map_or("n/a".into(), |b| format!("{b:.1}")),
                        th,
                        rule.source
                    ));
                }
            }
        }
        if !hit_points.is_empty() {
            hit_points.dedup();
            out.push(Finding {
                resource: rule.resource.into(),
                kind: rule.kind.into(),
                severity: if hit_points.len() == points.len() {
                    "high".into()
                } else {
                    "medium".into()
                },
                points: hit_points,
                evidence: evidence.join("; "),
            });
        }
    }
    // Errors that appear above some value of the swept parameter.
    if let Some(s) = swept {
        let with_errors: Vec<&PointReport> = points
            .iter()
            .filter(|p| p.errors.iter().any(|(_, n)| *n > 0))
            .collect();
        let clean = points.len() - with_errors.len();
        if !with_errors.is_empty() && clean > 0 {
            let first = with_errors
                .iter()
                .filter_map(|p| p.params.get(s).and_then(|v| v.as_f64()))
                .fold(f64::INFINITY, f64::min);
            out.push(Finding {
                resource: "errors".into(),
                kind: "errors".into(),
                severity: "high".into(),
                points: with_errors.iter().map(|p| p.label.clone()).collect(),
                evidence: format!(
                    "errors appear from {s} = {first} on ({} of {} points): {}",
                    with_errors.len(),
                    points.len(),
                    with_errors
                        .iter()
                        .map(|p| format!(
                            "{}: {}",
                            p.label,
                            p.errors
                                .iter()
                                .map(|(c, n)| format!("{c} x{n}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            });
        }
    }
    out
}
