//! The Summary section the report opens with: what ran and whether to trust it, the answer table
//! (each variant's primary figures against x, with Δ % and the verdict per cell), the optimization
//! summary and the headline lines (knee, saturated resource, top findings).

use super::table::{delta_pct, num_ci, table, Block, CiCells, Section, MIN_CI_N};
use crate::report::loaded::safe;
use crate::report::model::{AnswerCell, Overview, ReportModel, Verdict};

/// The longest failure reason shown in the summary (the full one is under Failed trials).
const REASON_CHARS: usize = 160;

pub fn summary(m: &ReportModel) -> Section {
    let mut blocks = vec![Block::Para(what_ran(m))];
    for f in &m.failed {
        blocks.push(Block::Para(format!(
            "Failed: trial {} ({}): {}",
            f.trial,
            safe(&f.point),
            one_line(&f.reason, REASON_CHARS)
        )));
    }
    if m.overview.warnings.is_empty() {
        blocks.push(Block::Para(
            "Trust: no validity warning (idle host before the load, load generator not saturated, CV ≤ 10 %, ≥ 3 repetitions).".into(),
        ));
    }
    for w in &m.overview.warnings {
        blocks.push(Block::Para(format!("Warning: {}", safe(w))));
    }
    blocks.extend(answer(m));
    blocks.extend(optimization(m));
    for h in &m.overview.headline {
        blocks.push(Block::Para(safe(h)));
    }
    Section::new("Summary", blocks)
}

/// "Plan p on host h (n CPUs): t trials, a ok, b failed, in 2m10s."
fn what_ran(m: &ReportModel) -> String {
    let mut parts = Vec::new();
    for r in &m.runs {
        let secs = r.ended_unix.map(|e| (e - r.started_unix).max(0.0));
        parts.push(format!(
            "plan {} on {} ({} CPUs): {} trials, {} ok, {} failed{}",
            safe(&r.plan),
            safe(&r.host),
            r.ncpu,
            r.trials_ok + r.trials_failed,
            r.trials_ok,
            r.trials_failed,
            secs.map_or(String::new(), |s| format!(
                ", {}",
                crate::util::duration::format(std::time::Duration::from_secs_f64(s))
            ))
        ));
    }
    let mut o = format!("What ran: {}.", parts.join("; "));
    if let (Some(c), Some(b)) = (&m.overview.compare, &m.overview.baseline) {
        o.push_str(&format!(" Compared: each {} against {} = {}.", safe(c), safe(c), safe(b)));
    }
    o
}

/// The reason's first line, cut at `max` characters.
fn one_line(s: &str, max: usize) -> String {
    let line = safe(s.lines().next().unwrap_or(""));
    if line.chars().count() <= max {
        line
    } else {
        format!("{}…", line.chars().take(max).collect::<String>())
    }
}

/// The verdict's short text.
pub fn verdict_text(v: &Verdict) -> String {
    match v {
        Verdict::TooFewSamples { .. } => "too few samples".into(),
        v => v.text(),
    }
}

/// "1234 (+5.2 %, improved)", or the bare value for the baseline.
fn cell_text(c: &AnswerCell) -> String {
    let mut o = num_ci(c.value, c.ci95);
    match (&c.delta_pct, &c.verdict) {
        (Some(d), Some(v)) => o.push_str(&format!(" ({}, {})", delta_pct(*d, c.ci95_pct), verdict_text(v))),
        (Some(d), None) => o.push_str(&format!(" ({})", delta_pct(*d, c.ci95_pct))),
        _ => {}
    }
    o
}

