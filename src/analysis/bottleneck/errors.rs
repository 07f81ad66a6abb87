//! "Errors that appear above some concurrency": per-point errors per trial along the swept parameter.

use super::{Evidence, Finding, Kind, Severity};

/// Given (label, swept value, errors per trial) per point, a finding when errors appear from some
/// value on: the lowest erroring value has at least one error-free point below it; a value > 0
/// counts as erroring. The evidence quotes every point's value as "errors per trial", with
/// threshold 0 (`hits` stays empty: this rule reads no samples).
pub fn errors_by_parameter(parameter: &str, points: &[(String, f64, f64)]) -> Option<Finding> {
    let mut pts: Vec<&(String, f64, f64)> = points.iter().filter(|p| p.1.is_finite()).collect();
    pts.sort_by(|a, b| a.1.total_cmp(&b.1));
    let first = pts.iter().position(|p| p.2 > 0.0)?;
    if first == 0 {
        return None;
    }
    let from = pts[first].1;
    let erroring: Vec<&&(String, f64, f64)> = pts.iter().filter(|p| p.2 > 0.0).collect();
    Some(Finding {
        rule: super::RuleId::e(1),
        host: None,
        title: format!("errors appear from {parameter} = {from} on"),
        resource: "errors".into(),
        kind: Kind::Errors,
        severity: Severity::Critical,
        points: erroring.iter().map(|p| p.0.clone()).collect(),
        hits: Vec::new(),
        evidence: pts
            .iter()
            .map(|p| Evidence {
                point: p.0.clone(),
                metric: "errors per trial".into(),
                mean: p.2,
                p95: p.2,
                baseline: None,
                op: ">".into(),
                threshold: 0.0,
                crossed: usize::from(p.2 > 0.0),
                samples: 1,
                source: format!("error-free below {parameter} = {from}"),
            })
            .collect(),
        caveats: Vec::new(),
        profile: Vec::new(),
    })
}
