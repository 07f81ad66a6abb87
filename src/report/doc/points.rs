//! The sections per matrix point: its metrics across repetitions and its latency percentiles (the
//! system tables are `system.rs`).

use super::table::{num, num_ci, sig2, table, with_unit, Block, CiCells, Section};
use crate::report::loaded::safe;
use crate::report::model::{MetricRow, ReportModel};

/// n, mean, median, sd, min, max, 95 % CI and CV of every metric at every point; the mean and
/// median rounded to what the CI supports, the CI shown only where it means something.
pub fn metrics(m: &ReportModel) -> Section {
    let pooled = m.runs.len() > 1;
    let mut cis = CiCells::new();
    let mut rows = Vec::new();
    for p in &m.points {
        for r in &p.metrics {
            rows.push(metric_row(&p.label, r, pooled, &mut cis));
        }
    }
    let mut header = vec!["point", "metric", "n", "mean", "median", "sd (σ)", "min", "max", "95 % CI", "CV"];
    if pooled {
        header.push("between-run CV");
    }
    header.push("warnings");
    let intro = Block::Para(
        "Across repetitions: n, mean, median, sd (σ, sample), min, max, ± 95 % CI of the mean (Student t), CV; \
         the mean and median rounded to what the CI supports (at least 2 significant digits). ⚠ marks CV > 10 % \
         (noisy) or n < 3 (too few to trust)."
            .into(),
    );
    let mut blocks = vec![intro, table(&header, rows)];
    blocks.extend(cis.note().map(Block::Para));
    Section::new("Metrics per point", blocks)
}

fn metric_row(point: &str, r: &MetricRow, pooled: bool, cis: &mut CiCells) -> Vec<String> {
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
        num_ci(s.mean, s.ci95),
        num_ci(s.median, s.ci95),
        sig2(s.sd),
        num(s.min),
        num(s.max),
        cis.mean(s.mean, s.ci95, s.n),
        s.cv_pct.map_or("–".into(), |c| format!("{} %", sig2(c))),
    ];
    if pooled {
        row.push(r.between_run_cv_pct.map_or("–".into(), |c| format!("{} %", sig2(c))));
    }
    row.push(warn.join(" "));
    row
}

/// One p99 per point: the percentiles of the merged histograms (with the spectrum charts), or,
/// where no histogram was stored, the median of the percentiles the tool printed per trial.
pub fn latency(m: &ReportModel, charts: &[(String, String)]) -> Section {
    let merged = m.points.iter().any(|p| !p.latency.is_empty());
    let printed = m.points.iter().any(|p| !p.printed_percentiles.is_empty());
    let mut blocks = Vec::new();
    if merged || !printed {
        blocks.extend(merged_table(m));
    }
    if printed {
        blocks.extend(printed_table(m));
    }
    let _ = charts;
    Section::new("Latency percentiles", blocks)
}

fn merged_table(m: &ReportModel) -> Vec<Block> {
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
    let mut instead: Vec<&str> = m.points.iter().flat_map(|p| p.merged_instead.iter().map(String::as_str)).collect();
    instead.sort_unstable();
    instead.dedup();
    if !instead.is_empty() {
        blocks.push(Block::Para(format!(
            "One figure per percentile and point: the per-trial {} (each read from one trial's histogram) are not \
             shown; the merged histogram above gives these percentiles over all repetitions.",
            safe(&instead.join(", "))
        )));
    }
    blocks
}

/// "p99" for 0.99, "p99.9" for 0.999, "max" for 1.
pub fn quantile_label(q: f64) -> String {
    if q >= 1.0 {
        return "max".into();
    }
    let pct = format!("{:.4}", 100.0 * q);
    format!("p{}", pct.trim_end_matches('0').trim_end_matches('.'))
}

fn printed_table(m: &ReportModel) -> Vec<Block> {
    let mut rows = Vec::new();
    for p in &m.points {
        for r in &p.printed_percentiles {
            let mut note = match r.n {
                1 => format!("1 trial's {}", quantile_label(r.quantile)),
                n => format!("median of {n} trials' {}", quantile_label(r.quantile)),
            };
            if r.n < 3 {
                note.push_str(" ⚠ n < 3");
            }
            rows.push(vec![
                safe(&p.label),
                with_unit(&r.name, &r.unit),
                r.n.to_string(),
                num(r.median),
                num(r.min),
                num(r.max),
                note,
            ]);
        }
    }
    vec![
        Block::Para(
            "Percentiles the tool printed (no histogram was stored, so there is nothing to merge): per point the \
             median of the per-trial values, never their mean, with the number of trials n and the smallest and \
             largest trial's value."
                .into(),
        ),
        table(&["point", "metric", "n trials", "median", "min", "max", "note"], rows),
    ]
}
