//! "An error class appears from some concurrency on" (rule E2), for workloads that count their
//! errors by class in `errors_<class>` metrics (the `oltp` workload: deadlock, duplicate_key,
//! too_many_connections, connection_lost, other): for each class, the lowest value of the swept
//! parameter at which it appears, and every point where it does, with the first message of the
//! class there.

use super::{Evidence, Finding, Kind, Severity};

/// One point: its label, its value of the swept parameter, and per metric `errors_<class>` (rates
/// `_per_s` excluded) the mean count per trial.
#[derive(Clone, Debug)]
pub struct ClassPoint {
    pub label: String,
    pub x: f64,
    pub counts: Vec<(String, f64)>,
    /// Per class, the first message its trials kept: (class, message).
    pub first: Vec<(String, String)>,
}

/// A trial's error entry as the oltp workload words it, `<class> (first: <message>)`, as (class,
/// message); None for another workload's entries.
pub fn first_example(entry: &str) -> Option<(String, String)> {
    let (class, rest) = entry.split_once(" (first: ")?;
    let message = rest.strip_suffix(')')?;
    (!class.is_empty() && !class.contains(' ')).then(|| (class.to_string(), message.to_string()))
}

/// The class of a per-class error metric: `errors_duplicate_key` → `duplicate_key`; None for the
/// total (`errors`), rates and other names.
pub fn class_of(metric: &str) -> Option<&str> {
    let class = metric.strip_prefix("errors_")?;
    (!class.is_empty() && !class.ends_with("_per_s")).then_some(class)
}

/// One finding per error class seen, in the order of the value where it first appears.
pub fn error_classes_by_parameter(parameter: &str, points: &[ClassPoint]) -> Vec<Finding> {
    let mut pts: Vec<&ClassPoint> = points.iter().filter(|p| p.x.is_finite()).collect();
    pts.sort_by(|a, b| a.x.total_cmp(&b.x));
    let mut classes: Vec<&str> = Vec::new();
    for p in &pts {
        for (c, n) in &p.counts {
            if *n > 0.0 && !classes.contains(&c.as_str()) {
                classes.push(c);
            }
        }
    }
    let count = |p: &ClassPoint, class: &str| p.counts.iter().find(|(c, _)| c == class).map_or(0.0, |(_, n)| *n);
    classes
        .into_iter()
        .filter_map(|class| {
            let first = pts.iter().find(|p| count(p, class) > 0.0)?;
            let lowest = pts.first().is_some_and(|p| p.x == first.x);
            let from = if lowest {
                format!("{parameter} = {} on (the lowest value run)", first.x)
            } else {
                format!("{parameter} = {} on", first.x)
            };
            let example = first
                .first
                .iter()
                .find(|(c, _)| c == class)
                .map_or(String::new(), |(_, m)| format!("; first: {m}"));
            Some(Finding {
                rule: super::RuleId::e(2),
                host: None,
                title: format!("{class} errors appear from {from}{example}"),
                resource: "database".into(),
                kind: Kind::Errors,
                severity: Severity::Critical,
                points: pts.iter().filter(|p| count(p, class) > 0.0).map(|p| p.label.clone()).collect(),
                hits: Vec::new(),
                evidence: pts
                    .iter()
                    .map(|p| Evidence {
                        point: p.label.clone(),
                        metric: format!("errors_{class} per trial"),
                        mean: count(p, class),
                        p95: count(p, class),
                        baseline: None,
                        op: ">".into(),
                        threshold: 0.0,
                        crossed: usize::from(count(p, class) > 0.0),
                        samples: 1,
                        source: format!("first seen at {parameter} = {}", first.x),
                    })
                    .collect(),
                caveats: Vec::new(),
                profile: Vec::new(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(x: f64, counts: &[(&str, f64)]) -> ClassPoint {
        ClassPoint {
            label: format!("threads={x}"),
            x,
            counts: counts.iter().map(|(c, n)| (c.to_string(), *n)).collect(),
            first: Vec::new(),
        }
    }

    #[test]
    fn each_class_is_named_at_the_value_where_it_first_appears() {
        let points = [
            pt(16.0, &[("duplicate_key", 3.0), ("deadlock", 1.0)]),
            pt(1.0, &[("duplicate_key", 0.0), ("deadlock", 0.0)]),
            pt(8.0, &[("duplicate_key", 0.0), ("deadlock", 2.0)]),
            pt(4.0, &[("duplicate_key", 0.0), ("deadlock", 0.0)]),
        ];
        let f = error_classes_by_parameter("threads", &points);
        let titles: Vec<&str> = f.iter().map(|f| f.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "deadlock errors appear from threads = 8 on",
                "duplicate_key errors appear from threads = 16 on"
            ]
        );
        assert_eq!(f[0].points, ["threads=8", "threads=16"]);
        assert_eq!(f[1].evidence.len(), 4);
        assert!(error_classes_by_parameter("threads", &[pt(1.0, &[("deadlock", 0.0)])]).is_empty());
        let low = error_classes_by_parameter("threads", &[pt(1.0, &[("other", 1.0)]), pt(2.0, &[])]);
        assert!(low[0].title.ends_with("(the lowest value run)"), "{}", low[0].title);
        assert_eq!(class_of("errors_duplicate_key"), Some("duplicate_key"));

        // The first message of the class, from the first point where it appears.
        let entry = "too_many_connections (first: sorry, too many clients already (SQLSTATE 53300))";
        let (class, message) = first_example(entry).expect("an oltp entry");
        assert_eq!(class, "too_many_connections");
        assert_eq!(message, "sorry, too many clients already (SQLSTATE 53300)");
        assert_eq!(first_example("status 503"), None);
        let mut at_24 = pt(24.0, &[("too_many_connections", 4.0)]);
        at_24.first.push((class, message));
        let f = error_classes_by_parameter("threads", &[pt(2.0, &[("too_many_connections", 0.0)]), at_24]);
        assert_eq!(
            f[0].title,
            "too_many_connections errors appear from threads = 24 on; first: sorry, too many clients already (SQLSTATE 53300)"
        );
        assert_eq!(class_of("errors_deadlock_per_s"), None);
        assert_eq!(class_of("errors"), None);
    }
}
