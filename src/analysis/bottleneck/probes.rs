//! P1, "responsiveness lost under load": a latency probe's median under load is at least
//! [`INFLATION_FACTOR`] times its baseline median, and at least [`MIN_INCREASE_MS`] more (so a
//! 30 µs loopback round trip that becomes 70 µs is not a bottleneck). docs/metrics.md states it.

use super::{Evidence, Finding, Hit, Kind, Severity};

/// Load median / baseline median at or above which P1 fires.
pub const INFLATION_FACTOR: f64 = 2.0;
/// The smallest increase of the median (ms) that counts.
pub const MIN_INCREASE_MS: f64 = 1.0;
/// P1 is critical from this inflation on.
pub const CRITICAL_FACTOR: f64 = 10.0;

/// One probe at one point: its name, its baseline and load medians (ms) and the replies behind them.
#[derive(Clone, Debug)]
pub struct ProbeMedians {
    pub point: String,
    pub probe: String,
    pub baseline_ms: f64,
    pub load_ms: f64,
    pub baseline_n: usize,
    pub load_n: usize,
}

/// P1 for one probe, over the points it was measured at: one finding naming every point where it
/// fired, quoting both medians of each.
pub fn latency_under_load(probe: &str, points: &[ProbeMedians]) -> Option<Finding> {
    let fired: Vec<&ProbeMedians> = points
        .iter()
        .filter(|p| p.probe == probe && p.baseline_ms > 0.0)
        .filter(|p| p.load_ms >= INFLATION_FACTOR * p.baseline_ms && p.load_ms - p.baseline_ms >= MIN_INCREASE_MS)
        .collect();
    if fired.is_empty() {
        return None;
    }
    let worst = fired.iter().map(|p| p.load_ms / p.baseline_ms).fold(0.0, f64::max);
    Some(Finding {
        rule: super::RuleId::p(1),
        host: None,
        title: format!(
            "probe {probe}: latency under load {} (median {} ms under load vs {} ms at baseline)",
            factor(worst),
            short(fired[0].load_ms),
            short(fired[0].baseline_ms)
        ),
        resource: "responsiveness".into(),
        kind: Kind::Saturation,
        severity: if worst >= CRITICAL_FACTOR {
            Severity::Critical
        } else {
            Severity::Warning
        },
        points: fired.iter().map(|p| p.point.clone()).collect(),
        hits: fired
            .iter()
            .map(|p| Hit {
                point: p.point.clone(),
                held: p.load_n,
                samples: p.load_n,
                figure: None,
            })
            .collect(),
        evidence: fired
            .iter()
            .map(|p| Evidence {
                point: p.point.clone(),
                metric: format!("probe_{probe}_p50_ms"),
                mean: p.load_ms,
                p95: p.load_ms,
                baseline: Some(p.baseline_ms),
                op: ">=".into(),
                threshold: INFLATION_FACTOR * p.baseline_ms,
                crossed: 1,
                samples: 1,
                source: format!(
                    "load median {} ms ≥ {INFLATION_FACTOR} × baseline median {} ms ({} and {} replies)",
                    short(p.load_ms),
                    short(p.baseline_ms),
                    p.load_n,
                    p.baseline_n
                ),
            })
            .collect(),
        caveats: Vec::new(),
        profile: Vec::new(),
    })
}

fn short(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn factor(x: f64) -> String {
    format!("×{x:.1}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(point: &str, base: f64, load: f64) -> ProbeMedians {
        ProbeMedians {
            point: point.into(),
            probe: "ssh".into(),
            baseline_ms: base,
            load_ms: load,
            baseline_n: 25,
            load_n: 50,
        }
    }

    #[test]
    fn fires_from_twice_the_baseline_median_quoting_both() {
        let f = latency_under_load("ssh", &[m("c=1", 5.0, 9.0), m("c=8", 5.0, 12.0)]).expect("fires at c=8");
        assert_eq!(f.rule, "P1");
        assert_eq!(f.points, ["c=8"]);
        assert!(f.title.contains("12.00 ms") && f.title.contains("5.00 ms"), "{}", f.title);
        assert_eq!(f.evidence[0].baseline, Some(5.0));
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(
            latency_under_load("ssh", &[m("c=80", 5.0, 60.0)]).unwrap().severity,
            Severity::Critical
        );
    }

    #[test]
    fn a_tiny_increase_or_no_baseline_does_not_fire() {
        // 0.03 → 0.09 ms is three times as long, but not 1 ms more.
        assert!(latency_under_load("ssh", &[m("a", 0.03, 0.09)]).is_none());
        assert!(latency_under_load("ssh", &[m("a", 0.0, 9.0)]).is_none());
        assert!(latency_under_load("ssh", &[m("a", 5.0, 9.9)]).is_none());
        assert!(latency_under_load("web", &[m("a", 5.0, 50.0)]).is_none());
    }
}
