//! The diagnoses the USE rules miss (rules D1-D3, declared in `rules.rs`), read from the workload's
//! own figures at each point and from the findings the other rules made there:
//!
//! - D1, round-trip bound (Little's law): in a closed model, where no other rule fired, throughput
//!   × mean latency is the concurrency within [`LITTLE_TOLERANCE`]: the load's concurrency and the
//!   round trip set the throughput, not the server.
//! - D2, load generator too weak: in an open model the achieved rate is below
//!   [`RATE_SHORTFALL`] × the asked rate where no rule blames the system under test, or the load
//!   generator's CPU saturated (R12).
//! - D3, no bottleneck at this load: no rule fired, the point was sampled, and its mean latency is
//!   within [`FLAT_LATENCY`] × that of the lightest load of its variant along the swept parameter.

use super::{fmt_num, Culprit, Evidence, Finding, RuleId, Severity};

/// |throughput × mean latency ÷ concurrency − 1| at most this for D1.
pub const LITTLE_TOLERANCE: f64 = 0.10;
/// D2 fires when the achieved rate is below this share of the asked rate.
pub const RATE_SHORTFALL: f64 = 0.95;
/// D3: latency "flat" = at most this many times the lightest load's.
pub const FLAT_LATENCY: f64 = 1.25;

/// What the diagnoses read of one point (means over its ok repetitions).
#[derive(Clone, Debug, Default)]
pub struct PointFigures {
    pub label: String,
    /// The point's variant and fixed parameters (points compared along x share it).
    pub series: String,
    /// Its value of the swept parameter.
    pub x: Option<f64>,
    /// Whether its trials have monitor samples (D3 says nothing of a point nobody watched).
    pub sampled: bool,
    /// Operations per second and what one operation is ("request").
    pub throughput: Option<f64>,
    pub noun: String,
    pub mean_latency_ms: Option<f64>,
    /// The closed model's concurrency (connections, clients); None in an open model.
    pub concurrency: Option<f64>,
    /// The open model's asked rate (operations per second).
    pub asked_rate: Option<f64>,
    /// Time per operation before the server answered, where the workload knows it: ("connect",
    /// ms), ("TLS handshake", ms), ("first byte", ms).
    pub before_answer: Vec<(String, f64)>,
}

/// Whether a finding blames a resource of the system, its limits, its errors or the load
/// generator (a noisy host does not: the round trip still sets the throughput).
fn blocks(f: &Finding) -> bool {
    matches!(
        f.culprit(),
        Culprit::Errors | Culprit::TargetLimit | Culprit::System | Culprit::LoadGenerator
    )
}

/// Whether a finding made so far fired at the point.
fn fired_at(findings: &[Finding], label: &str, pred: impl Fn(&Finding) -> bool) -> bool {
    findings.iter().any(|f| pred(f) && f.points.iter().any(|p| p == label))
}

fn finding(id: RuleId, title: String, severity: Severity, points: Vec<String>, evidence: Vec<Evidence>) -> Finding {
    let rule = super::rule_of(id).expect("a declared rule");
    Finding {
        rule: id,
        host: None,
        title,
        resource: rule.resource.into(),
        kind: rule.kind,
        severity,
        points,
        hits: Vec::new(),
        evidence,
        caveats: Vec::new(),
        profile: Vec::new(),
    }
}

/// One figure quoted as it is (a single value, threshold `op` `threshold`).
fn said(point: &str, metric: String, value: f64, op: &str, threshold: f64, source: String) -> Evidence {
    Evidence {
        point: point.to_string(),
        metric,
        mean: value,
        p95: value,
        baseline: None,
        op: op.into(),
        threshold,
        crossed: 1,
        samples: 1,
        source,
    }
}

/// "10 / 30.2 ms ≈ 331 requests/s".
fn little(n: f64, r_ms: f64, noun: &str) -> String {
    format!("{} / {} ms ≈ {} {noun}s/s", fmt_num(n), fmt_num(r_ms), fmt_num(1000.0 * n / r_ms))
}

