//! The summary's figures against the x parameter, drawn from the summary's own cells (so a chart
//! shows the numbers of the table above it): one chart per primary metric (`[report] metrics`, or
//! the throughput), the percentiles together in one latency chart (the first solid, the others
//! dashed). A line per value of the compared parameter; when the other parameters' groups (a 37 B
//! and a 10 MB document) differ by an order of magnitude or more, each group gets its own panel
//! with its own y axis. The x axis is linear for evenly spaced numbers, log with `x_scale = "log"`,
//! else one slot per value; a text x parameter gets bars.

use super::answer::row_label;
use super::chart_kit::{color, e, tick, with_caption, with_legend, LegendEntry, Stroke, XAxis, XKind, XValue, FONT, WIDTH};
use super::loaded::safe;
use super::model::{AnswerCell, ReportModel};
use plotters::prelude::*;

/// Groups whose largest values differ by this factor or more get a panel each.
pub const PANEL_RATIO: f64 = 10.0;

/// A point of a line: its x, value and the half-width of its 95 % CI.
type Pt = (XValue, f64, Option<f64>);

/// One line (or bar series) of a panel.
struct Series {
    label: String,
    /// Index into the palette: the same compared value has the same colour in every panel.
    color: usize,
    stroke: Stroke,
    pts: Vec<Pt>,
}

/// A cell's 95 % CI where the tables show one (from 3 repetitions, no wider than the value): a
/// band or an error bar drawn from 2 values would be the t-distribution's 12.7 standard errors,
/// dwarfing the line, where the table says "–".
fn drawn_ci(c: &AnswerCell) -> Option<f64> {
    super::fmt::ci_shown(c.value, c.ci95, c.n).ok()
}

struct Panel {
    title: String,
    series: Vec<Series>,
}

/// Is this summary key a percentile (`p50`, `p99.9`)?
pub fn is_percentile(key: &str) -> bool {
    key.strip_prefix('p')
        .is_some_and(|n| n.parse::<f64>().is_ok_and(|q| q > 0.0 && q <= 100.0))
}

