//! Each point's per-second load, every repetition: the workload's own per-second series as the
//! store keeps them (`series` rows: throughput, and `latency_p50_ms`/`latency_p99_ms` where the
//! workload writes them), for the HTML report's per-second panels, which the live page's chart
//! functions draw (`assets/charts/charts.js`). Not in `report.json`.

use super::loaded::{safe, Loaded};
use super::model::{HostSeconds, PointReport, PointSeconds, TrialSeconds};
use crate::analysis::table::SampleTable;
use crate::model::{Phase, SeriesPoint};
use std::collections::BTreeMap;

/// The per-second latency series the panels draw on their right axis, as the workloads name them.
pub const P50: &str = "latency_p50_ms";
pub const P99: &str = "latency_p99_ms";

/// The per-second panels of at most `max` points (in point order), each point's ok trials with a
/// per-second series in repetition order, and this machine over the first of them (its samples,
/// read here: one trial a point); points without a series are left out.
pub fn build(
    groups: &[(String, Vec<&Loaded>)],
    points: &[PointReport],
    several_runs: bool,
    max: usize,
) -> anyhow::Result<Vec<PointSeconds>> {
    let mut out = Vec::new();
    for ((label, g), p) in groups.iter().zip(points) {
        if out.len() == max {
            break;
        }
        let mut ok: Vec<&Loaded> = g
            .iter()
            .copied()
            .filter(|l| l.trial.failure.is_none() && !l.trial.series.is_empty())
            .collect();
        ok.sort_by_key(|l| (l.run, l.trial.repetition, l.trial.id));
        let Some(first) = ok.first() else { continue };
        let Some(throughput) = throughput_of(&first.trial.series, p.headline.as_deref()) else {
            continue;
        };
        let trials: Vec<TrialSeconds> = ok
            .iter()
            .map(|l| {
                let name = if several_runs {
                    format!("run {} #{}", l.run + 1, l.trial.repetition)
                } else {
                    format!("#{}", l.trial.repetition)
                };
                of_trial(name, &l.trial.series, &throughput)
            })
            .collect();
        let load = load_start(&first.trial.phases);
        let host = if first.sampled() {
            host_of(&first.sample_table()?, load)
        } else {
            None
        };
        out.push(PointSeconds {
            label: safe(label),
            unit: safe(&throughput),
            phases: phases_from_load(&first.trial.phases),
            trials,
            host,
        });
    }
    Ok(out)
}

/// When a trial's load phase began, seconds since it started (0 without one).
fn load_start(spans: &[crate::model::PhaseSpan]) -> f64 {
    spans.iter().find(|p| p.phase == Phase::Load).map_or(0.0, |p| p.start_s)
}

/// The machine panel's figures of a trial's samples, over seconds since its load phase began
/// (`load`, since the trial started); None without CPU or memory figures.
fn host_of(table: &SampleTable, load: f64) -> Option<HostSeconds> {
    let column = |name: &str| {
        let c = table.col(name);
        (0..table.len()).map(|row| c.and_then(|c| table.value(row, c))).collect::<Vec<_>>()
    };
    let h = HostSeconds {
        t: (0..table.len()).map(|row| table.t_s(row) - load).collect(),
        cpu: column("cpu_busy_pct"),
        loadgen: column("proc_loadgen_cpu_pct"),
        target: column("proc_target_cpu_pct"),
        mem: column("mem_used_mb"),
    };
    let any = |v: &[Option<f64>]| v.iter().any(Option::is_some);
    (any(&h.cpu) || any(&h.mem)).then_some(h)
}

/// The series drawn as the throughput: the point's headline throughput where the trial has a
/// series of it, else its first series that is not a latency.
fn throughput_of(series: &[SeriesPoint], headline: Option<&str>) -> Option<String> {
    if let Some(h) = headline.filter(|h| series.iter().any(|p| p.name == *h)) {
        return Some(h.to_string());
    }
    series.iter().find(|p| !p.name.starts_with("latency_")).map(|p| p.name.clone())
}

/// One trial's seconds: every second any of its three series has, and each series' value there.
fn of_trial(name: String, series: &[SeriesPoint], throughput: &str) -> TrialSeconds {
    let mut at: BTreeMap<i64, [Option<f64>; 3]> = BTreeMap::new();
    for p in series {
        let k = match p.name.as_str() {
            n if n == throughput => 0,
            P50 => 1,
            P99 => 2,
            _ => continue,
        };
        // Milliseconds as the key: a second's t_s is whole, or a fraction for a workload's own clock.
        at.entry((p.t_s * 1000.0).round() as i64).or_default()[k] = Some(p.value);
    }
    let column = |k: usize| at.values().map(|v| v[k]).collect::<Vec<_>>();
    let has = |k: usize| at.values().any(|v| v[k].is_some());
    TrialSeconds {
        name,
        t: at.keys().map(|ms| *ms as f64 / 1000.0).collect(),
        per_s: column(0),
        p50: has(1).then(|| column(1)),
        p99: has(2).then(|| column(2)),
    }
}

/// A trial's phases on the per-second axis: seconds since its load phase began (the stored
/// series' `t_s`), as `[name, start, end]`.
fn phases_from_load(spans: &[crate::model::PhaseSpan]) -> Vec<(String, f64, f64)> {
    let load = load_start(spans);
    spans
        .iter()
        .map(|p| (p.name().to_string(), p.start_s - load, p.end_s - load))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PhaseSpan;

    fn pt(name: &str, t_s: f64, value: f64) -> SeriesPoint {
        SeriesPoint {
            t_s,
            name: name.into(),
            value,
        }
    }

    #[test]
    fn a_trials_seconds_line_up_by_second_with_nulls_where_a_series_has_none() {
        let s = [
            pt("requests_per_s", 0.0, 100.0),
            pt("requests_per_s", 1.0, 110.0),
            pt(P99, 1.0, 2.5),
            pt("requests_per_s", 2.0, 40.0),
            pt("other_per_s", 0.0, 9.0),
        ];
        assert_eq!(throughput_of(&s, Some("requests_per_s")).as_deref(), Some("requests_per_s"));
        assert_eq!(throughput_of(&s, Some("absent")).as_deref(), Some("requests_per_s"));
        let t = of_trial("#1".into(), &s, "requests_per_s");
        assert_eq!(t.t, vec![0.0, 1.0, 2.0]);
        assert_eq!(t.per_s, vec![Some(100.0), Some(110.0), Some(40.0)]);
        assert_eq!(t.p50, None, "no p50 series: none drawn");
        assert_eq!(t.p99, Some(vec![None, Some(2.5), None]));
        let phases = phases_from_load(&[PhaseSpan::new(Phase::Baseline, 0.0, 2.0), PhaseSpan::new(Phase::Load, 2.5, 5.5)]);
        assert_eq!(phases, vec![("baseline".to_string(), -2.5, -0.5), ("load".to_string(), 0.0, 3.0)]);
    }
}
