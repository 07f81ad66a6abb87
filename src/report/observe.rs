//! The observations the summary opens with: one sentence per question the plan asks, written from
//! the answer's figures with their CI and verdict, each linked to the table row it reads.
//!
//! - per compared variant (each value of `compare` against the baseline, per figure and per
//!   combination of the other parameters): improved / regressed only where the test says so, with
//!   Δ % and its 95 % CI; "no significant difference" otherwise, with both figures;
//! - per swept x (each line of the headline against x): where it starts, peaks and ends, a rise or
//!   a fall said only when the per-trial figures of the two points differ significantly, and the
//!   knee with what saturated there;
//! - per threshold broken, and the top finding (they come ranked), with how many more there are;
//! - without a comparison or an x: the range of the headline over the points, or the only point's
//!   figures.
//!
//! A sentence the figures do not support is never written: with fewer than 3 repetitions a side
//! nothing is called higher or lower, only the figures are given.

use super::answer::{figure, row_label};
use super::fmt::{delta_ci_shown, num, num_ci, NoCi, MIN_CI_N};
use super::loaded::{safe, Loaded};
use super::model::{AnswerCell, Observation, PointReport, Scaling, ThresholdRow, Verdict};
use crate::analysis::compare::{compare, Comparison};

pub struct Inputs<'a> {
    pub answer: &'a [AnswerCell],
    pub compare: Option<&'a str>,
    pub baseline: Option<&'a str>,
    pub x: Option<&'a str>,
    pub layout: &'a str,
    pub points: &'a [PointReport],
    pub groups: &'a [(String, Vec<&'a Loaded>)],
    pub scaling: Option<&'a Scaling>,
    /// The findings, each on one line, in their order.
    pub findings: &'a [String],
    pub thresholds: &'a [ThresholdRow],
    /// Whether the plan named the figures (`[report] metrics`): then each is compared.
    pub asked: bool,
}

pub fn build(i: &Inputs) -> Vec<Observation> {
    let mut out = Vec::new();
    if i.compare.is_some() {
        out.extend(variants(i));
    }
    if i.layout == "by_x" {
        out.extend(along_x(i));
    }
    if out.is_empty() {
        out.extend(points(i));
    }
    out.extend(thresholds(i));
    // The top finding (they come ranked: errors and the target's limits first); the others are a
    // click away, counted.
    if let Some(f) = i.findings.first() {
        let more = match i.findings.len() - 1 {
            0 => String::new(),
            1 => " (1 more finding under Bottleneck findings)".into(),
            n => format!(" ({n} more findings under Bottleneck findings)"),
        };
        out.push(Observation {
            kind: "finding".into(),
            text: safe(&format!("Finding: {f}{more}")),
            anchor: Some("bottleneck-findings".into()),
        });
    }
    out
}

/// Is a label a percentile's ("p99 request time", "read p99 lat")?
pub fn is_percentile_label(label: &str) -> bool {
    label
        .split(' ')
        .any(|w| w.len() > 1 && w.starts_with('p') && w[1..].chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// The figures a comparison is said for: the plan's `[report] metrics`, else the headline and the
/// first percentile figure of each point.
fn compared_cells<'a>(i: &Inputs<'a>) -> Vec<&'a AnswerCell> {
    let mut first_pct: Vec<(&str, &str)> = Vec::new();
    i.answer
        .iter()
        .filter(|c| !c.text_compares)
        .filter(|c| {
            if i.asked || c.headline {
                return true;
            }
            if !is_percentile_label(&c.label) {
                return false;
            }
            match first_pct.iter().find(|(p, _)| *p == c.point) {
                Some((_, l)) => *l == c.label,
                None => {
                    first_pct.push((&c.point, &c.label));
                    true
                }
            }
        })
        .collect()
}

/// A value with its unit, rounded to its CI.
fn value(c: &AnswerCell, v: f64, ci: Option<f64>) -> String {
    if let Some(t) = &c.text {
        return t.clone();
    }
    let n = num_ci(v, ci);
    if c.unit.is_empty() {
        n
    } else {
        format!("{n} {}", c.unit)
    }
}

