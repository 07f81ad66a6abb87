//! The Summary section the report opens with: what ran and whether to trust it, the observations
//! (each linked to its table row), the answer table (each point's headline and key figures, each
//! variant against the baseline with Δ % and the verdict per cell) beside its chart; and, in a
//! section of its own after the system's, the optimization summary when the plan compares variants.

use super::table::{delta_pct, num_ci, table, Block, CiCells, Section, Table, MIN_CI_N};
use crate::model::skip::{self, Skipped};
use crate::report::loaded::safe;
use crate::report::model::{AnswerCell, Overview, ReportModel, Verdict};

/// The longest failure reason shown in the summary (the full one is under Failed trials).
const REASON_CHARS: usize = 160;

/// The answer's chart file (drawn by `sweep_charts`).
pub const ANSWER_CHART: &str = "answer.svg";

pub fn summary(m: &ReportModel, charts: &[(String, String)]) -> Section {
    let mut blocks = vec![Block::Para(what_ran(m))];
    if let Some(n) = not_run(&m.notes) {
        blocks.push(Block::Para(n));
    }
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
    // The warnings in one paragraph (the first screen is short): "Warning: a" or "Warnings: (1) a (2) b".
    match m.overview.warnings.as_slice() {
        [] => {}
        [w] => blocks.push(Block::Para(format!("Warning: {}", safe(w)))),
        ws => {
            let each: Vec<String> = ws.iter().enumerate().map(|(i, w)| format!("({}) {}", i + 1, safe(w))).collect();
            blocks.push(Block::Para(format!("Warnings: {}", each.join(" "))));
        }
    }
    for o in &m.overview.observations {
        let text = format!("Observation: {}", safe(&o.text));
        blocks.push(match &o.anchor {
            Some(a) => Block::Linked { text, anchor: a.clone() },
            None => Block::Para(text),
        });
    }
    let chart = charts.iter().any(|(n, _)| n == ANSWER_CHART).then(|| ANSWER_CHART.to_string());
    blocks.extend(answer(m, chart));
    Section::new("Summary", blocks)
}

