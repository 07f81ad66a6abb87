//! The report as a neutral document (sections of paragraphs, tables and charts) built from the
//! model; Markdown, HTML and the terminal render this one document, so they show the same figures.

use super::model::{ReportModel, Verdict};
use super::safe as redact;

/// Stable number formatting: 4 significant digits (no exponent), at most 3 decimals.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let a = v.abs();
    let decimals = if a >= 1000.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 10.0 {
        2
    } else {
        3
    };
    let s = format!("{v:.decimals$}");
    if s == "-0" || s.starts_with("-0.") && s.trim_start_matches("-0.").chars().all(|c| c == '0') {
        s.trim_start_matches('-').to_string()
    } else {
        s
    }
}

/// A parameter value (concurrency, cpus): whole numbers without decimals, others as `num`.
pub fn param(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        num(v)
    }
}

/// "name (unit)", or the bare name for a count without a unit.
fn with_unit(name: &str, unit: &str) -> String {
    if unit.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({})", redact(unit))
    }
}

pub fn opt(v: Option<f64>) -> String {
    v.map_or("–".into(), num)
}

pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

pub enum Block {
    Para(String),
    Table(Table),
    /// A chart file name under `charts/`.
    Chart(String),
}

pub struct Section {
    pub title: String,
    pub blocks: Vec<Block>,
}

fn t(header: &[&str], rows: Vec<Vec<String>>) -> Block {
    Block::Table(Table {
        header: header.iter().map(|s| s.to_string()).collect(),
        rows,
    })
}