/// One wide table: a row per metric, variant and other parameters, a column per x value.
fn answer(m: &ReportModel) -> Vec<Block> {
    let o = &m.overview;
    if o.answer.is_empty() {
        return vec![];
    }
    let mut xs: Vec<&str> = Vec::new();
    for c in &o.answer {
        if let Some(x) = c.x.as_deref() {
            if !xs.contains(&x) {
                xs.push(x);
            }
        }
    }
    xs.sort_by(|a, b| match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(a), Ok(b)) => a.total_cmp(&b),
        _ => a.cmp(b),
    });
    let mut rows: Vec<(String, String, String, Vec<String>)> = Vec::new();
    for c in &o.answer {
        let metric = if c.unit.is_empty() {
            c.metric.clone()
        } else {
            format!("{} ({})", c.metric, safe(&c.unit))
        };
        let i = match rows.iter().position(|r| r.0 == metric && r.1 == c.variant && r.2 == c.at) {
            Some(i) => i,
            None => {
                rows.push((metric, c.variant.clone(), c.at.clone(), vec!["–".into(); xs.len().max(1)]));
                rows.len() - 1
            }
        };
        let col = c.x.as_deref().and_then(|x| xs.iter().position(|v| *v == x)).unwrap_or(0);
        rows[i].3[col] = cell_text(c);
    }
    let any_at = rows.iter().any(|r| !r.2.is_empty());
    let variant_head = o.compare.clone().unwrap_or_else(|| "variant".into());
    let mut header: Vec<String> = vec!["metric".into(), safe(&variant_head)];
    if any_at {
        header.push("at".into());
    }
    match &o.x {
        Some(x) if !xs.is_empty() => header.extend(xs.iter().map(|v| format!("{} = {}", safe(x), v))),
        _ => header.push("value".into()),
    }
    let body = rows
        .into_iter()
        .map(|(metric, variant, at, cells)| {
            let mut r = vec![metric, variant];
            if any_at {
                r.push(at);
            }
            r.extend(cells);
            r
        })
        .collect();
    let head: Vec<&str> = header.iter().map(String::as_str).collect();
    let intro = match &o.baseline {
        Some(b) => format!(
            "The answer, against {} = {} at the same point: Δ % and the verdict of the per-trial figures (α = 0.05); \
             a percentile is the point's own (merged histogram, or the median of what a tool printed).",
            safe(o.compare.as_deref().unwrap_or("")),
            safe(b)
        ),
        None => "The answer: the primary figures at every point (throughput: mean over the repetitions; a percentile: \
                 the point's own, from the merged histogram or the median of what the tool printed)."
            .into(),
    };
    vec![Block::Para(intro), table(&head, body)]
}

/// Metric, before, after, Δ %, 95 % CI, verdict: the other variants against the baseline at the
/// largest x.
fn optimization(m: &ReportModel) -> Vec<Block> {
    let o = &m.overview;
    if o.optimization.is_empty() {
        return vec![];
    }
    let mut cis = CiCells::new();
    let rows = optimization_rows(m, &mut cis);
    let mut blocks = vec![
        Block::Para(format!(
            "Optimization summary: before = {} = {}, after = each other value{}.",
            safe(o.compare.as_deref().unwrap_or("")),
            safe(o.baseline.as_deref().unwrap_or("")),
            o.x.as_deref().map_or(String::new(), |x| format!(", at the largest {}", safe(x)))
        )),
        table(&OPTIMIZATION_HEADER, rows),
    ];
    blocks.extend(cis.note().map(Block::Para));
    blocks
}

/// The repetitions behind a cell's comparison, as far as its CI goes: fewer than 3 where the test
/// found too few samples.
fn repetitions(c: &AnswerCell) -> usize {
    match c.verdict {
        Some(Verdict::TooFewSamples { .. }) => 0,
        _ => MIN_CI_N,
    }
}

/// The optimization table's header.
pub const OPTIMIZATION_HEADER: [&str; 7] = ["metric", "variant", "before", "after", "Δ %", "95 % CI", "verdict"];

/// The baseline's 95 % CI half-width at an optimization cell's point (the answer cell of the
/// baseline variant with the same metric, other parameters and x).
fn baseline_ci(o: &Overview, c: &AnswerCell) -> Option<f64> {
    let base = o.baseline.as_deref()?;
    o.answer
        .iter()
        .find(|b| b.variant == base && b.metric == c.metric && b.at == c.at && b.x == c.x)
        .and_then(|b| b.ci95)
}

/// The optimization table's rows: metric, variant, before, after, Δ %, 95 % CI, verdict; the
/// before and after figures rounded to what their 95 % CIs support, the CI shown where it means
/// something (`cis` keeps why not).
pub fn optimization_rows(m: &ReportModel, cis: &mut CiCells) -> Vec<Vec<String>> {
    let o = &m.overview;
    o.optimization
        .iter()
        .map(|c| {
            let mut at = vec![format!("{} = {}", o.compare.as_deref().unwrap_or("variant"), c.variant)];
            if !c.at.is_empty() {
                at.push(c.at.clone());
            }
            if let (Some(x), Some(v)) = (&o.x, &c.x) {
                at.push(format!("{x}={v}"));
            }
            vec![
                if c.unit.is_empty() {
                    c.metric.clone()
                } else {
                    format!("{} ({})", c.metric, safe(&c.unit))
                },
                safe(&at.join(" ")),
                c.before.map_or("–".into(), |b| num_ci(b, baseline_ci(o, c))),
                num_ci(c.value, c.ci95),
                c.delta_pct.map_or("–".into(), |d| delta_pct(d, c.ci95_pct)),
                cis.delta(c.ci95_pct, repetitions(c)),
                c.verdict.as_ref().map_or("–".into(), verdict_text),
            ]
        })
        .collect()
}
