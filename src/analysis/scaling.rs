//! Scaling along a swept parameter (e.g. concurrency): speedup and parallel efficiency against
//! the smallest point, and the knee.
//!
//! - The throughput swept is the workload's declared primary throughput ([`throughput_metric`]):
//!   `requests_per_s` for http, `read_iops` for fio, `received_mbitps` for iperf3,
//!   `transactions_per_s` for sysbench OLTP, ...
//! - speedup(x) = throughput(x) / throughput(x0), efficiency(x) = speedup / (x / x0), where x0 is
//!   the smallest swept value (None when x0 or throughput(x0) is not positive).
//! - The knee is the first point after which throughput gains less than 5 % while latency grows:
//!   for consecutive points i, i+1 (sorted by x), gain = T(i+1)/T(i) − 1 < 5 % and
//!   latency(i+1) > latency(i). When a latency is unknown, the throughput plateau alone counts.
//! - What saturated there: system load-phase means at the knee and the next point (the higher of
//!   the two) judged by the bottleneck rules' own saturation signals
//!   ([`crate::analysis::bottleneck::knee`]: CPU busy ≥ 90 %, one CPU ≥ 90 %, memory used > 90 %,
//!   disk %util ≥ 90, iowait ≥ 20 %, PSI some ≥ 10 %, steal ≥ 10 %, swap-out > 10 pages/s, load
//!   generator ≥ 90 % of its cores).

use super::bottleneck::{fmt_num, knee, Context};
use super::stats::Summary;
use crate::model::{Better, MetricKind};
use serde::{Deserialize, Serialize};

/// Throughput gains below this (percent) make a plateau.
pub const KNEE_GAIN_PCT: f64 = 5.0;

/// One point of the sweep.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ScalingPoint {
    /// The swept parameter's value.
    pub x: f64,
    /// Throughput over the point's repetitions (higher is better).
    pub throughput: Summary,
    /// A representative latency of the point (e.g. merged p50 or p99), any unit; None if unknown.
    pub latency: Option<f64>,
    /// Load-phase means of system metrics at this point (the monitor's names, e.g. `cpu_busy_pct`); may be empty.
    pub system: Vec<(String, f64)>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ScalingRow {
    pub x: f64,
    pub n: usize,
    pub throughput: f64,
    /// 95 % CI half-width of the throughput mean.
    pub ci95: Option<f64>,
    pub latency: Option<f64>,
    pub speedup: Option<f64>,
    pub efficiency: Option<f64>,
}

