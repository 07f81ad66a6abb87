//! SVG charts via plotters (SVG backend, no fonts needed): per-trial system time series with its
//! phases shaded and named, throughput and latency against the swept parameter, and latency spectra.

use super::loaded::{safe as redact, variant_of};
use super::model::{ReportModel, Scaling, TrialSeries};
use plotters::coord::Shift;
use plotters::prelude::*;

fn e<E: std::fmt::Debug>(err: E) -> anyhow::Error {
    anyhow::anyhow!("cannot draw chart: {err:?}")
}

const FONT: &str = "sans-serif";

fn color(i: usize) -> RGBColor {
    const C: [RGBColor; 10] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    C[i % C.len()]
}

fn range(vals: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in vals.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if hi - lo < 1e-9 {
        hi = lo + 1.0;
    }
    (lo, hi)
}

/// All charts as (file name, SVG text), in a stable order.
pub fn render(m: &ReportModel) -> anyhow::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (i, t) in m.charted.iter().enumerate() {
        if let Some(svg) = trial_chart(t)? {
            out.push((format!("trial_{i:02}.svg"), svg));
        }
    }
    if let Some(s) = &m.scaling {
        out.push(("throughput.svg".into(), throughput_chart(s)?));
        if s.rows.iter().any(|r| r.row.latency.is_some()) {
            out.push(("latency_vs_parameter.svg".into(), latency_chart(s)?));
        }
    }
    // One latency spectrum per variant, a line per point (swept value) of that variant.
    let mut variants: Vec<String> = Vec::new();
    for p in m.points.iter().filter(|p| !p.latency.is_empty()) {
        let v = variant_of(&p.params, &m.variant_parameters);
        if !variants.contains(&v) {
            variants.push(v);
        }
    }
    for (i, v) in variants.iter().enumerate() {
        out.push((format!("latency_spectrum_{i:02}.svg"), spectrum_chart(m, v)?));
    }
    out.extend(super::probe_charts::render(&m.probes)?);
    Ok(out)
}