/// A signed percentage: 2 significant digits from 10 % on, one decimal below.
fn pct(v: f64) -> String {
    if v.abs() >= 10.0 {
        format!("{v:+.0} %")
    } else {
        format!("{v:+.1} %")
    }
}

/// ", 95 % CI [a, b]" of a Δ %, as the tables show it: none where it is wider than the value
/// compared against (100 points: it would say nothing, a bound below −100 % included).
fn ci_text(ci: Option<(f64, f64)>) -> String {
    match delta_ci_shown(ci, MIN_CI_N) {
        Ok((a, b)) => format!(", 95 % CI [{}, {}]", pct(a), pct(b)),
        Err(NoCi::Wide) => ", its 95 % CI too wide to bound it".into(),
        Err(NoCi::FewValues) => String::new(),
    }
}

/// "x = 10" or the other parameters of a cell, for a sentence.
fn where_of(i: &Inputs, c: &AnswerCell) -> String {
    match (i.x, &c.x) {
        (Some(x), Some(v)) => format!("{x} = {v}"),
        _ => String::new(),
    }
}

/// One observation per compared value and combination of the other parameters: a clause per
/// figure compared.
fn variants(i: &Inputs) -> Vec<Observation> {
    let (Some(param), Some(base)) = (i.compare, i.baseline) else {
        return Vec::new();
    };
    let cells = compared_cells(i);
    let mut lines: Vec<(String, String)> = Vec::new();
    for c in cells.iter().filter(|c| c.before.is_some()) {
        let key = (c.variant.clone(), c.at.clone());
        if !lines.contains(&key) {
            lines.push(key);
        }
    }
    lines
        .into_iter()
        .filter_map(|(variant, at)| {
            let mine: Vec<&AnswerCell> = cells
                .iter()
                .copied()
                .filter(|c| c.variant == variant && c.at == at && c.before.is_some())
                .collect();
            let mut labels: Vec<String> = Vec::new();
            for c in &mine {
                if !labels.contains(&row_label(c)) {
                    labels.push(row_label(c));
                }
            }
            let clauses: Vec<String> = labels
                .iter()
                .map(|label| {
                    let line: Vec<&AnswerCell> = mine.iter().copied().filter(|c| row_label(c) == *label).collect();
                    let body = if line.len() == 1 { single(i, line[0]) } else { several(i, &line) };
                    format!("{label}: {body}")
                })
                .collect();
            let first = *mine.first()?;
            let anchor = mine
                .iter()
                .find(|c| matches!(c.verdict, Some(Verdict::Improved | Verdict::Regressed | Verdict::Changed)))
                .unwrap_or(&first)
                .row
                .clone();
            let at = if at.is_empty() { String::new() } else { format!(" at {at}") };
            Some(Observation {
                kind: "variant".into(),
                text: safe(&format!("{param} = {variant} against {base}{at}: {}.", clauses.join(". "))),
                anchor: Some(anchor),
            })
        })
        .collect()
}

/// The verdict of one cell against its baseline, with both figures.
fn single(i: &Inputs, c: &AnswerCell) -> String {
    let before = c.before.unwrap_or(f64::NAN);
    // The baseline's own cell at the same point, for the CI its figure is rounded to.
    let base_ci = i
        .answer
        .iter()
        .find(|b| Some(b.variant.as_str()) == i.baseline && b.metric == c.metric && b.at == c.at && b.x == c.x)
        .and_then(|b| b.ci95);
    let figures = format!("{} vs {}", value(c, c.value, c.ci95), value(c, before, base_ci));
    let delta = c.delta_pct.map_or(String::new(), |d| format!(", Δ {}", pct(d)));
    let at = where_of(i, c);
    let at = if at.is_empty() { String::new() } else { format!(" at {at}") };
    match &c.verdict {
        Some(Verdict::NoSignificantDifference) => {
            format!("no significant difference{at}: {figures}{delta}{}", ci_text(c.ci95_pct))
        }
        Some(v @ (Verdict::Improved | Verdict::Regressed | Verdict::Changed)) => {
            format!("{}{at}: {figures}{delta}{}", v.text(), ci_text(c.ci95_pct))
        }
        Some(Verdict::TooFewSamples { need }) => {
            format!("not tested{at} (fewer than {need} ok repetitions a side): {figures}{delta}")
        }
        None => format!("not tested{at} (no per-trial figures): {figures}{delta}"),
    }
}