/// The sweep charts as (file name, SVG): `answer.svg` (the headline against x, or per point),
/// `throughput.svg` for the first non-percentile figure, `metric_<name>.svg` for the others,
/// `latency_vs_parameter.svg` for the percentiles. The figures charted against x are the plan's
/// `[report] metrics`, else the headline and the percentiles.
pub fn render(m: &ReportModel) -> anyhow::Result<Vec<(String, String)>> {
    let o = &m.overview;
    let mut out: Vec<(String, String)> = answer_chart(m)?.into_iter().collect();
    let Some(x) = o.x.as_deref() else {
        return Ok(out);
    };
    if !o.answer.iter().any(|c| c.x.is_some()) {
        return Ok(out);
    }
    let asked = !m.spec.metrics.is_empty();
    let charted: Vec<&AnswerCell> = o
        .answer
        .iter()
        .filter(|c| !c.text_compares && (asked || c.headline || is_percentile_cell(c)))
        .collect();
    let mut keys: Vec<String> = Vec::new();
    for c in &charted {
        let k = row_label(c);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let is_pct = |k: &str| charted.iter().any(|c| row_label(c) == k && is_percentile_cell(c));
    let values: Vec<XValue> = o.answer.iter().filter_map(|c| c.x.as_deref().map(xvalue)).collect();
    let axis = XAxis::new(&values, m.spec.x_scale.as_deref());
    let compare = o.compare.as_deref();
    let mut first = true;
    for key in keys.iter().filter(|k| !is_pct(k)) {
        let cells: Vec<&AnswerCell> = charted.iter().copied().filter(|c| row_label(c) == *key).collect();
        let name = if first {
            "throughput.svg".to_string()
        } else {
            format!("metric_{}.svg", file_part(key))
        };
        first = false;
        let unit = cells.first().map(|c| c.unit.clone()).unwrap_or_default();
        let panels = panels(&cells, &[(key, Stroke::Solid)], compare);
        let title = format!("{key} vs {x}");
        let caption = format!(
            "{key} ({unit}) of each {} at every {x}{}: the mean over the repetitions, the band its 95 % CI where 3 or more repetitions give one{}.",
            compare.unwrap_or("point"),
            axis.note(),
            split_note(&panels),
        );
        let svg = draw(
            &title,
            &format!("{key} ({unit})"),
            &format!("{x}{}", axis.note()),
            &axis,
            &panels,
            compare,
        )?;
        out.push((name, with_caption(svg, &safe(&caption))));
    }
    let pct: Vec<&str> = keys.iter().map(String::as_str).filter(|k| is_pct(k)).collect();
    if !pct.is_empty() {
        let cells: Vec<&AnswerCell> = charted.iter().copied().filter(|c| pct.contains(&row_label(c).as_str())).collect();
        let styled: Vec<(&str, Stroke)> = pct
            .iter()
            .enumerate()
            .map(|(i, k)| (*k, if i == 0 { Stroke::Solid } else { Stroke::Dashed }))
            .collect();
        let unit = cells.first().map(|c| c.unit.clone()).unwrap_or_else(|| "ms".into());
        let panels = panels(&cells, &styled, compare);
        let names = pct.join(", ");
        let caption = format!(
            "Latency {names} ({unit}) of each {} at every {x}{}: the point's own percentile (of the merged histogram, or the median of what the tool printed); {} solid{}.",
            compare.unwrap_or("point"),
            axis.note(),
            pct[0],
            split_note(&panels),
        );
        let svg = draw(
            &format!("latency {names} vs {x}"),
            &format!("latency ({unit})"),
            &format!("{x}{}", axis.note()),
            &axis,
            &panels,
            compare,
        )?;
        out.push(("latency_vs_parameter.svg".into(), with_caption(svg, &safe(&caption))));
    }
    Ok(out)
}

/// Is the cell a percentile (`p99`, or a key figure labelled "p99 request time")?
fn is_percentile_cell(c: &AnswerCell) -> bool {
    is_percentile(&c.metric) || crate::report::observe::is_percentile_label(&c.label)
}

/// The answer's chart: the headline against x, a line per compared value and dimensions with its
/// 95 % CI as a band; without an x, a bar per point. One panel per unit.
fn answer_chart(m: &ReportModel) -> anyhow::Result<Option<(String, String)>> {
    let o = &m.overview;
    let heads: Vec<&AnswerCell> = o.answer.iter().filter(|c| c.headline).collect();
    if heads.is_empty() {
        return Ok(None);
    }
    let by_x = o.layout == "by_x";
    let xv = |c: &AnswerCell| -> XValue {
        if by_x {
            xvalue(c.x.as_deref().unwrap_or(""))
        } else if c.dims.is_empty() {
            xvalue(&c.point)
        } else {
            XValue {
                text: c.dims.join(" "),
                num: None,
            }
        }
    };
    let values: Vec<XValue> = heads.iter().map(|c| xv(c)).collect();
    let scale = if by_x { m.spec.x_scale.as_deref() } else { Some("category") };
    let axis = XAxis::new(&values, scale);
    let mut units: Vec<&str> = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    for c in &heads {
        if !units.contains(&c.unit.as_str()) {
            units.push(&c.unit);
        }
        if !labels.contains(&row_label(c)) {
            labels.push(row_label(c));
        }
    }
    let mut lines: Vec<(String, String, String)> = Vec::new();
    for c in &heads {
        let k = (c.variant.clone(), if by_x { c.at.clone() } else { String::new() }, row_label(c));
        if !lines.contains(&k) {
            lines.push(k);
        }
    }
    // A panel per unit, and per group of the other parameters when their scales differ by
    // PANEL_RATIO or more (a 37 B and a 10 MB document).
    let mut panels: Vec<Panel> = Vec::new();
    for u in &units {
        let series: Vec<(String, Series)> = lines
            .iter()
            .enumerate()
            .filter_map(|(i, (v, at, l))| {
                let pts: Vec<Pt> = heads
                    .iter()
                    .filter(|c| c.unit == *u && c.variant == *v && row_label(c) == *l && (!by_x || c.at == *at))
                    .map(|c| (xv(c), c.value, drawn_ci(c)))
                    .collect();
                let mut name: Vec<String> = Vec::new();
                if o.compare.is_some() {
                    name.push(v.clone());
                }
                if !at.is_empty() {
                    name.push(at.clone());
                }
                if labels.len() > 1 && by_x {
                    name.push(l.clone());
                }
                (!pts.is_empty()).then(|| {
                    let s = Series {
                        label: if name.is_empty() { labels.join(" / ") } else { name.join(", ") },
                        color: i,
                        stroke: Stroke::Solid,
                        pts,
                    };
                    (at.clone(), s)
                })
            })
            .collect();
        let top = |g: &str| {
            series
                .iter()
                .filter(|(a, _)| a == g)
                .flat_map(|(_, s)| s.pts.iter().map(|p| p.1 + p.2.unwrap_or(0.0)))
                .fold(0.0f64, f64::max)
        };
        let mut groups: Vec<&str> = Vec::new();
        for (a, _) in &series {
            if !groups.contains(&a.as_str()) {
                groups.push(a);
            }
        }
        let tops: Vec<f64> = groups.iter().map(|g| top(g)).filter(|t| *t > 0.0).collect();
        let (lo, hi) = (
            tops.iter().copied().fold(f64::INFINITY, f64::min),
            tops.iter().copied().fold(0.0, f64::max),
        );
        let unit_title = if units.len() > 1 { format!(" ({u})") } else { String::new() };
        if groups.len() > 1 && lo.is_finite() && hi / lo >= PANEL_RATIO {
            let groups: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
            let mut series = series;
            for g in groups {
                let (mine, rest): (Vec<_>, Vec<_>) = series.into_iter().partition(|(a, _)| *a == g);
                series = rest;
                panels.push(Panel {
                    title: format!("{g}{unit_title}"),
                    series: mine.into_iter().map(|(_, s)| s).collect(),
                });
            }
        } else if !series.is_empty() {
            panels.push(Panel {
                title: unit_title.trim().to_string(),
                series: series.into_iter().map(|(_, s)| s).collect(),
            });
        }
    }
    let what = labels.join(" / ");
    let unit = units.join(", ");
    let (x_desc, title, caption) = if by_x {
        let x = o.x.as_deref().unwrap_or("x");
        (
            format!("{x}{}", axis.note()),
            format!("{what} vs {x}"),
            format!(
                "The answer's headline, {what} ({unit}), of each {} at every {x}: the mean over the repetitions, the band its 95 % CI where 3 or more repetitions give one.",
                o.compare.as_deref().unwrap_or("line")
            ),
        )
    } else {
        let along = if o.dimensions.is_empty() {
            "point".to_string()
        } else {
            o.dimensions.join(" ")
        };
        (
            along.clone(),
            format!("{what} by {along}"),
            format!("The answer's headline, {what} ({unit}), at every {along}: the mean over the repetitions, the error bar its 95 % CI."),
        )
    };
    let y = if units.len() == 1 {
        format!("{what} ({unit})")
    } else {
        what.clone()
    };
    let svg = draw_sized(ANSWER_WIDTH, &title, &y, &x_desc, &axis, &panels, o.compare.as_deref())?;
    Ok(Some(("answer.svg".into(), with_caption(svg, &safe(&caption)))))
}

/// The answer chart's width: it sits beside its table.
const ANSWER_WIDTH: u32 = 640;

fn split_note(panels: &[Panel]) -> String {
    if panels.len() > 1 {
        let t: Vec<&str> = panels.iter().map(|p| p.title.as_str()).collect();
        format!("; one panel per {} (their scales differ by 10× or more)", t.join(" / "))
    } else {
        String::new()
    }
}

fn xvalue(text: &str) -> XValue {
    XValue {
        text: text.to_string(),
        num: text.parse::<f64>().ok().filter(|v| v.is_finite()),
    }
}

/// A metric name as part of a file name.
fn file_part(key: &str) -> String {
    key.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

/// The panels of one chart: a line per (compared value, key), grouped by the other parameters
/// (`at`) into panels when the groups' scales differ by [`PANEL_RATIO`] or more.
fn panels(cells: &[&AnswerCell], keys: &[(&str, Stroke)], compare: Option<&str>) -> Vec<Panel> {
    let mut groups: Vec<&str> = Vec::new();
    let mut variants: Vec<&str> = Vec::new();
    for c in cells {
        if !groups.contains(&c.at.as_str()) {
            groups.push(&c.at);
        }
        if !variants.contains(&c.variant.as_str()) {
            variants.push(&c.variant);
        }
    }
    let top = |g: &str| {
        cells
            .iter()
            .filter(|c| c.at == g)
            .map(|c| c.value + c.ci95.unwrap_or(0.0))
            .fold(0.0f64, f64::max)
    };
    let tops: Vec<f64> = groups.iter().map(|g| top(g)).filter(|t| *t > 0.0).collect();
    let (lo, hi) = (
        tops.iter().copied().fold(f64::INFINITY, f64::min),
        tops.iter().copied().fold(0.0, f64::max),
    );
    let split = groups.len() > 1 && lo.is_finite() && hi / lo >= PANEL_RATIO;
    let series = |group: Option<&str>| -> Vec<Series> {
        let mut out = Vec::new();
        let gs: Vec<&str> = group.map_or(groups.clone(), |g| vec![g]);
        for (gi, g) in gs.iter().enumerate() {
            for (vi, v) in variants.iter().enumerate() {
                for (key, stroke) in keys {
                    let pts: Vec<Pt> = cells
                        .iter()
                        .filter(|c| c.at == *g && c.variant == *v && row_label(c) == *key)
                        .filter_map(|c| c.x.as_deref().map(|x| (xvalue(x), c.value, drawn_ci(c))))
                        .collect();
                    if pts.is_empty() {
                        continue;
                    }
                    let mut label = if compare.is_some() || v != &"all" {
                        v.to_string()
                    } else {
                        String::new()
                    };
                    if group.is_none() && !g.is_empty() {
                        label = if label.is_empty() { g.to_string() } else { format!("{label}, {g}") };
                    }
                    if keys.len() > 1 {
                        label = if label.is_empty() {
                            key.to_string()
                        } else {
                            format!("{label} {key}")
                        };
                    }
                    let color = if group.is_none() { gi * variants.len() + vi } else { vi };
                    out.push(Series {
                        label: if label.is_empty() { "all".into() } else { label },
                        color,
                        stroke: *stroke,
                        pts,
                    });
                }
            }
        }
        out
    };
    if split {
        groups
            .iter()
            .map(|g| Panel {
                title: g.to_string(),
                series: series(Some(g)),
            })
            .collect()
    } else {
        vec![Panel {
            title: String::new(),
            series: series(None),
        }]
    }
}

/// One SVG: the title, a legend column for every series, the panels stacked.
fn draw(title: &str, y_desc: &str, x_desc: &str, axis: &XAxis, panels: &[Panel], compare: Option<&str>) -> anyhow::Result<String> {
    draw_sized(WIDTH, title, y_desc, x_desc, axis, panels, compare)
}

/// [`draw`] at a given width (the answer's chart, beside its table, is narrower).
fn draw_sized(
    width: u32,
    title: &str,
    y_desc: &str,
    x_desc: &str,
    axis: &XAxis,
    panels: &[Panel],
    compare: Option<&str>,
) -> anyhow::Result<String> {
    let bars = axis.kind == XKind::Categorical && axis.ticks.iter().any(|t| t.0.parse::<f64>().is_err());
    let mut entries: Vec<LegendEntry> = Vec::new();
    for s in panels.iter().flat_map(|p| &p.series) {
        if !entries.iter().any(|l| l.label == s.label) {
            let stroke = if bars { Stroke::Swatch } else { s.stroke };
            entries.push(LegendEntry::new(safe(&s.label), color(s.color), stroke));
        }
    }
    let height = 60 + (330 * width / WIDTH) * panels.len() as u32;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let root = root.titled(&safe(title), (FONT, 18)).map_err(e)?;
        let plot = with_legend(&root, compare.map(safe).as_deref(), &entries)?;
        let areas = plot.split_evenly((panels.len(), 1));
        for (area, p) in areas.iter().zip(panels) {
            draw_panel(area, p, axis, y_desc, x_desc, bars)?;
        }
        root.present().map_err(e)?;
    }
    Ok(buf)
}

fn draw_panel(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    p: &Panel,
    axis: &XAxis,
    y_desc: &str,
    x_desc: &str,
    bars: bool,
) -> anyhow::Result<()> {
    let hi = p
        .series
        .iter()
        .flat_map(|s| s.pts.iter().map(|(_, v, ci)| v + ci.unwrap_or(0.0)))
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let hi = if hi > 0.0 { hi * 1.1 } else { 1.0 };
    let mut b = ChartBuilder::on(area);
    b.margin(10).x_label_area_size(40).y_label_area_size(70);
    if !p.title.is_empty() {
        b.caption(safe(&p.title), (FONT, 14));
    }
    let mut chart = b.build_cartesian_2d(axis.coord(), 0.0..hi).map_err(e)?;
    let xl = |v: &f64| axis.label(*v);
    let yl = |v: &f64| tick(*v);
    chart
        .configure_mesh()
        .max_light_lines(0)
        .x_label_formatter(&xl)
        .y_label_formatter(&yl)
        .x_desc(safe(x_desc))
        .y_desc(safe(y_desc))
        .draw()
        .map_err(e)?;
    let n = p.series.len().max(1) as f64;
    for (k, s) in p.series.iter().enumerate() {
        let c = color(s.color);
        let mut pts: Vec<(f64, f64, Option<f64>)> = s.pts.iter().filter_map(|(x, v, ci)| axis.pos(x).map(|px| (px, *v, *ci))).collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        if bars {
            let w = 0.8 / n;
            let left = |px: f64| px - 0.4 + w * k as f64;
            chart
                .draw_series(
                    pts.iter()
                        .map(|(px, v, _)| Rectangle::new([(left(*px), 0.0), (left(*px) + w, *v)], c.filled())),
                )
                .map_err(e)?;
            chart
                .draw_series(pts.iter().filter(|p| p.2.is_some()).map(|(px, v, ci)| {
                    let h = ci.unwrap_or(0.0);
                    let mid = left(*px) + w / 2.0;
                    ErrorBar::new_vertical(mid, v - h, *v, v + h, BLACK.filled(), 6)
                }))
                .map_err(e)?;
            continue;
        }
        let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
        if pts.len() > 1 && pts.iter().all(|p| p.2.is_some()) {
            // The 95 % CI as a band around the line.
            let mut band: Vec<(f64, f64)> = pts.iter().map(|(x, v, ci)| (*x, v + ci.unwrap_or(0.0))).collect();
            band.extend(pts.iter().rev().map(|(x, v, ci)| (*x, (v - ci.unwrap_or(0.0)).max(0.0))));
            chart
                .draw_series(std::iter::once(Polygon::new(band, c.mix(0.18).filled())))
                .map_err(e)?;
        }
        match s.stroke {
            Stroke::Dashed => chart.draw_series(DashedLineSeries::new(line.clone(), 6, 4, c.stroke_width(2))),
            _ => chart.draw_series(LineSeries::new(line.clone(), c.stroke_width(2))),
        }
        .map_err(e)?;
        chart
            .draw_series(line.iter().map(|(x, y)| Circle::new((*x, *y), 3, c.filled())))
            .map_err(e)?;
        if pts.len() == 1 {
            // A single point has no band: its CI as an error bar.
            chart
                .draw_series(pts.iter().filter(|p| p.2.is_some()).map(|(px, v, ci)| {
                    let h = ci.unwrap_or(0.0);
                    ErrorBar::new_vertical(*px, v - h, *v, v + h, c.filled(), 8)
                }))
                .map_err(e)?;
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "sweep_charts_tests.rs"]
mod tests;
