//! A probe's figures as a trial's metrics, per phase: `probe_<name>_<stat>` under load (what a
//! threshold usually means: `probe_ssh_p99_ms < 50`), `probe_<name>_baseline_<stat>` and
//! `probe_<name>_recovery_<stat>` idle, before and after; the inflation (load median / baseline
//! median) and the probe's own traffic over the whole trial. docs/metrics.md lists them.

use super::summary::Summary;
use super::ProbeResult;
use crate::model::{Better, Metric, MetricKind, Phase};

/// The phases with figures, and the infix of their metric names (none for load).
pub const PHASES: [(Phase, &str); 3] = [(Phase::Baseline, "baseline_"), (Phase::Load, ""), (Phase::Recovery, "recovery_")];

/// The per-phase statistics, by name suffix.
pub const STATS: [&str; 11] = [
    "n",
    "min_ms",
    "p50_ms",
    "mean_ms",
    "p90_ms",
    "p99_ms",
    "max_ms",
    "sd_ms",
    "jitter_ms",
    "loss_pct",
    "failed_pct",
];

/// The figures over the whole trial.
pub const WHOLE: [&str; 3] = ["inflation", "packets_per_s", "bytes_per_s"];

/// The name a probe's metrics carry: its plan name, else its label with anything but letters,
/// digits and `_` made `_`.
pub fn metric_stem(r: &ProbeResult) -> String {
    spec_stem(&r.spec)
}

/// [`metric_stem`] of a probe before it ran.
pub fn spec_stem(spec: &super::ProbeSpec) -> String {
    let label = spec.name.clone().unwrap_or_else(|| spec.label());
    let clean: String = label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
        .collect();
    format!("probe_{clean}")
}

/// Whether `metric` is one of the figures of a probe named in `names` (for thresholds and an
/// adaptive `metric` checked before the run).
pub fn is_probe_metric(names: &[String], metric: &str) -> bool {
    names.iter().any(|n| {
        let Some(rest) = metric.strip_prefix(&format!("probe_{n}_")) else {
            return false;
        };
        WHOLE.contains(&rest)
            || PHASES
                .iter()
                .any(|(_, infix)| rest.strip_prefix(infix).is_some_and(|s| STATS.contains(&s)))
    })
}

/// Every metric name of a probe named `name` (for messages and docs).
pub fn metric_names(name: &str) -> Vec<String> {
    let mut out: Vec<String> = PHASES
        .iter()
        .flat_map(|(_, infix)| STATS.iter().map(move |s| format!("probe_{name}_{infix}{s}")))
        .collect();
    out.extend(WHOLE.iter().map(|w| format!("probe_{name}_{w}")));
    out
}

/// The metrics of one probe of one trial.
pub fn figures(r: &ProbeResult) -> Vec<Metric> {
    let stem = metric_stem(r);
    let mut out = Vec::new();
    let mut medians = [None, None];
    for (phase, infix) in PHASES {
        let tag = super::PhaseTag::new(phase.name());
        let s = r.summary_of(&tag);
        if s.n == 0 {
            continue;
        }
        match phase {
            Phase::Baseline => medians[0] = s.rtt.median_ms,
            Phase::Load => medians[1] = s.rtt.median_ms,
            _ => {}
        }
        phase_metrics(&format!("{stem}_{infix}"), &s, &mut out);
    }
    if let [Some(base), Some(load)] = medians {
        if base > 0.0 {
            out.push(Metric::new(format!("{stem}_inflation"), "x", load / base, Better::Lower).with_kind(MetricKind::Gauge));
        }
    }
    let all = r.summary();
    if all.n > 0 {
        out.push(Metric::new(format!("{stem}_packets_per_s"), "packets/s", all.packets_per_s, Better::Neither).with_kind(MetricKind::Rate));
        out.push(Metric::new(format!("{stem}_bytes_per_s"), "B/s", all.bytes_per_s, Better::Neither).with_kind(MetricKind::Rate));
    }
    out
}

fn phase_metrics(prefix: &str, s: &Summary, out: &mut Vec<Metric>) {
    let ms = |name: &str, v: Option<f64>, kind: MetricKind| {
        v.map(|v| Metric::new(format!("{prefix}{name}"), "ms", v, Better::Lower).with_kind(kind))
    };
    out.push(Metric::new(format!("{prefix}n"), "probes", s.n as f64, Better::Neither).with_kind(MetricKind::Count));
    out.extend(ms("min_ms", s.rtt.min_ms, MetricKind::Duration));
    out.extend(ms("p50_ms", s.rtt.median_ms, MetricKind::Quantile(0.5)));
    out.extend(ms("mean_ms", s.rtt.mean_ms, MetricKind::Duration));
    out.extend(ms("p90_ms", s.rtt.p90_ms, MetricKind::Quantile(0.9)));
    out.extend(ms("p99_ms", s.rtt.p99_ms, MetricKind::Quantile(0.99)));
    out.extend(ms("max_ms", s.rtt.max_ms, MetricKind::Quantile(1.0)));
    out.extend(ms("sd_ms", s.rtt.sd_ms, MetricKind::Gauge));
    out.extend(ms("jitter_ms", s.jitter_ms, MetricKind::Gauge));
    let pct =
        |name: &str, v: Option<f64>| v.map(|v| Metric::new(format!("{prefix}{name}"), "%", v, Better::Lower).with_kind(MetricKind::Gauge));
    out.extend(pct("loss_pct", s.loss_pct));
    out.extend(pct("failed_pct", s.failed_pct));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_metric_names_are_recognised_and_nothing_else() {
        let names = vec!["ssh".to_string(), "web1".to_string()];
        for m in metric_names("ssh").iter().chain(&metric_names("web1")) {
            assert!(is_probe_metric(&names, m), "{m}");
        }
        assert!(is_probe_metric(&names, "probe_ssh_p99_ms"));
        assert!(is_probe_metric(&names, "probe_ssh_baseline_p50_ms"));
        assert!(!is_probe_metric(&names, "probe_ssh_p98_ms"));
        assert!(!is_probe_metric(&names, "probe_web_p99_ms"));
        assert!(!is_probe_metric(&names, "latency_p99_ms"));
        assert!(!is_probe_metric(&names, "probe_ssh_warmup_p99_ms"));
    }
}