/// A line of cells along x: the significant ones with Δ % and CI, the others counted.
fn several(i: &Inputs, line: &[&AnswerCell]) -> String {
    let x = i.x.unwrap_or("point");
    let at = |c: &AnswerCell| c.x.clone().unwrap_or_else(|| c.point.clone());
    let mut parts = Vec::new();
    for (word, pick) in [
        ("improved", Verdict::Improved),
        ("regressed", Verdict::Regressed),
        ("changed (no better direction)", Verdict::Changed),
    ] {
        let hits: Vec<String> = line
            .iter()
            .filter(|c| c.verdict.as_ref() == Some(&pick))
            .map(|c| format!("{} ({}{})", at(c), c.delta_pct.map_or("–".into(), pct), ci_text(c.ci95_pct)))
            .collect();
        if !hits.is_empty() {
            parts.push(format!("{word} at {x} = {}", hits.join(", ")));
        }
    }
    let untested: Vec<String> = line
        .iter()
        .filter(|c| matches!(c.verdict, None | Some(Verdict::TooFewSamples { .. })))
        .map(|c| format!("{} ({})", at(c), c.delta_pct.map_or("–".into(), pct)))
        .collect();
    if !untested.is_empty() {
        parts.push(format!(
            "not tested (fewer than 3 ok repetitions a side) at {x} = {}",
            untested.join(", ")
        ));
    }
    let same: Vec<&&AnswerCell> = line
        .iter()
        .filter(|c| c.verdict == Some(Verdict::NoSignificantDifference))
        .collect();
    if !same.is_empty() {
        let deltas: Vec<f64> = same.iter().filter_map(|c| c.delta_pct).collect();
        let range = match (deltas.iter().copied().reduce(f64::min), deltas.iter().copied().reduce(f64::max)) {
            (Some(a), Some(b)) if pct(a) != pct(b) => format!("Δ from {} to {}", pct(a), pct(b)),
            (Some(a), _) => format!("Δ {}", pct(a)),
            _ => String::new(),
        };
        let which = if same.len() == line.len() {
            format!("at every {x}")
        } else {
            "elsewhere".to_string()
        };
        let which = if range.is_empty() { which } else { format!("{which} ({range})") };
        parts.push(format!("no significant difference {which}"));
    }
    parts.join("; ")
}

/// The per-trial values of a cell's figure at its point.
fn trials_of(i: &Inputs, c: &AnswerCell) -> Vec<f64> {
    let Some(p) = i.points.iter().find(|p| p.label == c.point) else {
        return Vec::new();
    };
    let group = i
        .groups
        .iter()
        .find(|(l, _)| *l == p.label)
        .map(|(_, g)| g.as_slice())
        .unwrap_or(&[]);
    figure(p, group, &c.metric).map(|f| f.trials).unwrap_or_default()
}

/// How b differs from a, in words the test supports.
fn moved(i: &Inputs, a: &AnswerCell, b: &AnswerCell) -> (Comparison, &'static str) {
    let better = i
        .points
        .iter()
        .find(|p| p.label == b.point)
        .and_then(|p| p.metrics.iter().find(|m| m.name == b.metric))
        .map_or(crate::model::Better::Neither, |m| m.better);
    let r = compare(&trials_of(i, a), &trials_of(i, b), better);
    let word = match (&r.verdict, b.value > a.value) {
        (Verdict::TooFewSamples { .. }, _) => "untested",
        (Verdict::NoSignificantDifference, _) => "same",
        (_, true) => "up",
        (_, false) => "down",
    };
    (r, word)
}

/// One step of a line in words the test supports: "rises from A to B (+12 %, 95 % CI [...])",
/// "from A to B: no significant difference (Δ +1.2 %, 95 % CI [...])", "from A to B (Δ +1.2 %;
/// fewer than 3 ok repetitions a side, not tested)".
fn step(r: &Comparison, word: &str, span: &str) -> String {
    let d = r.delta_pct.map_or("–".into(), pct);
    let ci = ci_text(r.ci95_low_pct.zip(r.ci95_high_pct));
    match word {
        "up" => format!("rises {span} ({d}{ci})"),
        "down" => format!("falls {span} ({d}{ci})"),
        // The CI of a difference that is not significant spans 0 and is wider than Δ: left out.
        "same" => format!("{span}: no significant difference (Δ {d})"),
        _ => format!("{span} (Δ {d}; fewer than 3 ok repetitions a side, not tested)"),
    }
}

