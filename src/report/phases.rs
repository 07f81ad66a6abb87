//! The system table per point: Baseline / Under load / Peak / Recovery and recovery time.

use super::assemble::Loaded;
use super::model::PhaseRow;
use std::collections::BTreeMap;

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

pub(crate) fn phase_row(metric: &str, group: &[&Loaded]) -> PhaseRow {
    let mut by_phase: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut recovery_s: Option<f64> = None;
    let mut any_unrecovered = false;
    for l in group {
        let mut base = Vec::new();
        for s in &l.samples {
            if let Some((_, v)) = s.values.iter().find(|(k, _)| k == metric) {
                by_phase.entry(s.phase.as_str()).or_default().push(*v);
                if s.phase == "baseline" {
                    base.push(*v);
                }
            }
        }
        let load_end = l
            .trial
            .phases
            .iter()
            .filter(|p| p.0 == "load")
            .map(|p| p.2)
            .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
        if let (Some(b), Some(end)) = (mean(&base), load_end) {
            let back = l
                .samples
                .iter()
                .filter(|s| s.phase == "recovery")
                .filter_map(|s| {
                    s.values
                        .iter()
                        .find(|(k, _)| k == metric)
                        .map(|(_, v)| (s.t_s, *v))
                })
                .find(|(_, v)| (v - b).abs() <= 0.1 * b.abs().max(1e-9));
            match back {
                Some((t, _)) => {
                    let r = (t - end).max(0.0);
                    recovery_s = Some(recovery_s.map_or(r, |x| x.max(r)));
                }
                None => any_unrecovered = true,
            }
        }
    }
    let get = |p: &str| by_phase.get(p).cloned().unwrap_or_default();
    PhaseRow {
        metric: metric.to_string(),
        baseline: mean(&get("baseline")),
        under_load: mean(&get("load")),
        peak: get("load")
            .into_iter()
            .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b)))),
        recovery: mean(&get("recovery")),
        recovery_s: if any_unrecovered { None } else { recovery_s },
    }
}