/// D1 over the points: one finding naming every point where it holds.
pub fn round_trip(points: &[PointFigures], findings: &[Finding]) -> Option<Finding> {
    let mut at = Vec::new();
    let mut evidence = Vec::new();
    for p in points {
        let (Some(x), Some(r), Some(n)) = (p.throughput, p.mean_latency_ms, p.concurrency) else {
            continue;
        };
        if p.asked_rate.is_some() || n <= 0.0 || r <= 0.0 || fired_at(findings, &p.label, blocks) {
            continue;
        }
        let in_flight = x * r / 1000.0;
        if (in_flight / n - 1.0).abs() > LITTLE_TOLERANCE {
            continue;
        }
        at.push(p);
        evidence.push(said(
            &p.label,
            format!(
                "{} {noun}s/s × {} ms mean latency = {noun}s in flight (concurrency {}):",
                fmt_num(x),
                fmt_num(r),
                fmt_num(n),
                noun = p.noun
            ),
            in_flight,
            "≈",
            n,
            format!("Little's law, within {:.0} % of the concurrency", LITTLE_TOLERANCE * 100.0),
        ));
        for (what, ms) in &p.before_answer {
            evidence.push(said(
                &p.label,
                format!("{what} {} ms per {}, % of the latency:", fmt_num(*ms), p.noun),
                100.0 * ms / r,
                "<=",
                100.0,
                "time before the server answered, as the workload measured it".into(),
            ));
        }
    }
    let first = at.first()?;
    let (n, r) = (first.concurrency.unwrap_or(0.0), first.mean_latency_ms.unwrap_or(0.0));
    let title = format!(
        "round-trip bound: the load's concurrency and round trip set the throughput, not the server ({}{}); \
         for more, raise the concurrency, use an open model (a rate) or put the client closer to the server",
        little(n, r, &first.noun),
        if at.len() > 1 { " at the first" } else { "" }
    );
    let labels = at.iter().map(|p| p.label.clone()).collect();
    Some(finding(RuleId::d(1), title, Severity::Warning, labels, evidence))
}

/// D2 over the points: the asked rate not achieved, or the load generator's CPU saturated (R12).
pub fn weak_generator(points: &[PointFigures], findings: &[Finding]) -> Option<Finding> {
    let system = |f: &Finding| matches!(f.culprit(), Culprit::System | Culprit::TargetLimit | Culprit::Errors);
    let mut labels = Vec::new();
    let mut evidence = Vec::new();
    for p in points {
        let short = match (p.asked_rate, p.throughput) {
            (Some(asked), Some(got)) if asked > 0.0 && got < RATE_SHORTFALL * asked && !fired_at(findings, &p.label, system) => {
                Some((asked, got))
            }
            _ => None,
        };
        let saturated = fired_at(findings, &p.label, |f| f.rule == RuleId::r(12));
        if short.is_none() && !saturated {
            continue;
        }
        labels.push(p.label.clone());
        if let Some((asked, got)) = short {
            evidence.push(said(
                &p.label,
                format!("{}s/s achieved, % of the {} asked:", p.noun, fmt_num(asked)),
                100.0 * got / asked,
                "<",
                RATE_SHORTFALL * 100.0,
                "the open model's asked rate (p)".into(),
            ));
        }
    }
    if labels.is_empty() {
        return None;
    }
    let title = "load generator too weak: it did not send the load asked, so the figures measure it, not the target; \
                 give it more cores or connections, or run it on another machine"
        .to_string();
    Some(finding(RuleId::d(2), title, Severity::Critical, labels, evidence))
}

/// D3 over the points: nothing fired and latency stayed flat against the lightest load.
pub fn headroom(points: &[PointFigures], findings: &[Finding]) -> Option<Finding> {
    let mut labels = Vec::new();
    let mut evidence = Vec::new();
    for p in points.iter().filter(|p| p.sampled) {
        if fired_at(findings, &p.label, |f| blocks(f) || f.culprit() == Culprit::Load) {
            continue;
        }
        let lightest = points
            .iter()
            .filter(|q| q.series == p.series && q.mean_latency_ms.is_some())
            .filter(|q| q.x.is_some() && p.x.is_some())
            .min_by(|a, b| a.x.unwrap_or(0.0).total_cmp(&b.x.unwrap_or(0.0)));
        match (p.mean_latency_ms, lightest.and_then(|q| q.mean_latency_ms.map(|r| (q, r)))) {
            (Some(r), Some((q, r0))) if q.label != p.label => {
                if r > FLAT_LATENCY * r0 {
                    continue;
                }
                evidence.push(said(
                    &p.label,
                    format!("mean latency (ms), against {} ms at {}:", fmt_num(r0), q.label),
                    r,
                    "<=",
                    FLAT_LATENCY * r0,
                    format!("{FLAT_LATENCY} × the lightest load's (p)"),
                ));
            }
            (Some(r), _) => evidence.push(said(
                &p.label,
                "mean latency (ms), no lighter load to compare with:".into(),
                r,
                "<=",
                r,
                "the lightest load run".into(),
            )),
            (None, _) => evidence.push(said(
                &p.label,
                "rules that fired here:".into(),
                0.0,
                "<=",
                0.0,
                "every rule's thresholds".into(),
            )),
        }
        labels.push(p.label.clone());
    }
    if labels.is_empty() {
        return None;
    }
    let title = "headroom: the system was not stressed (no resource near its thresholds, latency flat); raise the load".to_string();
    Some(finding(RuleId::d(3), title, Severity::Warning, labels, evidence))
}

