//! The latency probes' charts (SVG via plotters): per point and probe, its round trips over the
//! first trial with the phases shaded (a loss drawn as a red cross at the top), and the CDF of its
//! round trips per phase on a log time axis.

use super::chart_kit::{e, phase_color, phase_legend, tick, time_chart, with_caption, with_legend, LegendEntry, Stroke, FONT, WIDTH};
use super::loaded::safe;
use super::probes::ProbeReport;
use plotters::prelude::*;

/// How many probes get charts at most (two each), so the report stays bounded.
pub const MAX_PROBE_CHARTS: usize = 24;

/// The file names are `probe_<i>_time.svg` and `probe_<i>_cdf.svg`, `i` the report's index.
pub fn render(probes: &[ProbeReport]) -> anyhow::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (i, p) in probes.iter().take(MAX_PROBE_CHARTS).enumerate() {
        if p.timeline.is_empty() {
            continue;
        }
        out.push((format!("probe_{i:02}_time.svg"), timeline(p)?));
        if p.rtts.iter().any(|(_, v)| !v.is_empty()) {
            out.push((format!("probe_{i:02}_cdf.svg"), cdf(p)?));
        }
    }
    Ok(out)
}

fn title(p: &ProbeReport) -> String {
    let at = if p.point.is_empty() {
        String::new()
    } else {
        format!(" at {}", p.point)
    };
    safe(&format!("probe {} ({} {}){at}", p.probe, p.kind, p.target))
}

fn timeline(p: &ProbeReport) -> anyhow::Result<String> {
    let xs = p
        .timeline
        .iter()
        .map(|t| t.0)
        .chain(p.timeline_phases.iter().flat_map(|x| [x.start_s, x.end_s]));
    let (x0, x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
    let (x0, x1) = if x0.is_finite() && x1 > x0 { (x0, x1) } else { (0.0, 1.0) };
    let hi = p.timeline.iter().filter_map(|t| t.1).fold(0.0, f64::max).max(0.001) * 1.15;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, 380)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let root = root.titled(&format!("{} over the first trial", title(p)), (FONT, 16)).map_err(e)?;
        let mut entries = vec![
            LegendEntry::new("round trip", RGBColor(31, 119, 180), Stroke::Dot),
            LegendEntry::new("lost (drawn at the top)", RED, Stroke::Solid),
        ];
        entries.extend(phase_legend(&p.timeline_phases));
        let plot = with_legend(&root, None, &entries)?;
        let mut chart = time_chart(&plot, 10, x0..x1, hi, "round trip (ms)", &p.timeline_phases)?;
        let c = RGBColor(31, 119, 180);
        chart
            .draw_series(
                p.timeline
                    .iter()
                    .filter_map(|(t, v)| v.map(|v| Circle::new((*t, v), 2, c.filled()))),
            )
            .map_err(e)?;
        chart
            .draw_series(
                p.timeline
                    .iter()
                    .filter(|(_, v)| v.is_none())
                    .map(|(t, _)| Cross::new((*t, hi * 0.97), 4, RED.stroke_width(2))),
            )
            .map_err(e)?;
        root.present().map_err(e)?;
    }
    let caption = format!(
        "Every round trip of {} over the first trial at its point, the phases shaded; a lost probe is a red cross at the top.",
        title(p)
    );
    Ok(with_caption(buf, &caption))
}

fn cdf(p: &ProbeReport) -> anyhow::Result<String> {
    let all = p.rtts.iter().flat_map(|(_, v)| v.iter().copied()).filter(|v| *v > 0.0);
    let (lo, hi) = all.fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let (lo, hi) = if lo.is_finite() && hi > lo {
        (lo * 0.8, hi * 1.25)
    } else {
        (0.001, 1000.0)
    };
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, 380)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let root = root.titled(&format!("{}: CDF per phase", title(p)), (FONT, 16)).map_err(e)?;
        let entries: Vec<LegendEntry> = p
            .rtts
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(phase, _)| LegendEntry::new(phase.as_str(), phase_color(phase), Stroke::Solid))
            .collect();
        let plot = with_legend(&root, Some("phase"), &entries)?;
        let mut chart = ChartBuilder::on(&plot)
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .build_cartesian_2d((lo..hi).log_scale(), 0.0..1.0)
            .map_err(e)?;
        let tk = |v: &f64| tick(*v);
        chart
            .configure_mesh()
            .max_light_lines(0)
            .x_label_formatter(&tk)
            .y_label_formatter(&tk)
            .x_desc("round trip (ms, log scale)")
            .y_desc("fraction of replies ≤ x")
            .draw()
            .map_err(e)?;
        for (phase, v) in p.rtts.iter().filter(|(_, v)| !v.is_empty()) {
            let c = phase_color(phase);
            let n = v.len() as f64;
            let pts: Vec<(f64, f64)> = v.iter().enumerate().map(|(i, x)| (x.max(lo), (i + 1) as f64 / n)).collect();
            chart.draw_series(LineSeries::new(pts, c.stroke_width(2))).map_err(e)?;
        }
        root.present().map_err(e)?;
    }
    let caption = format!(
        "The fraction of {}'s round trips at or below each time, one line per phase, on a log time axis.",
        title(p)
    );
    Ok(with_caption(buf, &caption))
}
