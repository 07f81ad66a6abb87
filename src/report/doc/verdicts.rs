//! The sections that judge the matrix: scaling along the swept parameter, the comparison of
//! variants and the bottleneck findings.

use super::table::{chart_blocks, num, num_ci, opt, param, pct_ci, table, with_unit, Block, CiCells, Section};
use crate::analysis::bottleneck::{self, CAVEATS};
use crate::report::loaded::safe;
use crate::report::model::{Comparison, ReportModel, Scaling};

/// Throughput, speedup, efficiency and latency against the swept parameter, the knees, and the
/// charts; None without a swept parameter and a throughput metric.
pub fn scaling(m: &ReportModel, charts: &[(String, String)]) -> Option<Section> {
    let Some(s) = m.scaling.as_ref() else {
        // A text x parameter (no scaling to compute): its bar charts alone.
        let blocks = sweep_chart_blocks(charts);
        return (!blocks.is_empty()).then(|| Section::new("Figures", blocks));
    };
    let parameter = safe(&s.parameter);
    let mut cis = CiCells::new();
    let rows = s
        .rows
        .iter()
        .map(|r| {
            vec![
                safe(&r.variant),
                param(r.row.x),
                r.row.n.to_string(),
                num_ci(r.row.throughput, r.row.ci95),
                cis.mean(r.row.throughput, r.row.ci95, r.row.n),
                opt(r.row.speedup),
                r.row.efficiency.map_or("–".into(), |e| format!("{} %", num(100.0 * e))),
                opt(r.row.latency),
                opt(r.p99_ms),
            ]
        })
        .collect();
    let header = [
        "variant",
        parameter.as_str(),
        "n",
        "throughput",
        "95 % CI",
        "speedup",
        "efficiency",
        "p50 ms",
        "p99 ms",
    ];
    let mut blocks = vec![
        Block::Para(format!(
            "{} ({}) against {parameter}; speedup and efficiency relative to the smallest {parameter}; ± is the 95 % CI.",
            s.throughput_metric,
            safe(&s.unit),
        )),
        table(&header, rows),
    ];
    blocks.extend(cis.note().map(Block::Para));
    blocks.extend(knees(s));
    blocks.extend(sweep_chart_blocks(charts));
    Some(Section::new("Scaling", blocks))
}

/// The summary's figures against x: throughput, the other `[report] metrics`, the latency.
fn sweep_chart_blocks(charts: &[(String, String)]) -> Vec<Block> {
    let mut blocks = chart_blocks(charts, "throughput");
    blocks.extend(chart_blocks(charts, "metric_"));
    blocks.extend(chart_blocks(charts, "latency_vs"));
    blocks
}

/// One paragraph per knee (what was saturated there), or one saying there is none.
fn knees(s: &Scaling) -> Vec<Block> {
    let flat = s
        .why_flat
        .iter()
        .map(|(v, why)| Block::Para(safe(&format!("Flat along {} ({v}): {why}.", s.parameter))));
    if s.knees.is_empty() {
        if !s.why_flat.is_empty() {
            return flat.collect();
        }
        return vec![Block::Para("No knee: throughput kept growing by ≥ 5 % per step.".into())];
    }
    s.knees
        .iter()
        .map(|(v, x)| {
            let saturated = s
                .saturated_at_knee
                .iter()
                .find(|(sv, _)| sv == v)
                .map_or(String::new(), |(_, what)| format!(" Saturated there: {}.", what.join("; ")));
            Block::Para(format!(
                "Knee for {}: after {} = {} throughput grows < 5 % while latency rises.{}",
                safe(v),
                safe(&s.parameter),
                param(*x),
                safe(&saturated)
            ))
        })
        .chain(flat)
        .collect()
}

/// Each variant against the baseline value: Δ % with its CI, the test, p and the verdict.
pub fn comparison(m: &ReportModel) -> Section {
    if m.comparisons.is_empty() {
        let none = match &m.overview.compare {
            None => "The plan declares no comparison (no [variant.<value>] tables, no `variant` parameter, no [report] compare): nothing is compared; every parameter is a dimension of the tables.".to_string(),
            Some(c) => format!("{} has fewer than two values with ok trials at the same other parameters: nothing to compare.", safe(c)),
        };
        return Section::new("Comparison of variants", vec![Block::Para(none)]);
    }
    let header = [
        "variants a → b",
        "at",
        "metric",
        "n a / b",
        "mean a",
        "mean b",
        "Δ %",
        "95 % CI",
        "test",
        "p",
        "verdict",
    ];
    let intro = Block::Para(
        "Δ % = (b − a) / a of the means, with its 95 % CI (Welch); test: Welch's t, or Mann-Whitney U when \
         both sides have ≥ 5 values and Shapiro-Wilk rejects normality; α = 0.05. Direction-aware: a \
         significant change is called improved or regressed by the metric's better direction."
            .into(),
    );
    let mut cis = CiCells::new();
    let rows = m.comparisons.iter().map(|c| comparison_row(c, &mut cis)).collect();
    let mut blocks = vec![intro, table(&header, rows)];
    blocks.extend(cis.note().map(Block::Para));
    if m.comparisons.iter().any(|c| c.quantile.is_some()) {
        blocks.push(Block::Para(
            "† a percentile: a and b are the points' own percentiles of their merged histograms (every \
             repetition pooled) where the workload stored one, else the means of the per-trial figures; \
             the 95 % CI, the test and the verdict are those of the per-trial figures."
                .into(),
        ));
    }
    Section::new("Comparison of variants", blocks)
}

