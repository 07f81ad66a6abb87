//! One trial's figures added up over its segments (`perflab merge`, and a plan's `[workload] from`
//! per trial): the histograms bucket by bucket (exact: the
//! percentiles of the union are read from the merged histogram, never averaged), the counts and
//! rates summed, the per-second series aligned on the load's common start and summed, the errors
//! summed per class. What cannot be added up exactly (a quantile with no histogram to merge, a
//! per-second quantile series) is left out and named, never guessed.

use crate::model::{Metric, MetricKind, NamedHistogram, Phase, SeriesPoint};
use crate::store::StoredTrial;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// One trial's figures, merged over its segments.
#[derive(Clone, Debug, Default)]
pub struct MergedFigures {
    pub metrics: Vec<Metric>,
    pub histograms: Vec<NamedHistogram>,
    pub series: Vec<SeriesPoint>,
    pub errors: Vec<(String, u64)>,
    /// The metrics and series some segment had that cannot be added up exactly: left out.
    pub left_out: Vec<String>,
}

/// How one metric of the segments is added up.
#[derive(Clone, Debug, PartialEq)]
enum Rule {
    /// Read from the merged histogram: a quantile (1 = the largest value), its mean or its
    /// standard deviation; the histogram holds µs, the metric's unit is `per` µs.
    Histogram {
        name: String,
        stat: Stat,
        per: f64,
    },
    /// Counts and rates of the segments' own slices.
    Sum,
    /// The same in every segment (the open model's `target_rate_per_s`: the whole load's rate).
    First,
    Max,
    Min,
    /// A level or a time per unit of work (`error_rate_pct`, `loadgen_cpu_us_per_req`): the
    /// segments' values weighted by the work each did.
    Weighted,
    /// A quantile without a histogram: no exact merge.
    LeftOut,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Stat {
    Quantile(f64),
    Mean,
    Sd,
}

/// µs per unit of a time metric.
fn per(unit: &str) -> Option<f64> {
    match unit {
        "ns" => Some(1e-3),
        "us" | "µs" => Some(1.0),
        "ms" => Some(1e3),
        "s" => Some(1e6),
        _ => None,
    }
}

fn rule(m: &Metric, histograms: &[&str]) -> Rule {
    // The longest histogram name the metric's name starts with (`stmt_point_select_p99_ms`).
    let hist = histograms
        .iter()
        .filter_map(|h| Some((*h, m.name.strip_prefix(h)?.strip_prefix('_')?)))
        .max_by_key(|(h, _)| h.len());
    if let (Some((h, rest)), Some(per)) = (hist, per(&m.unit)) {
        let stat = match m.kind {
            MetricKind::Quantile(q) => Some(Stat::Quantile(q)),
            _ if rest.starts_with("mean_") => Some(Stat::Mean),
            _ if rest.starts_with("sd_") || rest.starts_with("stdev_") => Some(Stat::Sd),
            _ => None,
        };
        if let Some(stat) = stat {
            return Rule::Histogram {
                name: h.to_string(),
                stat,
                per,
            };
        }
    }
    let n = m.name.as_str();
    match m.kind {
        MetricKind::Quantile(_) => Rule::LeftOut,
        MetricKind::Count => Rule::Sum,
        MetricKind::Rate if n.starts_with("target_") => Rule::First,
        // Work per CPU-second is an efficiency: each segment's, weighted by its work.
        MetricKind::Rate if m.unit.contains("CPU-s") || n.contains("per_cpu") => Rule::Weighted,
        MetricKind::Rate => Rule::Sum,
        _ if n.contains("max") || n.contains("busiest") || n.ends_with("time_s") => Rule::Max,
        _ if n.contains("_min") => Rule::Min,
        _ if m.unit.is_empty() => Rule::First,
        _ => Rule::Weighted,
    }
}

/// The work a segment's trial did, to weigh its levels by: its requests, transactions or
/// operations (a disk trial's reads and writes), a net trial's datagrams or bytes (with its errors for an error figure); None when it counted none of them.
fn work(t: &StoredTrial, metric: &str) -> Option<f64> {
    // net: a stream's bytes, udp's datagrams sent (its loss and jitter are per datagram).
    let done = ["requests", "transactions", "ops", "datagrams_sent", "bytes"]
        .iter()
        .find_map(|n| t.metric(n))
        .or_else(|| {
            // A disk trial counts its reads and writes apart.
            let (r, w) = (t.metric("read_ops"), t.metric("write_ops"));
            (r.is_some() || w.is_some()).then(|| r.unwrap_or(0.0) + w.unwrap_or(0.0))
        })?;
    let errors = if metric.contains("error") {
        t.metric("errors").unwrap_or(0.0)
    } else {
        0.0
    };
    Some(done + errors)
}

/// The statistic `stat` of `h`, in a unit of `per` µs; None for an empty histogram.
fn read(h: &Histogram<u64>, stat: Stat, per: f64) -> Option<f64> {
    if h.is_empty() {
        return None;
    }
    let us = match stat {
        Stat::Quantile(q) if q >= 1.0 => h.max() as f64,
        Stat::Quantile(q) => h.value_at_quantile(q) as f64,
        Stat::Mean => h.mean(),
        Stat::Sd => h.stdev(),
    };
    Some(us / per)
}

/// The segments' histograms added bucket by bucket, by name, in the first segment's order.
/// perflab's histograms share one range (1 µs to 1 h), so adding does not fail; a histogram that
/// would not add up (a value out of another's range) is left out whole, and named.
fn merge_histograms(parts: &[&StoredTrial], left_out: &mut Vec<String>) -> Vec<NamedHistogram> {
    let mut out: Vec<NamedHistogram> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    for h in parts.iter().flat_map(|t| &t.histograms) {
        match out.iter_mut().find(|m| m.name == h.name) {
            Some(m) => {
                if m.hist.add(&h.hist).is_err() && !failed.contains(&h.name) {
                    failed.push(h.name.clone());
                }
            }
            None => out.push(h.clone()),
        }
    }
    out.retain(|h| !failed.contains(&h.name));
    left_out.extend(
        failed
            .into_iter()
            .map(|n| format!("the histogram {n} (its segments' ranges differ)")),
    );
    out
}

/// One metric's merged value over the segments that have it.
fn merge_metric(first: &Metric, parts: &[&StoredTrial], rule: &Rule, hists: &[NamedHistogram]) -> Option<f64> {
    let values: Vec<(f64, &StoredTrial)> = parts.iter().filter_map(|t| Some((t.metric(&first.name)?, *t))).collect();
    let vals = || values.iter().map(|(v, _)| *v);
    match rule {
        Rule::Histogram { name, stat, per } => read(&hists.iter().find(|h| &h.name == name)?.hist, *stat, *per),
        Rule::Sum => Some(vals().sum()),
        Rule::First => vals().next(),
        Rule::Max => vals().reduce(f64::max),
        Rule::Min => vals().reduce(f64::min),
        Rule::Weighted => {
            let weights: Option<Vec<f64>> = values.iter().map(|(_, t)| work(t, &first.name)).collect();
            match weights.filter(|w| w.iter().sum::<f64>() > 0.0) {
                Some(w) => Some(vals().zip(&w).map(|(v, w)| v * w).sum::<f64>() / w.iter().sum::<f64>()),
                // One segment's level is the level; an unweighted mean of several is no exact
                // figure of the whole (left out, and named).
                None if values.len() == 1 => vals().next(),
                None => None,
            }
        }
        Rule::LeftOut => None,
    }
}

/// When a trial's load phase began, Unix seconds (its start when it has no load phase).
fn load_start(t: &StoredTrial) -> f64 {
    let load = t.phases.iter().find(|p| p.phase == Phase::Load);
    t.started_unix + load.map_or(0.0, |p| p.start_s)
}

/// The per-second series: each segment's points placed on the earliest load start (the common
/// T0, give or take each segment's lateness) and rounded to the series' second, then summed. Only
/// rates add up; a per-second quantile (`latency_p99_ms`) is left out.
fn merge_series(parts: &[&StoredTrial], left_out: &mut Vec<String>) -> Vec<SeriesPoint> {
    let origin = parts.iter().map(|t| load_start(t)).fold(f64::INFINITY, f64::min);
    let mut sums: BTreeMap<(String, i64), f64> = BTreeMap::new();
    let mut names: Vec<String> = Vec::new();
    for t in parts {
        let shift = load_start(t) - origin;
        for p in &t.series {
            if !names.contains(&p.name) {
                names.push(p.name.clone());
            }
            if MetricKind::infer(&p.name, "") == MetricKind::Rate {
                *sums.entry((p.name.clone(), (p.t_s + shift).round() as i64)).or_default() += p.value;
            }
        }
    }
    for n in names.iter().filter(|n| MetricKind::infer(n, "") != MetricKind::Rate) {
        left_out.push(format!("the per-second series {n}"));
    }
    let mut out: Vec<SeriesPoint> = sums
        .into_iter()
        .map(|((name, t), value)| SeriesPoint {
            t_s: t as f64,
            name,
            value,
        })
        .collect();
    out.sort_by_key(|p| names.iter().position(|n| *n == p.name));
    out
}

/// The figures of one numbered part of a segment's load (`stream3_gbit_per_s` of net,
/// `worker1_load_pct` of cpu) renamed to the number that part has in the whole load: stream `k`
/// of segment `i/N` is the whole load's stream `i + k N` (`Segment::global`), so that the merge
/// keeps each part apart instead of adding different streams that share a local number.
pub fn number_globally(t: &mut StoredTrial, segment: crate::model::Segment) {
    if segment.is_whole() {
        return;
    }
    let rename = |name: &mut String| {
        for prefix in ["stream", "worker"] {
            let Some(rest) = name.strip_prefix(prefix) else { continue };
            let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
            let (Ok(k), Some(tail)) = (rest[..digits].parse::<u64>(), rest[digits..].strip_prefix('_')) else {
                continue;
            };
            *name = format!("{prefix}{}_{tail}", segment.global(k));
            return;
        }
    };
    t.metrics.iter_mut().for_each(|m| rename(&mut m.name));
    t.series.iter_mut().for_each(|p| rename(&mut p.name));
}

/// One trial's figures added up over its segments' trials (`parts`, one per segment).
pub fn merge_trial(parts: &[&StoredTrial]) -> MergedFigures {
    let mut out = MergedFigures::default();
    let histograms = merge_histograms(parts, &mut out.left_out);
    let hist_names: Vec<&str> = histograms.iter().map(|h| h.name.as_str()).collect();
    let mut seen: Vec<&str> = Vec::new();
    for m in parts.iter().flat_map(|t| &t.metrics) {
        if seen.contains(&m.name.as_str()) {
            continue;
        }
        seen.push(&m.name);
        let r = rule(m, &hist_names);
        if r == Rule::LeftOut {
            out.left_out.push(m.name.clone());
            continue;
        }
        match merge_metric(m, parts, &r, &histograms).filter(|v| v.is_finite()) {
            Some(value) => out.metrics.push(Metric { value, ..m.clone() }),
            None => out.left_out.push(m.name.clone()),
        }
    }
    out.series = merge_series(parts, &mut out.left_out);
    let mut errors: Vec<(String, u64)> = Vec::new();
    for (class, n) in parts.iter().flat_map(|t| &t.errors) {
        match errors.iter_mut().find(|(c, _)| c == class) {
            Some((_, total)) => *total += n,
            None => errors.push((class.clone(), *n)),
        }
    }
    out.errors = errors;
    out.histograms = histograms;
    out
}

#[cfg(test)]
#[path = "merge_figures_tests.rs"]
mod tests;