/// One sentence per line of the headline against x: start, peak, end, the knee.
fn along_x(i: &Inputs) -> Vec<Observation> {
    let Some(x) = i.x else { return Vec::new() };
    let mut lines: Vec<(String, String, String)> = Vec::new();
    // With a comparison, the baseline's lines: the other values are said against it.
    let baseline_only = |c: &&AnswerCell| i.baseline.is_none_or(|b| c.variant == b);
    for c in i.answer.iter().filter(|c| c.headline && c.x.is_some()).filter(baseline_only) {
        let key = (c.variant.clone(), c.at.clone(), row_label(c));
        if !lines.contains(&key) {
            lines.push(key);
        }
    }
    let xnum = |c: &AnswerCell| c.x.as_deref().and_then(|v| v.parse::<f64>().ok());
    lines
        .into_iter()
        .filter_map(|(variant, at, label)| {
            let mut line: Vec<&AnswerCell> = i
                .answer
                .iter()
                .filter(|c| c.headline && c.variant == variant && c.at == at && row_label(c) == label)
                .collect();
            if line.len() < 2 {
                return None;
            }
            line.sort_by(|a, b| xnum(a).unwrap_or(f64::NAN).total_cmp(&xnum(b).unwrap_or(f64::NAN)));
            let first = line[0];
            let last = *line.last()?;
            let top = *line.iter().max_by(|a, b| a.value.total_cmp(&b.value))?;
            let fig = |c: &AnswerCell| format!("{} at {x} = {}", value(c, c.value, c.ci95), c.x.as_deref().unwrap_or(""));
            let mut whose = Vec::new();
            if i.compare.is_some() || variant != "all" {
                whose.push(variant.clone());
            }
            if !at.is_empty() {
                whose.push(at.clone());
            }
            let subject = if whose.is_empty() {
                label.clone()
            } else {
                format!("{label} ({})", whose.join(", "))
            };
            let mut text = if std::ptr::eq(top, first) {
                let (r, word) = moved(i, first, last);
                // "at the lowest concurrency", where "first" read as a count ("the first cpus").
                let end = if xnum(first).is_some() { "lowest" } else { "first" };
                format!(
                    "{subject} is highest at the {end} {x}, {}; then {}",
                    fig(first),
                    step(&r, word, &format!("to {}", fig(last)))
                )
            } else {
                let (r, word) = moved(i, first, top);
                let mut t = format!("{subject}: {}", step(&r, word, &format!("from {} to {}", fig(first), fig(top))));
                if !std::ptr::eq(top, last) {
                    let (r, word) = moved(i, top, last);
                    t.push_str(&format!("; then {}", step(&r, word, &format!("to {}", fig(last)))));
                }
                t
            };
            if let Some(k) = knee(i, &variant, &at) {
                text.push_str(&format!("; {k}"));
            }
            Some(Observation {
                kind: "x".into(),
                text: safe(&format!("{text}.")),
                anchor: Some(first.row.clone()),
            })
        })
        .collect()
}

/// The knee of a line, with what saturated there, from the scaling section.
fn knee(i: &Inputs, variant: &str, at: &str) -> Option<String> {
    let s = i.scaling?;
    let matches = |v: &str| {
        let parts: Vec<&str> = v.split(' ').collect();
        let want: Vec<String> = at
            .split(' ')
            .filter(|p| !p.is_empty())
            .map(String::from)
            .chain(i.compare.map(|c| format!("{c}={variant}")))
            .collect();
        let mut want_parts: Vec<&str> = want.iter().flat_map(|w| w.split(' ')).collect();
        let mut have = parts.clone();
        want_parts.sort_unstable();
        have.sort_unstable();
        (v == "all" && want.is_empty()) || (!want.is_empty() && want_parts == have)
    };
    let (v, kx) = s.knees.iter().find(|(v, _)| matches(v))?;
    let saturated = s
        .saturated_at_knee
        .iter()
        .find(|(sv, _)| sv == v)
        .map_or(String::new(), |(_, w)| format!(", where {}", w.join("; ")));
    Some(format!("knee at {} = {}{saturated}", s.parameter, super::fmt::param(*kx)))
}

