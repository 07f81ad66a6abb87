//! The answer table's cells: at every point, its headline throughput and the key figures its
//! workload declares (`crate::workload::figures`), or the plan's `[report] metrics`; each against
//! the baseline variant's at the same point when the plan compares variants.
//!
//! Which figures a point shows is read from what its trials produced: a fio point that only wrote
//! shows write IOPS, a stress-ng point its own stressor's bogo-ops/s. A percentile shown is the
//! point's own (of the merged histogram, or the median of the per-trial values a tool printed),
//! never a mean of per-trial percentiles; Δ % is between those figures, and the verdict is the test
//! of the per-trial figures, where the trials have one.

use super::loaded::{safe, value_text, Loaded};
use super::model::{AnswerCell, PointReport};
use super::spec::ReportSpec;
use crate::analysis::compare::compare;
use crate::model::figures::{self, Show};
use crate::model::{Better, MetricKind};

/// What the cells are built from.
pub struct Ctx<'a> {
    pub spec: &'a ReportSpec,
    pub compare: Option<&'a str>,
    pub baseline: Option<&'a str>,
    pub x: Option<&'a str>,
    pub dimensions: &'a [String],
    pub set_by_variant: &'a [String],
    pub points: &'a [PointReport],
    pub groups: &'a [(String, Vec<&'a Loaded>)],
}

/// One figure of a point: its value, sd, unit, better direction and the per-trial values.
pub struct Figure {
    pub value: f64,
    pub sd: Option<f64>,
    /// Half-width of the mean's 95 % CI (None for a percentile).
    pub ci95: Option<f64>,
    pub unit: String,
    pub better: Better,
    pub trials: Vec<f64>,
}

/// A figure the table shows at a point: the name it is looked up by and how it is said.
#[derive(Clone, Debug)]
struct Key {
    metric: String,
    label: String,
    part: Option<String>,
    show: Show,
    headline: bool,
}

/// The headline throughput of a point from the metrics its ok trials produced: the first declared
/// by its workload's table; for a workload no table covers, the run's stored primary throughput,
/// else `requests_per_s` or the first higher-is-better rate.
pub fn headline_of(p: &PointReport, run_primary: Option<&str>) -> Option<String> {
    let names = point_names(p);
    if let Some(f) = figures::of(&p.workload) {
        return f.headline(names.iter().map(String::as_str));
    }
    let metrics = p.metrics.iter().map(|m| (m.name.as_str(), m.unit.as_str(), m.better));
    crate::analysis::scaling::throughput_metric(run_primary, metrics).map(|(n, _)| n)
}

/// Every metric name the point's trials produced (percentiles included).
fn point_names(p: &PointReport) -> Vec<String> {
    p.metrics
        .iter()
        .map(|m| m.name.clone())
        .chain(p.printed_percentiles.iter().map(|r| r.name.clone()))
        .chain(p.merged_instead.iter().cloned())
        .collect()
}

/// `by_x` when there is an x parameter with values, else `by_point`.
pub fn layout(x: Option<&str>, points: &[PointReport]) -> &'static str {
    match x {
        Some(x) if points.iter().any(|p| p.params.contains_key(x)) => "by_x",
        _ => "by_point",
    }
}