type Panel = (&'static str, fn(&str) -> bool);

const PANELS: [Panel; 4] = [
    ("CPU (%)", |n| {
        n == "cpu_busy_pct" || (n.starts_with("proc_") && n.ends_with("_cpu_pct"))
    }),
    ("memory (MB)", |n| n == "mem_used_mb" || n.ends_with("_rss_mb")),
    ("disk (%util, MB/s)", |n| n.starts_with("disk_")),
    ("network (Mbit/s)", |n| n.starts_with("net_")),
];

fn trial_chart(t: &TrialSeries) -> anyhow::Result<Option<String>> {
    let panels: Vec<&Panel> = PANELS.iter().filter(|(_, f)| t.series.keys().any(|k| f(k))).collect();
    if panels.is_empty() {
        return Ok(None);
    }
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (900, 40 + 220 * panels.len() as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let root = root.titled(&redact(&t.name), (FONT, 18)).map_err(e)?;
        let areas = root.split_evenly((panels.len(), 1));
        let (x0, x1) = range(
            t.series
                .values()
                .flatten()
                .map(|p| p.0)
                .chain(t.phases.iter().flat_map(|p| [p.1, p.2])),
        );
        for (area, (title, f)) in areas.iter().zip(panels) {
            panel(area, t, title, *f, x0, x1)?;
        }
        root.present().map_err(e)?;
    }
    Ok(Some(buf))
}

fn panel(area: &DrawingArea<SVGBackend, Shift>, t: &TrialSeries, title: &str, f: fn(&str) -> bool, x0: f64, x1: f64) -> anyhow::Result<()> {
    let series: Vec<(&String, &Vec<(f64, f64)>)> = t.series.iter().filter(|(k, _)| f(k)).collect();
    let (_, hi) = range(series.iter().flat_map(|(_, v)| v.iter().map(|p| p.1)));
    let hi = hi * 1.1;
    let mut chart = ChartBuilder::on(area)
        .margin(8)
        .x_label_area_size(32)
        .y_label_area_size(60)
        .build_cartesian_2d(x0..x1, 0.0..hi)
        .map_err(e)?;
    chart
        .configure_mesh()
        .max_light_lines(0)
        .x_desc("seconds since trial start")
        .y_desc(title)
        .draw()
        .map_err(e)?;
    for (name, a, b) in &t.phases {
        let c = match name.as_str() {
            "load" => RGBColor(255, 165, 0).mix(0.15),
            "warmup" => RGBColor(255, 215, 0).mix(0.12),
            "recovery" => RGBColor(60, 179, 113).mix(0.12),
            _ => RGBColor(135, 206, 235).mix(0.12),
        };
        chart
            .draw_series(std::iter::once(Rectangle::new([(*a, 0.0), (*b, hi)], c.filled())))
            .map_err(e)?;
        // The phase's name at the top of its band, so the shading explains itself.
        chart
            .draw_series(std::iter::once(Text::new(
                name.clone(),
                (*a, hi),
                (FONT, 11).into_font().color(&RGBColor(90, 90, 90)),
            )))
            .map_err(e)?;
    }
    for (i, (name, pts)) in series.iter().enumerate() {
        let c = color(i);
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
            .map_err(e)?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(e)?;
    Ok(())
}

fn throughput_chart(s: &Scaling) -> anyhow::Result<String> {
    let (x0, x1) = range(s.rows.iter().map(|r| r.row.x));
    let (_, hi) = range(s.rows.iter().map(|r| r.row.throughput + r.row.ci95.unwrap_or(0.0)));
    let variants = variants(s);
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (900, 450)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let pad = (x1 - x0) * 0.05;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{} vs {} (error bars: 95 % CI)", s.throughput_metric, redact(&s.parameter)),
                (FONT, 18),
            )
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((x0 - pad)..(x1 + pad), 0.0..hi * 1.1)
            .map_err(e)?;
        chart
            .configure_mesh()
            .max_light_lines(0)
            .x_desc(redact(&s.parameter))
            .y_desc(format!("{} ({})", s.throughput_metric, redact(&s.unit)))
            .draw()
            .map_err(e)?;
        for (i, v) in variants.iter().enumerate() {
            let c = color(i);
            let rows: Vec<_> = s.rows.iter().filter(|r| &r.variant == v).collect();
            chart
                .draw_series(LineSeries::new(rows.iter().map(|r| (r.row.x, r.row.throughput)), c.stroke_width(2)))
                .map_err(e)?
                .label(v.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
            chart
                .draw_series(rows.iter().map(|r| {
                    let h = r.row.ci95.unwrap_or(0.0);
                    ErrorBar::new_vertical(r.row.x, r.row.throughput - h, r.row.throughput, r.row.throughput + h, c.filled(), 8)
                }))
                .map_err(e)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(e)?;
        root.present().map_err(e)?;
    }
    Ok(buf)
}

fn variants(s: &Scaling) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for r in &s.rows {
        if !v.contains(&r.variant) {
            v.push(r.variant.clone());
        }
    }
    v
}

fn latency_chart(s: &Scaling) -> anyhow::Result<String> {
    let (x0, x1) = range(s.rows.iter().map(|r| r.row.x));
    let (_, hi) = range(s.rows.iter().flat_map(|r| [r.row.latency, r.p99_ms]).flatten());
    let variants = variants(s);
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (900, 450)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let pad = (x1 - x0) * 0.05;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("latency p50 (solid) and p99 (dashed) vs {}", redact(&s.parameter)),
                (FONT, 18),
            )
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((x0 - pad)..(x1 + pad), 0.0..hi * 1.1)
            .map_err(e)?;
        chart
            .configure_mesh()
            .max_light_lines(0)
            .x_desc(redact(&s.parameter))
            .y_desc("latency (ms)")
            .draw()
            .map_err(e)?;
        for (i, v) in variants.iter().enumerate() {
            let c = color(i);
            let rows: Vec<_> = s.rows.iter().filter(|r| &r.variant == v).collect();
            chart
                .draw_series(LineSeries::new(
                    rows.iter().filter_map(|r| r.row.latency.map(|y| (r.row.x, y))),
                    c.stroke_width(2),
                ))
                .map_err(e)?
                .label(format!("{v} p50"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
            let p99: Vec<(f64, f64)> = rows.iter().filter_map(|r| r.p99_ms.map(|y| (r.row.x, y))).collect();
            if !p99.is_empty() {
                chart
                    .draw_series(DashedLineSeries::new(p99, 6, 4, c.stroke_width(2)))
                    .map_err(e)?
                    .label(format!("{v} p99"))
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(1)));
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(e)?;
        root.present().map_err(e)?;
    }
    Ok(buf)
}

/// Latency spectrum per point: x = 1/(1-q) on a log axis (HdrHistogram style), y = latency in ms.
fn spectrum_chart(m: &ReportModel, variant: &str) -> anyhow::Result<String> {
    // (label, [(1/(1-q), ms)]) from the merged histograms, only as far as the count supports.
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for p in m.points.iter().filter(|p| variant_of(&p.params, &m.variant_parameters) == variant) {
        let Some(l) = p.latency.iter().find(|l| l.histogram == "latency").or(p.latency.first()) else {
            continue;
        };
        let pts = l.spectrum.clone();
        lines.push((redact(&p.label), pts));
    }
    let (_, xmax) = range(lines.iter().flat_map(|(_, v)| v.iter().map(|p| p.0)));
    let (_, ymax) = range(lines.iter().flat_map(|(_, v)| v.iter().map(|p| p.1)));
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (900, 450)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("latency by percentile, {variant} (x: 1/(1-q), log scale)"), (FONT, 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((1.0..xmax.max(10.0) * 1.5).log_scale(), 0.0..ymax * 1.1)
            .map_err(e)?;
        chart
            .configure_mesh()
            .max_light_lines(0)
            .x_desc("1/(1-q): 2 = p50, 10 = p90, 100 = p99, 1000 = p99.9 (last point: max)")
            .y_desc("latency (ms)")
            .draw()
            .map_err(e)?;
        for (i, (label, pts)) in lines.iter().enumerate() {
            let c = color(i);
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
                .map_err(e)?
                .label(label.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(e)?;
        root.present().map_err(e)?;
    }
    Ok(buf)
}
