//! The latency probes' charts (SVG via plotters): per point and probe, its round trips over the
//! first trial with the phases shaded (a loss drawn as a red cross at the top), and the CDF of its
//! round trips per phase on a log time axis.

use super::loaded::safe;
use super::probes::ProbeReport;
use plotters::prelude::*;

/// How many probes get charts at most (two each), so the report stays bounded.
pub const MAX_PROBE_CHARTS: usize = 24;

const FONT: &str = "sans-serif";

fn e<E: std::fmt::Debug>(err: E) -> anyhow::Error {
    anyhow::anyhow!("cannot draw chart: {err:?}")
}

fn phase_color(name: &str) -> RGBColor {
    match name {
        "load" => RGBColor(230, 120, 0),
        "warmup" => RGBColor(200, 170, 0),
        "recovery" => RGBColor(44, 160, 44),
        _ => RGBColor(31, 119, 180),
    }
}

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
        .chain(p.timeline_phases.iter().flat_map(|x| [x.1, x.2]));
    let (x0, x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
    let (x0, x1) = if x0.is_finite() && x1 > x0 { (x0, x1) } else { (0.0, 1.0) };
    let hi = p.timeline.iter().filter_map(|t| t.1).fold(0.0, f64::max).max(0.001) * 1.15;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (900, 360)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{} over the first trial", title(p)), (FONT, 16))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .build_cartesian_2d(x0..x1, 0.0..hi)
            .map_err(e)?;
        chart
            .configure_mesh()
            .max_light_lines(0)
            .x_desc("seconds since trial start")
            .y_desc("round trip (ms)")
            .draw()
            .map_err(e)?;
        for (name, a, b) in &p.timeline_phases {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(*a, 0.0), (*b, hi)],
                    phase_color(name).mix(0.1).filled(),
                )))
                .map_err(e)?;
            chart
                .draw_series(std::iter::once(Text::new(
                    name.clone(),
                    (*a, hi),
                    (FONT, 11).into_font().color(&RGBColor(90, 90, 90)),
                )))
                .map_err(e)?;
        }
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
    Ok(buf)
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
        let root = SVGBackend::with_string(&mut buf, (900, 360)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{}: CDF per phase (log time axis)", title(p)), (FONT, 16))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .build_cartesian_2d((lo..hi).log_scale(), 0.0..1.0)
            .map_err(e)?;
        chart
            .configure_mesh()
            .max_light_lines(0)
            .x_desc("round trip (ms, log scale)")
            .y_desc("fraction of replies ≤ x")
            .draw()
            .map_err(e)?;
        for (phase, v) in p.rtts.iter().filter(|(_, v)| !v.is_empty()) {
            let c = phase_color(phase);
            let n = v.len() as f64;
            let pts: Vec<(f64, f64)> = v.iter().enumerate().map(|(i, x)| (x.max(lo), (i + 1) as f64 / n)).collect();
            chart
                .draw_series(LineSeries::new(pts, c.stroke_width(2)))
                .map_err(e)?
                .label(phase.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
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