/// Every point's cells, in point order, and the labels of the error figures left out as they are
/// 0 at every point.
pub fn cells(c: &Ctx) -> (Vec<AnswerCell>, Vec<String>) {
    let layout = layout(c.x, c.points);
    let mut out = Vec::new();
    let mut errors: Vec<(String, String)> = Vec::new();
    for p in c.points {
        let group = group_of(c, &p.label);
        let variant = c.compare.and_then(|k| p.params.get(k)).map_or("all".to_string(), value_text);
        let base = c.baseline.filter(|b| *b != variant).and_then(|b| baseline_point(c, p, b));
        let base_group = base.map(|b| group_of(c, &b.label)).unwrap_or(&[]);
        let dims: Vec<String> = c
            .dimensions
            .iter()
            .map(|d| p.params.get(d).map(|v| safe(&value_text(v))).unwrap_or_default())
            .collect();
        let at: Vec<String> = c.dimensions.iter().zip(&dims).map(|(k, v)| format!("{k}={v}")).collect();
        let keys = keys_of(c.spec, p);
        for (i, key) in keys.iter().enumerate() {
            let Some(f) = figure(p, group, &key.metric) else { continue };
            let mut text = shown_text(key, group);
            if key.show == Show::NonZero && f.value == 0.0 {
                // Only the classes that happened; "0" once when none did.
                let label_seen = keys[..i].iter().any(|k| k.label == key.label);
                let any = keys
                    .iter()
                    .filter(|k| k.label == key.label)
                    .any(|k| figure(p, group, &k.metric).is_some_and(|f| f.value != 0.0));
                if any || label_seen {
                    continue;
                }
                text = Some("0".into());
            }
            let before = base.and_then(|b| figure(b, base_group, &key.metric));
            let mut cell = cell(key, &variant, &at.join(" "), dims.clone(), f, before);
            if text.as_deref() == Some("0") && key.show == Show::NonZero {
                cell.part = None;
            }
            cell.text = text;
            if key.metric == crate::analysis::cost::CPU_US_PER_OP {
                cost_cell(&mut cell, p, base);
            }
            cell.x = c.x.and_then(|x| p.params.get(x)).map(|v| safe(&value_text(v)));
            cell.point = p.label.clone();
            if key.show == Show::Errors && !errors.iter().any(|(m, _)| *m == key.metric) {
                errors.push((key.metric.clone(), key.label.clone()));
            }
            out.push(cell);
        }
    }
    // An error figure that is 0 everywhere is one sentence, not a row of zeros per variant.
    let mut zero = Vec::new();
    for (metric, label) in errors {
        if out.iter().filter(|c| c.metric == metric).all(|c| c.value == 0.0) {
            out.retain(|c| c.metric != metric);
            zero.push(label);
        }
    }
    name_figures(&mut out, layout);
    for cell in &mut out {
        cell.row = row_anchor(layout, cell, &cell.point.clone());
    }
    unique_rows(&mut out, layout);
    (out, zero)
}

/// Each cell's `figure`: its part and label, or (`by_x`) the label alone where the part changes
/// along the row (each stressor's bogo-ops/s in one row when the stressor is x).
fn name_figures(cells: &mut [AnswerCell], layout: &str) {
    let with_part = |c: &AnswerCell| match &c.part {
        Some(part) => format!("{part} {}", c.label),
        None => c.label.clone(),
    };
    let keys: Vec<(String, String, String, String, Option<String>)> = cells
        .iter()
        .map(|c| (c.label.clone(), c.unit.clone(), c.variant.clone(), c.at.clone(), c.part.clone()))
        .collect();
    for (i, c) in cells.iter_mut().enumerate() {
        let mixed = layout == "by_x"
            && keys
                .iter()
                .any(|k| (&k.0, &k.1, &k.2, &k.3) == (&keys[i].0, &keys[i].1, &keys[i].2, &keys[i].3) && k.4 != keys[i].4);
        c.figure = if mixed { c.label.clone() } else { with_part(c) };
    }
}

fn group_of<'a>(c: &'a Ctx, label: &str) -> &'a [&'a Loaded] {
    c.groups.iter().find(|(l, _)| l == label).map(|(_, g)| g.as_slice()).unwrap_or(&[])
}

/// The baseline variant's point with the same other parameters, those a variant sets excepted.
fn baseline_point<'a>(c: &'a Ctx, p: &PointReport, baseline: &str) -> Option<&'a PointReport> {
    let compare = c.compare?;
    let free = |k: &str| k == compare || c.set_by_variant.iter().any(|s| s == k);
    c.points.iter().find(|q| {
        q.params.get(compare).map(value_text).as_deref() == Some(baseline)
            && q.params.iter().all(|(k, v)| free(k) || p.params.get(k) == Some(v))
            && p.params.iter().all(|(k, v)| free(k) || q.params.get(k) == Some(v))
    })
}

