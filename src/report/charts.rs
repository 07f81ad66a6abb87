//! SVG charts via plotters (SVG backend, no fonts needed): per-trial system time series (the
//! median repetition of each point, one panel per unit, its phases shaded), the sweep charts of
//! `sweep_charts`, latency spectra, the probes' charts and the profiles' flame graphs (inferno's, `report/profiles.rs`). Every chart carries its caption.

use super::chart_kit::{color, e, phase_legend, range, tick, time_chart, with_caption, with_legend, LegendEntry, Stroke, FONT, WIDTH};
use super::loaded::{safe as redact, variant_of};
use super::model::{ReportModel, TrialSeries};
use plotters::coord::Shift;
use plotters::prelude::*;

/// All charts as (file name, SVG text), in a stable order. The trials' time series
/// (`m.charted`) are taken out of the model and each is dropped once drawn: nothing else reads
/// them (report.json leaves them out), and the report never holds them and their charts at once.
pub fn render(m: &mut ReportModel) -> anyhow::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (i, t) in std::mem::take(&mut m.charted).into_iter().enumerate() {
        if let Some(svg) = trial_chart(&t)? {
            out.push((format!("trial_{i:02}.svg"), svg));
        }
    }
    // The flame graphs (their chart names set in the model's profiles), drawn last.
    let flames = super::profiles::render(&mut m.profiles)?;
    let m = &*m;
    out.extend(super::sweep_charts::render(m)?);
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
    out.extend(flames);
    Ok(out)
}

/// A panel of the trial chart: its y axis (one unit) and which metrics it draws.
type Panel = (&'static str, fn(&str) -> bool);

const PANELS: [Panel; 6] = [
    ("machine CPU busy (% of all CPUs)", |n| n == "cpu_busy_pct"),
    ("process CPU (% of one core)", |n| n.starts_with("proc_") && n.ends_with("_cpu_pct")),
    ("memory (MB)", |n| n == "mem_used_mb" || n.ends_with("_rss_mb")),
    ("disk throughput (MB/s)", |n| n.starts_with("disk_") && n.ends_with("_mbps")),
    ("disk utilization (%util)", |n| n.starts_with("disk_") && n.ends_with("_util_pct")),
    ("network (Mbit/s)", |n| n.starts_with("net_") && n.ends_with("_mbitps")),
];

/// The series a panel draws: its metrics that carried something (an idle disk or interface is
/// left out, as in the system table).
fn panel_series(t: &TrialSeries, f: fn(&str) -> bool) -> Vec<(&String, &Vec<(f64, f64)>)> {
    t.series
        .iter()
        .filter(|(k, v)| f(k) && v.iter().any(|p| p.1.abs() > 1e-9))
        .collect()
}

fn trial_chart(t: &TrialSeries) -> anyhow::Result<Option<String>> {
    let panels: Vec<&Panel> = PANELS.iter().filter(|(_, f)| !panel_series(t, *f).is_empty()).collect();
    if panels.is_empty() {
        return Ok(None);
    }
    // The legend: each metric once (the colour follows the metric through the panels), then the phases.
    let mut names: Vec<&String> = Vec::new();
    for (_, f) in &panels {
        names.extend(panel_series(t, *f).into_iter().map(|(k, _)| k));
    }
    let mut entries: Vec<LegendEntry> = names
        .iter()
        .enumerate()
        .map(|(i, n)| LegendEntry::new(n.as_str(), color(i), Stroke::Solid))
        .collect();
    entries.extend(phase_legend(&t.phases));
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, 50 + 210 * panels.len() as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let root = root.titled(&redact(&t.name), (FONT, 18)).map_err(e)?;
        let plot = with_legend(&root, None, &entries)?;
        let areas = plot.split_evenly((panels.len(), 1));
        let (x0, x1) = range(
            t.series
                .values()
                .flatten()
                .map(|p| p.0)
                .chain(t.phases.iter().flat_map(|p| [p.start_s, p.end_s])),
        );
        for (area, (title, f)) in areas.iter().zip(panels) {
            let series: Vec<(usize, &Vec<(f64, f64)>)> = panel_series(t, *f)
                .into_iter()
                .map(|(k, v)| (names.iter().position(|n| *n == k).unwrap_or(0), v))
                .collect();
            panel(area, t, title, &series, x0, x1)?;
        }
        root.present().map_err(e)?;
    }
    let panels: Vec<&str> = PANELS
        .iter()
        .filter(|(_, f)| !panel_series(t, *f).is_empty())
        .map(|(title, _)| *title)
        .collect();
    let caption = format!(
        "System metrics over {} (the point's median repetition), one panel per unit: {}; the bands are its phases; disks and interfaces that carried nothing are left out.",
        t.name,
        panels.join(", ")
    );
    Ok(Some(with_caption(buf, &redact(&caption))))
}

fn panel(
    area: &DrawingArea<SVGBackend, Shift>,
    t: &TrialSeries,
    title: &str,
    series: &[(usize, &Vec<(f64, f64)>)],
    x0: f64,
    x1: f64,
) -> anyhow::Result<()> {
    let (_, hi) = range(series.iter().flat_map(|(_, v)| v.iter().map(|p| p.1)));
    let hi = hi * 1.1;
    let mut chart = time_chart(area, 8, x0..x1, hi, title, &t.phases)?;
    for (i, pts) in series {
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color(*i).stroke_width(2)))
            .map_err(e)?;
    }
    Ok(())
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
    let entries: Vec<LegendEntry> = lines
        .iter()
        .enumerate()
        .map(|(i, (label, _))| LegendEntry::new(short_label(label, variant), color(i), Stroke::Solid))
        .collect();
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, 450)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let root = root.titled(&format!("latency by percentile, {variant}"), (FONT, 18)).map_err(e)?;
        let plot = with_legend(&root, Some("point"), &entries)?;
        let mut chart = ChartBuilder::on(&plot)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((1.0..xmax.max(10.0) * 1.5).log_scale(), 0.0..ymax * 1.1)
            .map_err(e)?;
        let tk = |v: &f64| tick(*v);
        chart
            .configure_mesh()
            .max_light_lines(0)
            .x_label_formatter(&tk)
            .y_label_formatter(&tk)
            .x_desc("1/(1-q), log scale: 2 = p50, 10 = p90, 100 = p99, 1000 = p99.9")
            .y_desc("latency (ms)")
            .draw()
            .map_err(e)?;
        for (i, (_, pts)) in lines.iter().enumerate() {
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), color(i).stroke_width(2)))
                .map_err(e)?;
        }
        root.present().map_err(e)?;
    }
    let caption = format!(
        "Latency at every percentile of the merged histogram of each point of {variant}, up to the last percentile its count supports (the last point of a line is the maximum)."
    );
    Ok(with_caption(buf, &redact(&caption)))
}

/// A point's label without the parts its chart's variant already says.
fn short_label(label: &str, variant: &str) -> String {
    let parts: Vec<&str> = label.split(' ').filter(|p| !variant.split(' ').any(|v| v == *p)).collect();
    if parts.is_empty() {
        label.to_string()
    } else {
        parts.join(" ")
    }
}