/// A resource that was saturated at the knee.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Saturation {
    pub metric: String,
    /// The higher of its values at the knee and at the next point.
    pub value: f64,
    pub threshold: f64,
    /// e.g. "cpu_busy_pct 97.3 ≥ 90 (R1 CPU saturated)".
    pub what: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Knee {
    /// The point after which gains stop.
    pub x: f64,
    pub next_x: f64,
    /// Throughput gain from x to next_x, percent.
    pub gain_pct: f64,
    /// Latency growth from x to next_x, percent; None if unknown.
    pub latency_growth_pct: Option<f64>,
    pub saturated: Vec<Saturation>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ScalingAnalysis {
    /// Sorted by x.
    pub rows: Vec<ScalingRow>,
    pub knee: Option<Knee>,
}

/// The metric a scaling section sweeps, as (name, unit), from the metrics the points have
/// (name, unit, better): the run's declared primary throughput (`meta.primary`) when a point has it;
/// otherwise (a run that declared none, or whose points lack it) `requests_per_s`, else the first
/// higher-is-better rate (`*_per_s`, IOPS, MiB/s, Mbit/s).
pub fn throughput_metric<'a, I>(declared: Option<&str>, metrics: I) -> Option<(String, String)>
where
    I: IntoIterator<Item = (&'a str, &'a str, Better)> + Clone,
{
    let find = |want: &dyn Fn(&str, &str, Better) -> bool| {
        metrics
            .clone()
            .into_iter()
            .find(|(n, u, b)| want(n, u, *b))
            .map(|(n, u, _)| (n.to_string(), u.to_string()))
    };
    declared
        .and_then(|d| find(&|n, _, _| n == d))
        .or_else(|| find(&|n, _, b| n == "requests_per_s" && b == Better::Higher))
        .or_else(|| find(&|n, u, b| b == Better::Higher && MetricKind::infer(n, u) == MetricKind::Rate))
}

/// Analyse one sweep (one variant). Points are sorted by x; `ncpu` sizes the load generator's
/// capacity (with `proc_loadgen_threads`, when known, capping it).
pub fn analyze(points: &[ScalingPoint], ncpu: u32) -> ScalingAnalysis {
    let mut pts: Vec<&ScalingPoint> = points.iter().collect();
    pts.sort_by(|a, b| a.x.total_cmp(&b.x));
    let base = pts.first().map(|p| (p.x, p.throughput.mean));
    let rows = pts
        .iter()
        .map(|p| {
            let (speedup, efficiency) = match base {
                Some((x0, t0)) if x0 > 0.0 && t0 > 0.0 => {
                    let s = p.throughput.mean / t0;
                    (Some(s), Some(s / (p.x / x0)))
                }
                _ => (None, None),
            };
            ScalingRow {
                x: p.x,
                n: p.throughput.n,
                throughput: p.throughput.mean,
                ci95: p.throughput.ci95,
                latency: p.latency,
                speedup,
                efficiency,
            }
        })
        .collect();
    let knee = pts.windows(2).find_map(|w| {
        let (a, b) = (w[0], w[1]);
        let (ta, tb) = (a.throughput.mean, b.throughput.mean);
        let gain_pct = if ta > 0.0 { 100.0 * (tb / ta - 1.0) } else { 0.0 };
        let growth = match (a.latency, b.latency) {
            (Some(la), Some(lb)) if la > 0.0 => Some(100.0 * (lb / la - 1.0)),
            (Some(la), Some(lb)) => Some(if lb > la { f64::INFINITY } else { 0.0 }),
            _ => None,
        };
        let grows = growth.is_none_or(|g| g > 0.0);
        (gain_pct < KNEE_GAIN_PCT && grows).then(|| Knee {
            x: a.x,
            next_x: b.x,
            gain_pct,
            latency_growth_pct: growth,
            saturated: saturated(&a.system, &b.system, ncpu),
        })
    });
    ScalingAnalysis { rows, knee }
}

fn get(sys: &[(String, f64)], k: &str) -> Option<f64> {
    sys.iter().find(|(n, _)| n == k).map(|(_, v)| *v)
}

/// The rules' saturation signals on the higher of each metric's values at the knee and the next
/// point.
fn saturated(at: &[(String, f64)], next: &[(String, f64)], ncpu: u32) -> Vec<Saturation> {
    let mut names: Vec<&str> = at.iter().chain(next).map(|(k, _)| k.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let higher: Vec<(String, f64)> = names
        .into_iter()
        .filter_map(|name| {
            let v = match (get(at, name), get(next, name)) {
                (Some(a), Some(b)) => a.max(b),
                (Some(v), None) | (None, Some(v)) => v,
                (None, None) => return None,
            };
            Some((name.to_string(), v))
        })
        .collect();
    knee::signals(&higher, &Context::of(ncpu.max(1)))
        .into_iter()
        .map(|s| Saturation {
            what: format!(
                "{} {} {} {} ({})",
                s.metric,
                fmt_num(s.value),
                sign(s.op),
                fmt_num(s.threshold),
                s.rule
            ),
            metric: s.metric,
            value: s.value,
            threshold: s.threshold,
        })
        .collect()
}

fn sign(op: &str) -> &str {
    match op {
        ">=" => "≥",
        "<=" => "≤",
        o => o,
    }
}

#[cfg(test)]
mod tests {
    use super::throughput_metric;
    use crate::model::Better;

    #[test]
    fn the_declared_throughput_wins_and_rates_are_the_fallback() {
        let fio = [
            ("job_read_iops", "IO/s", Better::Higher),
            ("read_clat_p99_us", "us", Better::Lower),
            ("read_iops", "IO/s", Better::Higher),
        ];
        let pick = |d: Option<&str>| throughput_metric(d, fio.iter().copied()).map(|(n, _)| n);
        assert_eq!(pick(Some("read_iops")).as_deref(), Some("read_iops"));
        assert_eq!(pick(None).as_deref(), Some("job_read_iops"), "the first rate without a declaration");
        assert_eq!(pick(Some("write_iops")).as_deref(), Some("job_read_iops"), "declared but absent");
        let http = [("latency_p99_ms", "ms", Better::Lower), ("requests_per_s", "req/s", Better::Higher)];
        assert_eq!(
            throughput_metric(None, http.iter().copied()),
            Some(("requests_per_s".into(), "req/s".into()))
        );
        assert_eq!(throughput_metric(None, http[..1].iter().copied()), None);
    }
}