/// The figures a point shows: `[report] metrics`, else its workload's key figures (the ones its
/// trials produced, the headline first), else the headline, p50 and p99.
fn keys_of(spec: &ReportSpec, p: &PointReport) -> Vec<Key> {
    let table = figures::of(&p.workload);
    let headline = p.headline.as_deref();
    let said = |name: &str| -> Key {
        let (label, part) = label_of(p, name);
        Key {
            metric: name.to_string(),
            label,
            part,
            show: Show::Value,
            headline: Some(name) == headline,
        }
    };
    if !spec.metrics.is_empty() {
        // The figures asked for, and the target's cost per operation after them.
        let mut keys: Vec<Key> = spec.metrics.iter().map(|m| said(m)).collect();
        keys.extend(cost_key(p).filter(|c| !keys.iter().any(|k| k.metric == c.metric)));
        return keys;
    }
    let Some(table) = table else {
        let mut keys: Vec<Key> = headline.map(said).into_iter().collect();
        keys.extend(["p50", "p99"].map(said));
        keys.extend(cost_key(p));
        return keys;
    };
    let names = point_names(p);
    let mut keys = Vec::new();
    for k in table.key {
        for (pattern, label) in k.any_of {
            let mut found: Vec<&String> = names.iter().filter(|n| figures::shows(pattern, n)).collect();
            found.sort();
            if found.is_empty() {
                // A store that kept the latency histogram but not the percentile a trial now
                // prints (`latency_p99_ms`): the histogram's own percentile, under the same label.
                if let Some(q) = merged_for(p, pattern) {
                    keys.push(Key {
                        metric: q,
                        label: label.to_string(),
                        part: None,
                        show: k.show,
                        headline: false,
                    });
                    break;
                }
                continue;
            }
            for name in found {
                let part = figures::KeyFigure::label_for(k, name).and_then(|(_, part)| part);
                keys.push(Key {
                    metric: name.clone(),
                    label: label.to_string(),
                    part,
                    show: k.show,
                    headline: Some(name.as_str()) == headline,
                });
            }
            break;
        }
    }
    if let Some(h) = headline.filter(|h| !keys.iter().any(|k| k.metric == *h)) {
        keys.insert(0, said(h));
    }
    // The headline first.
    keys.sort_by_key(|k| !k.headline);
    keys.extend(cost_key(p));
    keys
}

/// The target's cost per operation, one figure after the others (where the point has it).
fn cost_key(p: &PointReport) -> Option<Key> {
    let cpu = crate::analysis::cost::CPU_US_PER_OP;
    p.metrics.iter().any(|m| m.name == cpu).then(|| Key {
        metric: cpu.to_string(),
        label: format!("target cost per {}", super::cost::noun(p.headline.as_deref().unwrap_or(""))),
        part: None,
        show: Show::Value,
        headline: false,
    })
}

/// The cost cell says its three figures, each with its Δ % (`report/cost.rs`); its value, Δ % and
/// verdict stay the CPU µs'.
fn cost_cell(cell: &mut AnswerCell, p: &PointReport, base: Option<&PointReport>) {
    cell.text = super::cost::cell_text(p, base);
    cell.unit = String::new();
    cell.text_compares = true;
}

/// `p99` for a key figure `latency_p99_ms` when the point has the histogram `latency`.
fn merged_for(p: &PointReport, pattern: &str) -> Option<String> {
    let (hist, rest) = pattern.rsplit_once("_p")?;
    let q = rest.strip_suffix("_ms")?;
    (q.chars().all(|c| c.is_ascii_digit()) && percentile_key(&format!("p{q}")).is_some() && p.latency.iter().any(|l| l.histogram == hist))
        .then(|| format!("p{q}"))
}

/// What a figure of the point is called: its key figure's label, or for a percentile key (`p99`)
/// the label of the metric it is read from ("p99 request time"), or "p99 of <metric>".
fn label_of(p: &PointReport, name: &str) -> (String, Option<String>) {
    let table = figures::of(&p.workload);
    if let Some((_, label, part)) = table.and_then(|t| t.key_for(name)) {
        return (label.to_string(), part);
    }
    if let Some(q) = percentile_key(name) {
        let source = p
            .latency
            .iter()
            .find(|l| l.histogram == "latency")
            .or(p.latency.first())
            .and_then(|h| {
                p.merged_instead
                    .iter()
                    .find(|m| m.starts_with(&format!("{}_", h.histogram)) && quantile(m) == Some(q))
            })
            .or_else(|| printed_for(p, q).map(|r| &r.name));
        if let Some(src) = source {
            if let Some((_, label, _)) = table.and_then(|t| t.key_for(src)) {
                return (label.to_string(), None);
            }
            return (format!("{name} of {}", base_name(src)), None);
        }
        if let Some(h) = p.latency.iter().find(|l| l.histogram == "latency").or(p.latency.first()) {
            return (format!("{name} of {}", h.histogram), None);
        }
    }
    (name.to_string(), None)
}

