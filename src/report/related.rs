//! What the runs of a report have to show, said in its summary before any figure: a run that
//! holds no trial (or no trial that succeeded) has nothing to trust, and two runs compared
//! (`perflab compare`) must share something to compare.
//!
//! Two runs share a metric when both stored one by that name, and a point when both have trials
//! at the same parameters. Sharing no metric, or no point when the comparison found nothing
//! either, is refused (bad input, exit code 2, one line); otherwise what they do not share is a
//! warning in the summary (and so on the terminal): different workloads, metrics only one run
//! measured, no point in common.

use super::loaded::safe;
use super::model::ReportModel;
use crate::store::{Measured, Store};
use std::collections::BTreeMap;
use std::path::Path;

/// Say in the summary that a run holds no trial, or none that succeeded: there is no figure to
/// trust (in place of the summary's validity verdict).
pub fn caveats(model: &mut ReportModel) {
    for r in &model.runs {
        let w = if r.trials_ok + r.trials_failed == 0 {
            format!(
                "no trial finished in run {} (status {}, {} planned): nothing was measured, so there is no figure to trust",
                r.run, r.status, r.planned_trials
            )
        } else if r.trials_ok == 0 {
            format!(
                "no trial succeeded in run {} ({} failed): there is no figure to trust",
                r.run, r.trials_failed
            )
        } else {
            continue;
        };
        model.overview.warnings.push(safe(&w));
    }
}

/// Two runs as `perflab compare` sees them before comparing.
pub struct Related {
    /// The points both have trials at.
    shared_points: usize,
    /// "runs/a and runs/b share no point (...)", for the refusal when nothing was compared.
    no_point: Option<String>,
    warnings: Vec<String>,
}

/// Read what the runs `a` and `b` measured: refused when they share no metric (or one has no
/// trial); otherwise what `apply` warns about.
pub fn relate(a: &Path, b: &Path) -> anyhow::Result<Related> {
    let (sa, sb) = (Store::open(a)?, Store::open(b)?);
    let (ma, mb) = (sa.measured()?, sb.measured()?);
    let (plan_a, plan_b) = (sa.run()?.plan_name, sb.run()?.plan_name);
    let (na, nb) = (a.display().to_string(), b.display().to_string());
    for (dir, m) in [(&na, &ma), (&nb, &mb)] {
        if m.points.is_empty() {
            return Err(crate::error::usage(format!("{dir} holds no trial: nothing to compare")));
        }
    }
    let shared_metrics: Vec<&String> = ma.metrics.iter().filter(|m| mb.metrics.contains(m)).collect();
    if shared_metrics.is_empty() {
        return Err(crate::error::usage(safe(&format!(
            "{na} and {nb} share no metric ({na}: {} measured {}; {nb}: {} measured {}): nothing to compare",
            ma.workloads.join(", "),
            few(&ma.metrics),
            mb.workloads.join(", "),
            few(&mb.metrics)
        ))));
    }
    let (pa, pb) = (points(&ma), points(&mb));
    let shared_points = pa.keys().filter(|k| pb.contains_key(*k)).count();
    let mut warnings = Vec::new();
    let only: Vec<String> = ma
        .metrics
        .iter()
        .chain(&mb.metrics)
        .filter(|m| !shared_metrics.contains(m))
        .cloned()
        .collect();
    let shared: Vec<String> = shared_metrics.iter().map(|s| s.to_string()).collect();
    if ma.workloads != mb.workloads {
        warnings.push(format!(
            "{na} ({plan_a}) ran {} and {nb} ({plan_b}) ran {}: different workloads, of which only the {} metric(s) both measured are compared ({})",
            ma.workloads.join(", "),
            mb.workloads.join(", "),
            shared.len(),
            few(&shared)
        ));
    } else if !only.is_empty() {
        warnings.push(format!(
            "{} metric(s) measured by one of the runs only are not compared ({})",
            only.len(),
            few(&only)
        ));
    }
    let no_point = (shared_points == 0).then(|| {
        format!(
            "{na} and {nb} share no point ({na}: {}; {nb}: {})",
            few(&pa.values().cloned().collect::<Vec<_>>()),
            few(&pb.values().cloned().collect::<Vec<_>>())
        )
    });
    if let Some(n) = &no_point {
        warnings.push(format!("{n}: each comparison pairs points whose parameters differ"));
    }
    Ok(Related {
        shared_points,
        no_point,
        warnings: warnings.iter().map(|w| safe(w)).collect(),
    })
}

impl Related {
    /// Refuse a comparison that found nothing at no shared point; otherwise add the warnings to
    /// the summary.
    pub fn apply(self, model: &mut ReportModel) -> anyhow::Result<()> {
        if self.shared_points == 0 && model.comparisons.is_empty() {
            if let Some(n) = self.no_point {
                return Err(crate::error::usage(safe(&format!("{n}: nothing to compare"))));
            }
        }
        model.overview.warnings.extend(self.warnings);
        Ok(())
    }
}

/// The points of a run by their parameters (sorted, so the same parameters in another order are
/// the same point), each as `k=v k=v` (or `no parameters`).
fn points(m: &Measured) -> BTreeMap<String, String> {
    m.points
        .iter()
        .map(|p| {
            let map: BTreeMap<String, serde_json::Value> = serde_json::from_str(p).unwrap_or_default();
            let shown: Vec<String> = map
                .iter()
                .map(|(k, v)| match v {
                    serde_json::Value::String(s) => format!("{k}={s}"),
                    v => format!("{k}={v}"),
                })
                .collect();
            let key = serde_json::to_string(&map).unwrap_or_default();
            let shown = if shown.is_empty() {
                "no parameters".to_string()
            } else {
                shown.join(" ")
            };
            (key, shown)
        })
        .collect()
}

/// The first few items of a list, then how many more.
fn few(items: &[String]) -> String {
    const SHOWN: usize = 4;
    let mut out = items.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > SHOWN {
        out.push_str(&format!(" and {} more", items.len() - SHOWN));
    }
    out
}