/// "Plan p on host h (n CPUs): t trials, a ok, b failed, in 2m10s."
fn what_ran(m: &ReportModel) -> String {
    let mut parts = Vec::new();
    for r in &m.runs {
        let secs = r.ended_unix.map(|e| (e - r.started_unix).max(0.0));
        // A merged run ran on its segments' machines, not on the one that merged it.
        let machines = match &r.segments {
            Some(s) => format!("merged from {}", safe(s)),
            None => format!("on {} ({} CPUs)", safe(&r.host), r.ncpu),
        };
        parts.push(format!(
            "plan {} {machines}: {} trials, {} ok, {} failed{}",
            safe(&r.plan),
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
        o.push_str(&format!(" Compared: each {} against {} = {}", safe(c), safe(c), safe(b)));
        if !m.overview.set_by_variant.is_empty() {
            o.push_str(&format!(
                " (the variants set {}, so points are paired without it)",
                safe(&m.overview.set_by_variant.join(", "))
            ));
        }
        o.push('.');
    }
    o
}

/// The most skipped points named in the summary; the rest are counted (all are under Run).
const NOT_RUN_NAMED: usize = 6;

/// "Not run: cpus=4 requests=10, cpus=4 requests=100: cpus = 4 cannot be honoured: ...": what the
/// plan asked for and the run skipped (a point that cannot be honoured here, a variant whose check
/// failed), from the run's notes, points grouped by their reason; None when nothing was skipped.
fn not_run(notes: &[String]) -> Option<String> {
    let mut by_reason: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut variants = Vec::new();
    for n in notes {
        match skip::read(n) {
            Some(Skipped::Point { label, why }) => match by_reason.iter_mut().find(|(w, _)| *w == why) {
                Some((_, labels)) => labels.push(label),
                None => by_reason.push((why, vec![label])),
            },
            Some(Skipped::Variant) => variants.push(safe(n)),
            None => {}
        }
    }
    let mut parts: Vec<String> = by_reason
        .iter()
        .map(|(why, labels)| {
            let mut named = labels.iter().take(NOT_RUN_NAMED).map(|l| safe(l)).collect::<Vec<_>>().join(", ");
            if labels.len() > NOT_RUN_NAMED {
                named.push_str(&format!(" and {} more", labels.len() - NOT_RUN_NAMED));
            }
            format!("{named}: {}", safe(why))
        })
        .collect();
    parts.extend(variants);
    (!parts.is_empty()).then(|| format!("Not run: {}.", parts.join("; ")))
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

/// The verdict as an answer cell says it ("n.s.": no significant difference).
fn verdict_short(v: &Verdict) -> String {
    match v {
        Verdict::NoSignificantDifference => "n.s.".into(),
        Verdict::TooFewSamples { .. } => "untested".into(),
        Verdict::Changed => "changed".into(),
        v => v.text(),
    }
}

/// "1234 (+5.2 %, improved)", "18/18", or the bare value for the baseline.
fn cell_text(c: &AnswerCell) -> String {
    let mut o = compared_text(c);
    if let Some(f) = &c.flag {
        o.push_str(&format!(" ⚠ {}", safe(f)));
    }
    o
}

/// The value with its comparison against the baseline variant's.
fn compared_text(c: &AnswerCell) -> String {
    let mut o = c.text.clone().unwrap_or_else(|| num_ci(c.value, c.ci95));
    if c.text_compares {
        if let Some(v) = &c.verdict {
            o.push_str(&format!(" (CPU: {})", verdict_short(v)));
        }
        return o;
    }
    match (&c.delta_pct, &c.verdict) {
        (Some(d), Some(v)) => o.push_str(&format!(" ({}, {})", delta_pct(*d, c.ci95_pct), verdict_short(v))),
        (Some(d), None) => o.push_str(&format!(" ({})", delta_pct(*d, c.ci95_pct))),
        // No Δ % from a baseline of 0: say what it was.
        _ if c.before == Some(0.0) && c.value != 0.0 => o.push_str(" (0 before)"),
        _ => {}
    }
    o
}

/// "name (unit)"; a count's unit that the name already says is left out ("failed requests", not
/// "failed requests (requests)").
fn with_unit(label: &str, unit: &str) -> String {
    let last = label.rsplit(' ').next().unwrap_or(label);
    if unit.is_empty() || last == unit || last.trim_end_matches('s') == unit.trim_end_matches('s') {
        label.to_string()
    } else {
        format!("{label} ({})", safe(unit))
    }
}

/// The answer table and its chart: `by_x` (a row per figure, variant and dimensions, a column per
/// x value) or `by_point` (a row per point, a column per figure).
fn answer(m: &ReportModel, chart: Option<String>) -> Vec<Block> {
    let o = &m.overview;
    if o.answer.is_empty() {
        return vec![];
    }
    let o = &only(o, false);
    if o.answer.is_empty() {
        return vec![];
    }
    let (t, row_ids) = if o.layout == "by_x" { by_x(o) } else { by_point(o) };
    let what = if m.spec.metrics.is_empty() {
        "each point's headline throughput (first) and its workload's key figures"
    } else {
        "the figures the plan's [report] metrics name"
    };
    let intro = match &o.baseline {
        Some(b) => format!(
            "The answer: {what}, each against {} = {} at the same point: Δ % and the verdict of the per-trial figures (α = 0.05; n.s. = no significant difference). A mean is rounded to its 95 % CI; a percentile is the point's own.",
            safe(o.compare.as_deref().unwrap_or("")),
            safe(b)
        ),
        None => format!(
            "The answer: {what}. A mean over the repetitions is rounded to its 95 % CI; a percentile is the point's own (merged histogram, or the median of what the tool printed)."
        ),
    };
    let mut intro = intro;
    if !o.zero_errors.is_empty() {
        intro.push_str(&format!(
            " 0 at every point, so not in the table: {}.",
            safe(&o.zero_errors.join(", "))
        ));
    }
    vec![Block::Para(intro), Block::Answer { table: t, row_ids, chart }]
}

/// The overview with only the cost-per-operation cells (`cost`) or only the others: the answer
/// table on the first screen holds the figures the plan asked, the target's cost per operation has
/// a table of its own in the same shape after the system's.
fn only(o: &Overview, cost: bool) -> Overview {
    let mut o = o.clone();
    o.answer.retain(|c| (c.metric == crate::analysis::cost::CPU_US_PER_OP) == cost);
    o
}

/// The target's cost per operation (CPU time, context switches and memory in flight per request,
/// transaction or I/O) at each point, in the answer table's shape, each variant against the
/// baseline where the plan compares.
pub fn cost(m: &ReportModel) -> Option<Section> {
    let o = &only(&m.overview, true);
    if o.answer.is_empty() {
        return None;
    }
    let (t, row_ids) = if o.layout == "by_x" { by_x(o) } else { by_point(o) };
    let against = match &o.baseline {
        Some(b) => format!(
            " Each against {} = {} at the same point (Δ %); the verdict is the CPU time's.",
            safe(o.compare.as_deref().unwrap_or("")),
            safe(b)
        ),
        None => String::new(),
    };
    let intro = format!(
        "What each operation cost the target: its CPU time, its context switches and its memory in flight per operation, from the target's process samples over the load phase (the mean over the repetitions).{against} Each point's figures with their 95 % CI are under Metrics per point."
    );
    Some(Section::new(
        COST,
        vec![
            Block::Para(intro),
            Block::Answer {
                table: t,
                row_ids,
                chart: None,
            },
        ],
    ))
}

/// The title of [`cost`]'s section.
pub const COST: &str = "Cost per operation";

/// A row per figure, compared value and dimensions; a column per x value.
fn by_x(o: &Overview) -> (Table, Vec<String>) {
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
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    for c in &o.answer {
        let i = match ids.iter().position(|id| *id == c.row) {
            Some(i) => i,
            None => {
                let mut head = vec![with_unit(&crate::report::answer::row_label(c), &c.unit)];
                if o.compare.is_some() {
                    head.push(c.variant.clone());
                }
                head.extend(c.dims.iter().cloned());
                ids.push(c.row.clone());
                rows.push((String::new(), head.into_iter().chain(vec!["–".to_string(); xs.len()]).collect()));
                rows.len() - 1
            }
        };
        let lead = rows[i].1.len() - xs.len();
        if let Some(col) = c.x.as_deref().and_then(|x| xs.iter().position(|v| *v == x)) {
            // A row of several parts (bogo-ops/s of each stressor) names the part unless x does.
            let text = match &c.part {
                Some(p) if c.figure == c.label && c.x.as_deref() != Some(p.as_str()) => format!("{p}: {}", cell_text(c)),
                _ => cell_text(c),
            };
            rows[i].1[lead + col] = text;
        }
    }
    // Rows by dimensions, then in the figures' order, then by compared value (each figure's
    // baseline row and the rows compared with it together): a figure's rank is the latest place
    // it takes among a point's figures (one missing at a point moves nothing).
    let mut rank: Vec<(String, usize)> = Vec::new();
    let mut groups: Vec<String> = Vec::new();
    let mut variants: Vec<&str> = Vec::new();
    let mut last_point = "";
    let mut index = 0;
    for c in &o.answer {
        if c.point != last_point {
            last_point = &c.point;
            index = 0;
        }
        let label = crate::report::answer::row_label(c);
        match rank.iter_mut().find(|(l, _)| *l == label) {
            Some(r) => r.1 = r.1.max(index),
            None => rank.push((label, index)),
        }
        index += 1;
        if !groups.contains(&c.at) {
            groups.push(c.at.clone());
        }
        if !variants.contains(&c.variant.as_str()) {
            variants.push(&c.variant);
        }
    }
    let order = |id: &String| -> (usize, usize, usize) {
        let c = o.answer.iter().find(|c| c.row == *id);
        let g = c.map_or(0, |c| groups.iter().position(|g| *g == c.at).unwrap_or(0));
        let r = c.map_or(0, |c| {
            let label = crate::report::answer::row_label(c);
            rank.iter().find(|(l, _)| *l == label).map_or(0, |r| r.1)
        });
        let v = c.map_or(0, |c| variants.iter().position(|v| *v == c.variant).unwrap_or(0));
        (g, r, v)
    };
    let mut sorted: Vec<(String, (String, Vec<String>))> = ids.into_iter().zip(rows).collect();
    sorted.sort_by_key(|(id, _)| order(id));
    let (ids, rows): (Vec<String>, Vec<(String, Vec<String>)>) = sorted.into_iter().unzip();
    let mut header: Vec<String> = vec!["figure".into()];
    if let Some(c) = &o.compare {
        header.push(safe(c));
    }
    header.extend(o.dimensions.iter().map(|d| safe(d)));
    let x = o.x.as_deref().unwrap_or("x");
    // "concurrency = 2", then the other values alone: the columns stay narrow beside the chart.
    header.extend(
        xs.iter()
            .enumerate()
            .map(|(i, v)| if i == 0 { format!("{} = {}", safe(x), v) } else { v.to_string() }),
    );
    let head: Vec<&str> = header.iter().map(String::as_str).collect();
    let Block::Table(t) = table(&head, rows.into_iter().map(|(_, r)| r).collect()) else {
        unreachable!("table() makes a table")
    };
    (t, ids)
}

/// A row per point; a column per figure (the headlines first). A pattern's figures share a column
/// ("bogo-ops/s"), each value named by its part ("vm: 1234") unless the column has only one part.
fn by_point(o: &Overview) -> (Table, Vec<String>) {
    // Columns: (label, unit), headline columns first, then in order of first appearance.
    let mut cols: Vec<(String, String, bool)> = Vec::new();
    for c in &o.answer {
        match cols.iter_mut().find(|(l, u, _)| *l == c.label && *u == c.unit) {
            Some(col) => col.2 |= c.headline,
            None => cols.push((c.label.clone(), c.unit.clone(), c.headline)),
        }
    }
    cols.sort_by_key(|c| !c.2);
    let parts = |label: &str, unit: &str| -> Vec<Option<&str>> {
        let mut p: Vec<Option<&str>> = o
            .answer
            .iter()
            .filter(|c| c.label == label && c.unit == unit)
            .map(|c| c.part.as_deref())
            .collect();
        p.sort();
        p.dedup();
        p
    };
    let lead_point = o.compare.is_none() && o.dimensions.is_empty();
    let mut header: Vec<String> = Vec::new();
    if lead_point {
        header.push("point".into());
    }
    if let Some(c) = &o.compare {
        header.push(safe(c));
    }
    header.extend(o.dimensions.iter().map(|d| safe(d)));
    for (label, unit, _) in &cols {
        let name = match parts(label, unit).as_slice() {
            [Some(one)] => format!("{one} {label}"),
            _ => label.clone(),
        };
        header.push(with_unit(&name, unit));
    }
    let mut ids: Vec<String> = Vec::new();
    let mut rows: Vec<Vec<String>> = Vec::new();
    for c in &o.answer {
        let i = match ids.iter().position(|id| *id == c.row) {
            Some(i) => i,
            None => {
                let mut head: Vec<String> = Vec::new();
                if lead_point {
                    head.push(safe(&c.point));
                }
                if o.compare.is_some() {
                    head.push(c.variant.clone());
                }
                head.extend(c.dims.iter().cloned());
                head.extend(vec![String::new(); cols.len()]);
                ids.push(c.row.clone());
                rows.push(head);
                rows.len() - 1
            }
        };
        let lead = rows[i].len() - cols.len();
        let Some(col) = cols.iter().position(|(l, u, _)| *l == c.label && *u == c.unit) else {
            continue;
        };
        // A value is named by its part when its row has several in that column.
        let named = o
            .answer
            .iter()
            .filter(|d| d.row == c.row && d.label == c.label && d.unit == c.unit)
            .count()
            > 1;
        let text = match (&c.part, named) {
            (Some(p), true) => format!("{p}: {}", cell_text(c)),
            _ => cell_text(c),
        };
        let cell = &mut rows[i][lead + col];
        if cell.is_empty() {
            *cell = text;
        } else {
            cell.push_str(&format!("; {text}"));
        }
    }
    for r in &mut rows {
        for c in r.iter_mut().filter(|c| c.is_empty()) {
            *c = "–".into();
        }
    }
    let head: Vec<&str> = header.iter().map(String::as_str).collect();
    let Block::Table(t) = table(&head, rows) else {
        unreachable!("table() makes a table")
    };
    (t, ids)
}

/// Metric, before, after, Δ %, 95 % CI, verdict: the other variants against the baseline at the
/// largest x.
pub fn optimization(m: &ReportModel) -> Option<Section> {
    let o = &m.overview;
    if o.optimization.is_empty() {
        return None;
    }
    let mut cis = CiCells::new();
    let rows = optimization_rows(m, &mut cis);
    let mut blocks = vec![
        Block::Para(format!(
            "Before = {} = {}, after = each other value{}: the answer's figures side by side with the 95 % CI of Δ % and the verdict.",
            safe(o.compare.as_deref().unwrap_or("")),
            safe(o.baseline.as_deref().unwrap_or("")),
            o.x.as_deref().map_or(String::new(), |x| format!(", at the largest {}", safe(x)))
        )),
        table(&OPTIMIZATION_HEADER, rows),
    ];
    blocks.extend(cis.note().map(Block::Para));
    Some(Section::new(OPTIMIZATION, blocks))
}

/// The title of the section that puts each variant's figures after the baseline's.
pub const OPTIMIZATION: &str = "Optimization summary";

/// The repetitions behind a cell's comparison, as far as its CI goes: fewer than 3 where the test
/// found too few samples.
fn repetitions(c: &AnswerCell) -> usize {
    match c.verdict {
        Some(Verdict::TooFewSamples { .. }) => 0,
        _ => MIN_CI_N,
    }
}

/// The optimization table's header.
pub const OPTIMIZATION_HEADER: [&str; 7] = ["figure", "variant", "before", "after", "Δ %", "95 % CI", "verdict"];

/// The baseline's 95 % CI half-width at an optimization cell's point (the answer cell of the
/// baseline variant with the same metric, other parameters and x).
fn baseline_ci(o: &Overview, c: &AnswerCell) -> Option<f64> {
    let base = o.baseline.as_deref()?;
    o.answer
        .iter()
        .find(|b| b.variant == base && b.metric == c.metric && b.at == c.at && b.x == c.x)
        .and_then(|b| b.ci95)
}

/// The optimization table's rows: figure, variant, before, after, Δ %, 95 % CI, verdict; the
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
                with_unit(&crate::report::answer::row_label(c), &c.unit),
                safe(&at.join(" ")),
                c.before.map_or("–".into(), |b| num_ci(b, baseline_ci(o, c))),
                c.text.clone().unwrap_or_else(|| num_ci(c.value, c.ci95)),
                c.delta_pct.map_or("–".into(), |d| delta_pct(d, c.ci95_pct)),
                cis.delta(c.ci95_pct, repetitions(c)),
                c.verdict.as_ref().map_or("–".into(), verdict_text),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_skipped_for_one_reason_are_named_together_and_a_skipped_variant_as_noted() {
        let notes: Vec<String> = [
            "skipped cpus=4 requests=10: cpus = 4 cannot be honoured: this machine has 2 online CPU(s) (0,1)",
            "run b has plan \"x\", not \"y\": pooled anyway",
            "skipped cpus=4 requests=100: cpus = 4 cannot be honoured: this machine has 2 online CPU(s) (0,1)",
            "skipped cpus=8 requests=10: cpus = 8 cannot be honoured: this machine has 2 online CPU(s) (0,1)",
            "variant tuned skipped (2 point(s) not run): needs root",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            not_run(&notes).unwrap(),
            "Not run: cpus=4 requests=10, cpus=4 requests=100: cpus = 4 cannot be honoured: this machine has 2 online \
             CPU(s) (0,1); cpus=8 requests=10: cpus = 8 cannot be honoured: this machine has 2 online CPU(s) (0,1); \
             variant tuned skipped (2 point(s) not run): needs root."
        );
        assert_eq!(not_run(&notes[1..2]), None, "a note of another kind is not a skip");
        assert_eq!(not_run(&[]), None);
        let many: Vec<String> = (1..=9).map(|i| format!("skipped n={i}: too big")).collect();
        assert_eq!(
            not_run(&many).unwrap(),
            "Not run: n=1, n=2, n=3, n=4, n=5, n=6 and 3 more: too big."
        );
    }
}