/// `latency` of `latency_p99_ms`: the name without its percentile and unit.
fn base_name(metric: &str) -> String {
    let parts: Vec<&str> = metric.split('_').collect();
    let keep: Vec<&str> = parts
        .iter()
        .copied()
        .take_while(|w| !(w.starts_with('p') && w[1..].chars().all(|c| c.is_ascii_digit()) && w.len() > 1))
        .collect();
    if keep.is_empty() {
        metric.to_string()
    } else {
        keep.join("_")
    }
}

fn quantile(name: &str) -> Option<f64> {
    MetricKind::infer(name, "ms").quantile()
}

/// The quantile of a `pNN` key.
fn percentile_key(key: &str) -> Option<f64> {
    key.strip_prefix('p')
        .and_then(|n| n.parse::<f64>().ok())
        .filter(|n| *n > 0.0 && *n <= 100.0)
        .map(|n| n / 100.0)
}

/// "18/18" for a count of tests passed; None for a plain value.
fn shown_text(key: &Key, group: &[&Loaded]) -> Option<String> {
    let ok: Vec<&Loaded> = group.iter().copied().filter(|l| l.trial.ok()).collect();
    let pairs: Vec<(f64, f64)> = match key.show {
        Show::PassedOfSum(failed) => ok
            .iter()
            .filter_map(|l| Some((l.trial.metric(&key.metric)?, l.trial.metric(&key.metric)? + l.trial.metric(failed)?)))
            .collect(),
        Show::PassedOfRun(failed) => ok
            .iter()
            .filter_map(|l| {
                let run = l.trial.metric(&key.metric)?;
                Some((run - l.trial.metric(failed).unwrap_or(0.0), run))
            })
            .collect(),
        _ => return None,
    };
    let first = *pairs.first()?;
    if pairs.iter().all(|p| *p == first) {
        return Some(format!("{}/{}", first.0, first.1));
    }
    let (a, b) = pairs.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    Some(format!("{a}/{b} over {} trials", pairs.len()))
}

fn cell(key: &Key, variant: &str, at: &str, dims: Vec<String>, f: Figure, before: Option<Figure>) -> AnswerCell {
    let mut c = AnswerCell {
        metric: key.metric.clone(),
        label: key.label.clone(),
        part: key.part.clone(),
        figure: String::new(),
        headline: key.headline,
        text: None,
        row: String::new(),
        point: String::new(),
        dims,
        unit: f.unit.clone(),
        variant: safe(variant),
        at: safe(at),
        x: None,
        value: f.value,
        sd: f.sd,
        ci95: f.ci95,
        before: None,
        delta_pct: None,
        ci95_pct: None,
        verdict: None,
        flag: None,
        text_compares: false,
        n: f.trials.len(),
    };
    if let Some(b) = before {
        c.before = Some(b.value);
        c.delta_pct = (b.value != 0.0 && b.value.is_finite()).then(|| 100.0 * (f.value - b.value) / b.value.abs());
        if !b.trials.is_empty() && !f.trials.is_empty() {
            let r = compare(&b.trials, &f.trials, f.better);
            c.ci95_pct = r.ci95_low_pct.zip(r.ci95_high_pct);
            c.verdict = Some(r.verdict);
        }
    }
    c
}

/// The figure as the table names it ("vm bogo-ops/s", or "bogo-ops/s" along a swept stressor).
pub fn row_label(c: &AnswerCell) -> String {
    c.figure.clone()
}

/// The anchor of a cell's row: per figure, variant and dimensions (`by_x`), or per point.
fn row_anchor(layout: &str, c: &AnswerCell, point: &str) -> String {
    if layout == "by_x" {
        slug(&format!("answer {} {} {}", row_label(c), c.variant, c.dims.join(" ")))
    } else {
        slug(&format!("answer {point}"))
    }
}