/// One row of the comparison table; the means and Δ % rounded to what the CI of Δ supports (its
/// half-width, in the metric's unit for the means: the CI of b − a).
fn comparison_row(c: &Comparison, cis: &mut CiCells) -> Vec<String> {
    let r = &c.result;
    let pct_half = r.ci95_low_pct.zip(r.ci95_high_pct).map(|(a, b)| (b - a).abs() / 2.0);
    let diff_ci = pct_half.map(|h| h / 100.0 * r.mean_a.abs());
    let verdict = r.verdict.text();
    vec![
        safe(&format!("{}: {} → {}", c.parameter, c.a, c.b)),
        safe(&c.at),
        match c.quantile {
            Some(_) => format!("{} †", with_unit(&c.metric, &c.unit)),
            None => with_unit(&c.metric, &c.unit),
        },
        format!("{} / {}", r.n_a, r.n_b),
        num_ci(r.mean_a, diff_ci),
        num_ci(r.mean_b, diff_ci),
        r.delta_pct.map_or("–".into(), |d| format!("{} %", pct_ci(d, pct_half))),
        cis.delta(r.ci95_low_pct.zip(r.ci95_high_pct), r.n_a.min(r.n_b)),
        r.test.name().to_string(),
        r.p.map_or("–".into(), |p| format!("{p:.4}")),
        verdict,
    ]
}

/// The bottleneck rules that fired, one line each (the evidence is in the appendix), and the
/// caveats.
pub fn findings(m: &ReportModel) -> Section {
    let mut blocks = Vec::new();
    if m.findings.is_empty() {
        blocks.push(Block::Para("No bottleneck rule fired.".into()));
    } else {
        blocks.extend(m.overview.finding_lines.iter().map(|l| Block::Para(safe(l))));
    }
    blocks.push(Block::Para(format!(
        "A rule fires when its condition holds in ≥ 50 % of a point's load-phase samples; (p) marks a \
         threshold proposed here with no published anchor; the per-point evidence is in the appendix. \
         Findings are ranked: errors and the target's own limits first, then the system under test's \
         resources, then the load generator and the host, then the load's own concurrency and headroom (D1, D3). Caveats: {} A saturated load generator \
         measures itself.",
        CAVEATS.join(" ")
    )));
    let blind: Vec<String> = bottleneck::docs::blind()
        .map(|(r, why)| format!("{} {}: {why}", r.id, r.title))
        .collect();
    blocks.push(Block::Para(safe(&format!("What this build cannot observe: {}.", blind.join("; ")))));
    Section::new("Bottleneck findings", blocks)
}

/// Each finding's evidence, a row per point and figure.
pub fn findings_evidence(m: &ReportModel) -> Option<Section> {
    if m.findings.is_empty() {
        return None;
    }
    let mut rows = Vec::new();
    for f in &m.findings {
        let name = format!("{} {}", f.rule, safe(&f.name()));
        for h in &f.hits {
            rows.push(vec![
                name.clone(),
                safe(&h.point),
                format!("held in {} of {} load samples", h.held, h.samples),
            ]);
        }
        for e in &f.evidence {
            rows.push(vec![name.clone(), safe(&e.point), safe(&e.text())]);
        }
        for q in &f.profile {
            let (point, said) = q.split_once(": ").unwrap_or(("", q));
            rows.push(vec![name.clone(), safe(point), safe(&format!("profile: {said}"))]);
        }
    }
    Some(Section::new(
        "Findings evidence",
        vec![table(&["finding", "point", "evidence"], rows)],
    ))
}

/// The latency charts (the spectrum of the merged histograms).
pub fn latency_charts(charts: &[(String, String)]) -> Option<Section> {
    let blocks = chart_blocks(charts, "latency_spectrum");
    (!blocks.is_empty()).then(|| Section::new("Latency", blocks))
}