/// The three diagnoses, in order: each sees the findings before it (D3 stays silent where D1 or
/// D2 said more).
pub fn diagnose(points: &[PointFigures], findings: &[Finding]) -> Vec<Finding> {
    let mut all: Vec<Finding> = findings.to_vec();
    let mut out = Vec::new();
    for rule in [round_trip, weak_generator, headroom] {
        if let Some(f) = rule(points, &all) {
            all.push(f.clone());
            out.push(f);
        }
    }
    out
}

pub fn d1_text() -> String {
    format!(
        "a closed model's point where no rule blaming errors, the target's limits, the system under test or the \
         load generator fired (R11 does not count) and throughput × mean latency is the concurrency within {:.0} % \
         (Little's law): the finding names concurrency / round trip and the time before the server answered \
         (connect, TLS, first byte) where the workload measures it",
        LITTLE_TOLERANCE * 100.0
    )
}

pub fn d2_text() -> String {
    format!(
        "an open model's point whose achieved rate is below {:.0} % of the asked rate where no rule blames errors, \
         the target's limits or the system under test, or where R12 fired; named in the answer table's cell; always \
         critical",
        RATE_SHORTFALL * 100.0
    )
}

pub fn d3_text() -> String {
    format!(
        "a sampled point where no rule blaming errors, the target's limits, the system under test or the load \
         generator fired, nor D1 (R11 does not count), and the mean latency is at most {FLAT_LATENCY} × that of the \
         lightest load of its variant along the swept parameter (at the lightest, or without a sweep: the rules alone)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(label: &str, x: f64, thr: f64, lat: f64, conc: Option<f64>, asked: Option<f64>) -> PointFigures {
        PointFigures {
            label: label.into(),
            series: "all".into(),
            x: Some(x),
            sampled: true,
            throughput: Some(thr),
            noun: "request".into(),
            mean_latency_ms: Some(lat),
            concurrency: conc,
            asked_rate: asked,
            before_answer: vec![("first byte".into(), lat * 0.9)],
        }
    }

    #[test]
    fn round_trip_bound_when_littles_law_holds_and_nothing_fired() {
        let p = [pt("c=10", 10.0, 330.0, 30.2, Some(10.0), None)];
        let f = round_trip(&p, &[]).expect("fires");
        assert!(f.title.contains("10 / 30.2 ms ≈ 331 requests/s"), "{}", f.title);
        assert_eq!(f.evidence.len(), 2);
        // An open model, a law that does not hold, or another finding at the point: silent.
        assert!(round_trip(&[pt("c=10", 10.0, 330.0, 30.2, Some(10.0), Some(400.0))], &[]).is_none());
        assert!(round_trip(&[pt("c=10", 10.0, 200.0, 30.2, Some(10.0), None)], &[]).is_none());
        let mut other = f.clone();
        other.rule = RuleId::r(1);
        assert!(round_trip(&p, &[other]).is_none());
    }

    #[test]
    fn weak_generator_on_a_shortfall_or_r12_and_headroom_otherwise() {
        let open = [pt("r=1000", 1000.0, 800.0, 1.0, None, Some(1000.0))];
        let f = weak_generator(&open, &[]).expect("80 % of the asked rate");
        assert_eq!(f.severity, Severity::Critical);
        assert!(weak_generator(&[pt("r=1000", 1000.0, 990.0, 1.0, None, Some(1000.0))], &[]).is_none());
        // An open model that got its rate, with latency flat against the lightest load: headroom.
        let pts = [
            pt("r=100", 100.0, 100.0, 1.0, None, Some(100.0)),
            pt("r=1000", 1000.0, 1000.0, 1.1, None, Some(1000.0)),
            pt("r=5000", 5000.0, 5000.0, 9.0, None, Some(5000.0)),
        ];
        let d = diagnose(&pts, &[]);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].rule, RuleId::d(3));
        assert_eq!(d[0].points, ["r=100", "r=1000"], "latency ×9 at r=5000 is not flat");
    }
}