/// Build the document. `charts` are the chart file names, in the order `charts::render` made them.
pub fn build(m: &ReportModel, charts: &[(String, String)]) -> Vec<Section> {
    let chart_blocks = |prefix: &str| -> Vec<Block> {
        charts
            .iter()
            .filter(|(name, _)| name.starts_with(prefix))
            .map(|(name, _)| Block::Chart(name.clone()))
            .collect()
    };
    let mut out = Vec::new();

    // Run facts.
    let rows = m
        .runs
        .iter()
        .map(|r| {
            vec![
                redact(&r.run),
                redact(&r.plan),
                redact(&r.host),
                redact(&r.kernel),
                r.ncpu.to_string(),
                num(r.mem_total_mb),
                r.seed.to_string(),
                redact(&r.status),
                format!("{} ok / {} failed (planned {})", r.trials_ok, r.trials_failed, r.planned_trials),
                r.limit_mechanism.as_deref().map_or("none".into(), redact),
                r.limit_proof.as_deref().map_or("–".into(), redact),
            ]
        })
        .collect();
    let mut blocks = vec![t(
        &[
            "run",
            "plan",
            "host",
            "kernel",
            "ncpu",
            "mem MB",
            "seed",
            "status",
            "trials",
            "limit",
            "limit proof",
        ],
        rows,
    )];
    if m.runs.len() > 1 {
        blocks.push(Block::Para(format!(
            "{} runs are pooled: n counts the repetitions of all runs; \"between-run CV\" is the CV of the per-run means.",
            m.runs.len()
        )));
    }
    for n in &m.notes {
        blocks.push(Block::Para(format!("Note: {}", redact(n))));
    }
    out.push(Section {
        title: "Run".into(),
        blocks,
    });

    // Metrics per point.
    let mut blocks = vec![Block::Para(
        "Across repetitions: n, mean, median, sd (σ, sample), min, max, ± 95 % CI of the mean (Student t), CV. \
         ⚠ marks CV > 10 % (noisy) or n < 3 (too few to trust)."
            .into(),
    )];
    let pooled = m.runs.len() > 1;
    let mut rows = Vec::new();
    for p in &m.points {
        for r in &p.metrics {
            let s = &r.summary;
            let mut warn = Vec::new();
            if s.noisy {
                warn.push("⚠ CV > 10 %");
            }
            if s.small {
                warn.push("⚠ n < 3");
            }
            let mut row = vec![
                redact(&p.label),
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
            rows.push(row);
        }
    }
    let mut header = vec!["point", "metric", "n", "mean", "median", "sd (σ)", "min", "max", "95 % CI", "CV"];
    if pooled {
        header.push("between-run CV");
    }
    header.push("warnings");
    blocks.push(t(&header, rows));
    out.push(Section {
        title: "Metrics per point".into(),
        blocks,
    });

    // Latency percentiles.
    let mut blocks = vec![Block::Para(
        "From the histograms of all ok repetitions merged (never averaged), in ms. A percentile q needs at least \
         1/(1-q) values; unsupported ones are left out (–) with a note."
            .into(),
    )];
    let mut rows = Vec::new();
    for p in &m.points {
        for l in &p.latency {
            let get = |name: &str| l.percentiles.iter().find(|(n, _)| n == name).map_or("–".into(), |(_, v)| num(*v));
            rows.push(vec![
                redact(&p.label),
                redact(&l.histogram),
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
    blocks.push(t(
        &["point", "histogram", "n values", "p50", "p90", "p99", "p99.9", "max", "note"],
        rows,
    ));
    blocks.extend(chart_blocks("latency_spectrum"));
    out.push(Section {
        title: "Latency percentiles".into(),
        blocks,
    });

    // System table.
    let mut blocks = vec![Block::Para(
        "Per point, over all its trials: Baseline = mean before load, Under load = mean during load, Peak = max \
         during load, Recovery = mean after load; recovery time = worst seconds after the load ended until the \
         metric was within 10 % of its baseline (– = never or not measured). In the trial charts the shading \
         marks the phases: blue baseline, yellow warmup, orange load, green recovery."
            .into(),
    )];
    for p in &m.points {
        if p.system.is_empty() {
            continue;
        }
        blocks.push(Block::Para(format!(
            "Point {} (n = {} trials, {} failed):",
            redact(&p.label),
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
        blocks.push(t(&["metric", "Baseline", "Under load", "Peak", "Recovery", "recovery time"], rows));
    }
    blocks.extend(chart_blocks("trial_"));
    out.push(Section {
        title: "System".into(),
        blocks,
    });

    // Scaling.
    if let Some(s) = &m.scaling {
        let mut blocks = vec![Block::Para(format!(
            "{} ({}) against {}; speedup and efficiency relative to the smallest {}; ± is the 95 % CI.",
            s.throughput_metric,
            redact(&s.unit),
            redact(&s.parameter),
            redact(&s.parameter)
        ))];
        let rows = s
            .rows
            .iter()
            .map(|r| {
                vec![
                    redact(&r.variant),
                    param(r.x),
                    r.n.to_string(),
                    num(r.throughput),
                    r.ci95.map_or("–".into(), |c| format!("± {}", num(c))),
                    opt(r.speedup),
                    r.efficiency.map_or("–".into(), |e| format!("{} %", num(100.0 * e))),
                    opt(r.p50_ms),
                    opt(r.p99_ms),
                ]
            })
            .collect();
        blocks.push(t(
            &[
                "variant",
                &redact(&s.parameter),
                "n",
                "throughput",
                "95 % CI",
                "speedup",
                "efficiency",
                "p50 ms",
                "p99 ms",
            ],
            rows,
        ));
        if s.knees.is_empty() {
            blocks.push(Block::Para("No knee: throughput kept growing by ≥ 5 % per step.".into()));
        }
        for (v, x) in &s.knees {
            let saturated = s
                .saturated_at_knee
                .iter()
                .find(|(sv, _)| sv == v)
                .map_or(String::new(), |(_, what)| format!(" Saturated there: {}.", what.join("; ")));
            blocks.push(Block::Para(format!(
                "Knee for {}: after {} = {} throughput grows < 5 % while latency rises.{}",
                redact(v),
                redact(&s.parameter),
                param(*x),
                redact(&saturated)
            )));
        }
        blocks.extend(chart_blocks("throughput"));
        blocks.extend(chart_blocks("latency_vs"));
        out.push(Section {
            title: "Scaling".into(),
            blocks,
        });
    }

    // Comparison.
    let mut blocks = Vec::new();
    if m.comparisons.is_empty() {
        blocks.push(Block::Para(
            "No variant parameter with two or more values: nothing to compare.".into(),
        ));
    } else {
        blocks.push(Block::Para(
            "Δ % = (b − a) / a of the means, with its 95 % CI (Welch); test: Welch's t, or Mann-Whitney U when \
             both sides have ≥ 5 values and Shapiro-Wilk rejects normality; α = 0.05. Direction-aware: a \
             significant change is called improved or regressed by the metric's better direction."
                .into(),
        ));
        let rows = m
            .comparisons
            .iter()
            .map(|c| {
                let verdict = match &c.verdict {
                    Verdict::Improved => "✅ improved".to_string(),
                    Verdict::Regressed => "❌ regressed".to_string(),
                    v => v.text(),
                };
                vec![
                    redact(&format!("{}: {} → {}", c.parameter, c.a, c.b)),
                    redact(&c.at),
                    with_unit(&c.metric, &c.unit),
                    format!("{} / {}", c.n_a, c.n_b),
                    num(c.mean_a),
                    num(c.mean_b),
                    c.delta_pct.map_or("–".into(), |d| format!("{:+.2} %", d)),
                    match (c.ci95_low_pct, c.ci95_high_pct) {
                        (Some(a), Some(b)) => format!("[{:+.2} %, {:+.2} %]", a, b),
                        _ => "–".into(),
                    },
                    c.test.clone(),
                    c.p.map_or("–".into(), |p| format!("{p:.4}")),
                    verdict,
                ]
            })
            .collect();
        blocks.push(t(
            &[
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
            ],
            rows,
        ));
    }
    out.push(Section {
        title: "Comparison of variants".into(),
        blocks,
    });

    // Findings.
    let mut blocks = Vec::new();
    if m.findings.is_empty() {
        blocks.push(Block::Para("No bottleneck rule fired.".into()));
    } else {
        let rows = m
            .findings
            .iter()
            .map(|f| {
                vec![
                    format!("{} {}", f.rule, redact(&f.title)),
                    f.resource.clone(),
                    f.kind.clone(),
                    f.severity.clone(),
                    redact(&f.points.join(", ")),
                    redact(&f.evidence),
                ]
            })
            .collect();
        blocks.push(t(&["finding", "resource", "kind", "severity", "points", "evidence"], rows));
    }
    blocks.push(Block::Para(format!(
        "A rule fires when its condition holds in ≥ 50 % of a point's load-phase samples; (p) marks a \
         threshold proposed here with no published anchor. Caveats: {} A saturated load generator \
         measures itself.",
        crate::analysis::bottleneck::CAVEATS.join(" ")
    )));
    out.push(Section {
        title: "Bottleneck findings".into(),
        blocks,
    });

    // Failed trials.
    let mut blocks = Vec::new();
    if m.failed.is_empty() {
        blocks.push(Block::Para("None.".into()));
    } else {
        let rows = m
            .failed
            .iter()
            .map(|f| vec![redact(&f.run), f.trial.to_string(), redact(&f.point), redact(&f.reason)])
            .collect();
        blocks.push(t(&["run", "trial", "point", "reason"], rows));
    }
    out.push(Section {
        title: "Failed trials".into(),
        blocks,
    });
    out
}
