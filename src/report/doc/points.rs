//! The sections per matrix point: its metrics across repetitions, its latency percentiles and its
//! system table.

use super::table::{chart_blocks, num, opt, table, with_unit, Block, Section};
use crate::report::loaded::safe;
use crate::report::model::{MetricRow, ReportModel};

/// n, mean, median, sd, min, max, 95 % CI and CV of every metric at every point.
pub fn metrics(m: &ReportModel) -> Section {
    let pooled = m.runs.len() > 1;
    let mut rows = Vec::new();
    for p in &m.points {
        for r in &p.metrics {
            rows.push(metric_row(&p.label, r, pooled));
        }
    }
    let mut header = vec!["point", "metric", "n", "mean", "median", "sd (σ)", "min", "max", "95 % CI", "CV"];
    if pooled {
        header.push("between-run CV");
    }
    header.push("warnings");
    let intro = Block::Para(
        "Across repetitions: n, mean, median, sd (σ, sample), min, max, ± 95 % CI of the mean (Student t), CV. \
         ⚠ marks CV > 10 % (noisy) or n < 3 (too few to trust)."
            .into(),
    );
    Section::new("Metrics per point", vec![intro, table(&header, rows)])
}

fn metric_row(point: &str, r: &MetricRow, pooled: bool) -> Vec<String> {
    let s = &r.summary;
    let mut warn = Vec::new();
    if s.noisy {
        warn.push("⚠ CV > 10 %");
    }
    if s.small {
        warn.push("⚠ n < 3");
    }
    let mut row = vec![
        safe(point),
        with_unit(&r.name, &r.unit),
        s.n.to_string(),
        num(s.mean),
        num(s.median),
        num(s.sd),
        num(s.min),
        num(s.max),
        s.ci95.map_or("–".into(), |c| format!("± {}", num(c))),
        s.cv_pct.map_or("–".into(), |c| format!("{} %", num(c))),
    ];
    if pooled {
        row.push(r.between_run_cv_pct.map_or("–".into(), |c| format!("{} %", num(c))));
    }
    row.push(warn.join(" "));
    row
}

/// Percentiles of the merged histograms, with the spectrum charts.
pub fn latency(m: &ReportModel, charts: &[(String, String)]) -> Section {
    let mut rows = Vec::new();
    for p in &m.points {
        for l in &p.latency {
            let get = |name: &str| l.percentiles.iter().find(|(n, _)| n == name).map_or("–".into(), |(_, v)| num(*v));
            rows.push(vec![
                safe(&p.label),
                safe(&l.histogram),
                l.count.to_string(),
                get("p50"),
                get("p90"),
                get("p99"),
                get("p99.9"),
                num(l.max_ms),
                l.omitted.join("; "),
            ]);
        }
    }
    let mut blocks = vec![
        Block::Para(
            "From the histograms of all ok repetitions merged (never averaged), in ms. A percentile q needs at least \
             1/(1-q) values; unsupported ones are left out (–) with a note."
                .into(),
        ),
        table(
            &["point", "histogram", "n values", "p50", "p90", "p99", "p99.9", "max", "note"],
            rows,
        ),
    ];
    blocks.extend(chart_blocks(charts, "latency_spectrum"));
    Section::new("Latency percentiles", blocks)
}

/// Baseline / Under load / Peak / Recovery of the key system metrics, per point, with the trial
/// charts.
pub fn system(m: &ReportModel, charts: &[(String, String)]) -> Section {
    let mut blocks = vec![Block::Para(
        "Per point, over all its trials: Baseline = mean before load, Under load = mean during load, Peak = max \
         during load, Recovery = mean after load; recovery time = worst seconds after the load ended until the \
         metric was within 10 % of its baseline (– = never or not measured). In the trial charts the shading \
         marks the phases: blue baseline, yellow warmup, orange load, green recovery."
            .into(),
    )];
    for p in m.points.iter().filter(|p| !p.system.is_empty()) {
        blocks.push(Block::Para(format!(
            "Point {} (n = {} trials, {} failed):",
            safe(&p.label),
            p.trials,
            p.failed
        )));
        let rows = p
            .system
            .iter()
            .map(|r| {
                vec![
                    r.metric.clone(),
                    opt(r.baseline),
                    opt(r.under_load),
                    opt(r.peak),
                    opt(r.recovery),
                    r.recovery_s.map_or("–".into(), |s| format!("{} s", num(s))),
                ]
            })
            .collect();
        blocks.push(table(
            &["metric", "Baseline", "Under load", "Peak", "Recovery", "recovery time"],
            rows,
        ));
    }
    blocks.extend(chart_blocks(charts, "trial_"));
    Section::new("System", blocks)
}