/// Rows whose anchors collide (labels that differ only by punctuation) get a numeric suffix.
fn unique_rows(cells: &mut [AnswerCell], layout: &str) {
    let mut seen: Vec<(String, String)> = Vec::new();
    for c in cells.iter_mut() {
        let identity = if layout == "by_x" {
            format!("{}\u{1}{}\u{1}{}", row_label(c), c.variant, c.at)
        } else {
            c.point.clone()
        };
        if let Some((_, id)) = seen.iter().find(|(i, _)| *i == identity) {
            c.row = id.clone();
            continue;
        }
        let mut id = c.row.clone();
        let mut n = 2;
        while seen.iter().any(|(_, other)| *other == id) {
            id = format!("{}-{n}", c.row);
            n += 1;
        }
        c.row = id.clone();
        seen.push((identity, id));
    }
}

/// An anchor: lowercase letters and digits, the rest as single dashes.
pub fn slug(text: &str) -> String {
    let mut s = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    s.trim_end_matches('-').to_string()
}

/// A figure of the point: a metric by name (mean over the repetitions), a percentile the point
/// merged from its histograms (`latency_p99_ms` beside `latency`, or `p99`), or one a tool printed
/// (the median of the per-trial values).
pub fn figure(p: &PointReport, group: &[&Loaded], key: &str) -> Option<Figure> {
    let trials = |name: &str| -> Vec<f64> { group.iter().filter(|l| l.trial.ok()).filter_map(|l| l.trial.metric(name)).collect() };
    if let Some(m) = p.metrics.iter().find(|m| m.name == key) {
        return Some(Figure {
            value: m.summary.mean,
            sd: Some(m.summary.sd),
            ci95: m.summary.ci95,
            unit: m.unit.clone(),
            better: m.better,
            trials: trials(key),
        });
    }
    if let Some(r) = p.printed_percentiles.iter().find(|r| r.name == key) {
        return Some(Figure {
            value: r.median,
            sd: None,
            ci95: None,
            unit: r.unit.clone(),
            better: r.better,
            trials: trials(key),
        });
    }
    if p.merged_instead.iter().any(|m| m == key) {
        let q = quantile(key)?;
        let h = p.latency.iter().find(|h| key.starts_with(&format!("{}_", h.histogram)))?;
        let v = merged(h, q)?;
        return Some(Figure {
            value: v,
            sd: None,
            ci95: None,
            unit: "ms".into(),
            better: Better::Lower,
            trials: trials(key),
        });
    }
    let q = percentile_key(key)?;
    let hist = p.latency.iter().find(|l| l.histogram == "latency").or(p.latency.first());
    // The per-trial figure of that quantile (`latency_p99_ms`), for the test.
    let per_trial = group
        .iter()
        .flat_map(|l| &l.trial.metrics)
        .find(|m| MetricKind::infer(&m.name, &m.unit).quantile() == Some(q) && m.name.contains("lat"))
        .map(|m| m.name.clone());
    if let Some(v) = hist.and_then(|h| merged(h, q)) {
        return Some(Figure {
            value: v,
            sd: None,
            ci95: None,
            unit: "ms".into(),
            better: Better::Lower,
            trials: per_trial.as_deref().map(trials).unwrap_or_default(),
        });
    }
    let r = printed_for(p, q)?;
    Some(Figure {
        value: r.median,
        sd: None,
        ci95: None,
        unit: r.unit.clone(),
        better: r.better,
        trials: trials(&r.name),
    })
}

/// The printed percentile q of a point, the request's or transaction's own first (`latency_p50_ms`
/// before ab's `connect_median_ms`).
fn printed_for(p: &PointReport, q: f64) -> Option<&super::model::PrintedPercentile> {
    let rank = |n: &str| {
        if n.starts_with("latency") {
            0
        } else if n.starts_with("total") {
            1
        } else {
            2
        }
    };
    p.printed_percentiles
        .iter()
        .filter(|r| (r.quantile - q).abs() < 1e-9)
        .min_by_key(|r| rank(&r.name))
}

/// The percentile q of a merged histogram's row, ms.
fn merged(h: &super::model::PercentileRow, q: f64) -> Option<f64> {
    h.percentiles
        .iter()
        .find(|(n, _)| percentile_key(n).is_some_and(|v| (v - q).abs() < 1e-9))
        .map(|(_, v)| *v)
}