/// Without a comparison or an x: the headline's range over the points, or the only point's figures.
fn points(i: &Inputs) -> Vec<Observation> {
    let heads: Vec<&AnswerCell> = i.answer.iter().filter(|c| c.headline).collect();
    if i.points.len() == 1 {
        let cells: Vec<&AnswerCell> = i.answer.iter().take(4).collect();
        let Some(first) = cells.first() else {
            return Vec::new();
        };
        let figures: Vec<String> = cells
            .iter()
            .map(|c| format!("{} {}", row_label(c), value(c, c.value, c.ci95)))
            .collect();
        return vec![Observation {
            kind: "point".into(),
            text: safe(&format!("At the only point: {}.", figures.join(", "))),
            anchor: Some(first.row.clone()),
        }];
    }
    let mut out = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    for c in &heads {
        let l = format!("{}\u{1}{}", c.label, c.unit);
        if !labels.contains(&l) {
            labels.push(l);
        }
    }
    // One sentence per headline (a pattern's parts together: bogo-ops/s of each stressor).
    for l in labels {
        let same: Vec<&&AnswerCell> = heads.iter().filter(|c| format!("{}\u{1}{}", c.label, c.unit) == l).collect();
        let (Some(lo), Some(hi)) = (
            same.iter().min_by(|a, b| a.value.total_cmp(&b.value)),
            same.iter().max_by(|a, b| a.value.total_cmp(&b.value)),
        ) else {
            continue;
        };
        let text = if same.len() == 1 {
            format!("{} at {}: {}.", row_label(lo), lo.point, value(lo, lo.value, lo.ci95))
        } else {
            format!(
                "{} ranges from {} at {} to {} at {} over {} points.",
                lo.label,
                value(lo, lo.value, lo.ci95),
                lo.point,
                value(hi, hi.value, hi.ci95),
                hi.point,
                same.len()
            )
        };
        out.push(Observation {
            kind: "point".into(),
            text: safe(&text),
            anchor: Some(hi.row.clone()),
        });
    }
    out
}

/// One sentence per threshold broken, with the points where it broke and what was observed.
fn thresholds(i: &Inputs) -> Vec<Observation> {
    let mut exprs: Vec<&str> = Vec::new();
    for t in i.thresholds.iter().filter(|t| !t.passed) {
        if !exprs.contains(&t.expr.as_str()) {
            exprs.push(&t.expr);
        }
    }
    exprs
        .into_iter()
        .map(|e| {
            let broken: Vec<&ThresholdRow> = i.thresholds.iter().filter(|t| t.expr == e && !t.passed).collect();
            let judged = i.thresholds.iter().filter(|t| t.expr == e).count();
            let at: Vec<String> = broken
                .iter()
                .map(|t| {
                    let seen = t.observed.map_or("no data".to_string(), |v| {
                        format!("{}{}", num(v), t.basis.as_deref().map_or(String::new(), |b| format!(", {b}")))
                    });
                    format!("{} ({seen})", t.point)
                })
                .collect();
            let anchor = i
                .answer
                .iter()
                .find(|c| c.point == broken[0].point && c.headline)
                .or_else(|| i.answer.iter().find(|c| c.point == broken[0].point))
                .map(|c| c.row.clone());
            Observation {
                kind: "threshold".into(),
                text: safe(&format!(
                    "Threshold `{e}` broken at {} of {judged} points: {}.",
                    broken.len(),
                    at.join("; ")
                )),
                anchor,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delta_ci_is_said_as_the_tables_show_it() {
        assert_eq!(ci_text(Some((5.0, 35.0))), ", 95 % CI [+5.0 %, +35 %]");
        // Wider than the value compared against (a bound below −100 % says nothing): not given.
        assert_eq!(ci_text(Some((-150.0, 20.0))), ", its 95 % CI too wide to bound it");
        assert_eq!(ci_text(None), "");
    }
}
