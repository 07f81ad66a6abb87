//! The latency probes' part of the report: per point and probe, the idle-vs-under-load table (n,
//! min, median, mean, p90, p99, max, sd and loss % per phase, all the point's trials pooled), the
//! inflation (load median / baseline median) with the 95 % CI of the difference of the means
//! (Welch), the probes' own traffic, the data of the two charts, and the P1 finding.

use super::loaded::{safe, Loaded};
use crate::analysis::bottleneck::{latency_under_load, Finding, ProbeMedians};
use crate::analysis::hypothesis::welch;
use crate::model::Phase;
use crate::probe::Stats;
use crate::store::ProbeRecord;
use serde::Serialize;

/// How many probes a chart's timeline keeps at most (the first trial's, in send order).
const MAX_TIMELINE: usize = 5_000;

/// One probe at one point.
#[derive(Clone, Debug, Serialize)]
pub struct ProbeReport {
    pub point: String,
    /// The probe's name (its metrics are `probe_<name>_...`).
    pub probe: String,
    pub kind: String,
    pub target: String,
    /// Trials pooled.
    pub trials: usize,
    pub phases: Vec<ProbePhase>,
    /// Load median / baseline median.
    pub inflation: Option<f64>,
    /// Load mean − baseline mean (ms) with its 95 % CI (Welch).
    pub diff_mean_ms: Option<f64>,
    pub diff_ci95_ms: Option<(f64, f64)>,
    /// The probe's own traffic over its trials: packets and bytes (out + in) per second.
    pub packets_per_s: f64,
    pub bytes_per_s: f64,
    /// The first trial's probes for the chart: (send time s since the trial started, round trip
    /// in ms or None for a loss).
    pub timeline: Vec<(f64, Option<f64>)>,
    /// The first trial's phases (name, start s, end s).
    pub timeline_phases: Vec<crate::model::PhaseSpan>,
    /// Every reply's round trip (ms) per phase, sorted, for the CDF chart.
    #[serde(skip)]
    pub rtts: Vec<(String, Vec<f64>)>,
}

/// One phase of one probe.
#[derive(Clone, Debug, Serialize)]
pub struct ProbePhase {
    pub phase: String,
    /// Probes sent.
    pub n: u64,
    /// The replies' round trips.
    pub rtt: Stats,
    /// Timeouts and errors, % of the probes sent.
    pub loss_pct: f64,
    /// Failed answers (a command's non-zero exit, HTTP >= 400), % of the probes sent.
    pub failed_pct: f64,
}

impl ProbeReport {
    pub fn phase(&self, name: &str) -> Option<&ProbePhase> {
        self.phases.iter().find(|p| p.phase == name)
    }
}

/// The probe reports, point by point in `order`, probes in plan order; `probes[i]` are the
/// probes of `loaded[i]`.
pub fn build(order: &[String], loaded: &[Loaded], probes: &[Vec<ProbeRecord>]) -> Vec<ProbeReport> {
    let mut out = Vec::new();
    for label in order {
        let trials: Vec<(&Loaded, &Vec<ProbeRecord>)> = loaded
            .iter()
            .zip(probes)
            .filter(|(l, p)| &l.point_label == label && !p.is_empty())
            .collect();
        let mut names: Vec<&str> = Vec::new();
        for (_, ps) in &trials {
            for p in ps.iter() {
                if !names.contains(&p.name.as_str()) {
                    names.push(&p.name);
                }
            }
        }
        for name in names {
            let recs: Vec<(&Loaded, &ProbeRecord)> = trials
                .iter()
                .filter_map(|(l, ps)| ps.iter().find(|p| p.name == name).map(|p| (*l, p)))
                .collect();
            out.push(one(label, name, &recs));
        }
    }
    out
}

fn one(label: &str, name: &str, recs: &[(&Loaded, &ProbeRecord)]) -> ProbeReport {
    let mut phases = Vec::new();
    let mut rtts = Vec::new();
    for phase in Phase::MEASURED.map(Phase::name) {
        let rows = || recs.iter().flat_map(|(_, p)| p.samples.iter()).filter(|s| s.phase == phase);
        let n = rows().count() as u64;
        if n == 0 {
            continue;
        }
        let mut values: Vec<f64> = rows().filter(|s| s.outcome == "reply").filter_map(|s| s.rtt_ms).collect();
        let lost = rows().filter(|s| s.outcome == "timeout" || s.outcome == "error").count();
        let failed = rows().filter(|s| s.outcome == "failed").count();
        let rtt = Stats::of_ms(&mut values);
        rtts.push((phase.to_string(), values));
        phases.push(ProbePhase {
            phase: phase.to_string(),
            n,
            rtt,
            loss_pct: 100.0 * lost as f64 / n as f64,
            failed_pct: 100.0 * failed as f64 / n as f64,
        });
    }
    let median = |p: &str| phases.iter().find(|x| x.phase == p).and_then(|x| x.rtt.median_ms);
    let inflation = match (median(Phase::Baseline.name()), median(Phase::Load.name())) {
        (Some(b), Some(l)) if b > 0.0 => Some(l / b),
        _ => None,
    };
    let values = |p: &str| rtts.iter().find(|(x, _)| x == p).map(|(_, v)| v.as_slice()).unwrap_or(&[]);
    let w = welch(values(Phase::Baseline.name()), values(Phase::Load.name()));
    let (packets, bytes, span) = recs.iter().fold((0u64, 0u64, 0.0f64), |(p, b, s), (_, r)| {
        let span = match (r.samples.first(), r.samples.last()) {
            (Some(a), Some(z)) => z.t_s - a.t_s + r.interval_s,
            _ => 0.0,
        };
        (
            p + r.samples.iter().map(|x| x.packets).sum::<u64>(),
            b + r.samples.iter().map(|x| x.bytes).sum::<u64>(),
            s + span,
        )
    });
    let per_s = |v: u64| if span > 0.0 { v as f64 / span } else { 0.0 };
    let (first, rec) = recs[0];
    ProbeReport {
        point: label.to_string(),
        probe: name.to_string(),
        kind: rec.kind.clone(),
        target: safe(&rec.target),
        trials: recs.len(),
        phases,
        inflation,
        diff_mean_ms: w.as_ref().map(|w| w.diff),
        diff_ci95_ms: w.as_ref().map(|w| (w.ci95_low, w.ci95_high)),
        packets_per_s: per_s(packets),
        bytes_per_s: per_s(bytes),
        timeline: rec
            .samples
            .iter()
            .take(MAX_TIMELINE)
            .map(|s| (s.t_s, s.rtt_ms.filter(|_| s.outcome == "reply")))
            .collect(),
        timeline_phases: first.trial.phases.clone(),
        rtts,
    }
}

/// P1 for every probe, over the points it ran at.
pub fn findings(reports: &[ProbeReport]) -> Vec<Finding> {
    let medians: Vec<ProbeMedians> = reports
        .iter()
        .filter_map(|r| {
            let (b, l) = (r.phase(Phase::Baseline.name())?, r.phase(Phase::Load.name())?);
            Some(ProbeMedians {
                point: r.point.clone(),
                probe: r.probe.clone(),
                baseline_ms: b.rtt.median_ms?,
                load_ms: l.rtt.median_ms?,
                baseline_n: b.rtt.count as usize,
                load_n: l.rtt.count as usize,
            })
        })
        .collect();
    let mut names: Vec<&str> = Vec::new();
    for r in reports {
        if !names.contains(&r.probe.as_str()) {
            names.push(&r.probe);
        }
    }
    names.into_iter().filter_map(|n| latency_under_load(n, &medians)).collect()
}
