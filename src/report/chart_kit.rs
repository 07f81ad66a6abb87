//! What every chart shares (the sweep charts, the trial time series, the probe charts): the
//! palette, tick labels without spurious decimals, the x axis a sweep asks for (linear, log or
//! categorical), a legend in its own column beside the plot (each entry drawn as the line it
//! names), the phase bands of a time series with labels only where they fit, and the caption every
//! chart carries as its SVG `<title>` (the Markdown and HTML reports print it next to the chart).

use crate::model::PhaseSpan;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::ops::Range;

/// The font family of every text; the SVG viewer picks the face, no font is embedded.
pub const FONT: &str = "sans-serif";
/// Width of the legend column right of a plot, px.
pub const LEGEND_W: u32 = 260;
/// Width of a chart, px.
pub const WIDTH: u32 = 960;

/// A plotters error as one line.
pub fn e<E: std::fmt::Debug>(err: E) -> anyhow::Error {
    anyhow::anyhow!("cannot draw chart: {err:?}")
}

/// The i-th colour of the palette (the ten of matplotlib's tab10).
pub fn color(i: usize) -> RGBColor {
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

/// The colour of a phase's band.
pub fn phase_color(name: &str) -> RGBColor {
    match name {
        "load" => RGBColor(230, 120, 0),
        "warmup" => RGBColor(200, 170, 0),
        "recovery" => RGBColor(44, 160, 44),
        _ => RGBColor(31, 119, 180),
    }
}

/// (min, max) of the finite values; (0, 1) without any, and a span of at least 1e-9.
pub fn range(vals: impl Iterator<Item = f64>) -> (f64, f64) {
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

/// A tick label: as many decimals as the value needs (at most 4 significant after the point),
/// none for whole numbers: 2, 0.5, 1500, 0.025.
pub fn tick(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    if v == v.round() && v.abs() < 1e15 {
        return format!("{}", v as i64);
    }
    let mag = v.abs().log10().floor() as i32;
    let decimals = (3 - mag).clamp(0, 9) as usize;
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// How a legend entry is drawn: as the line it names, or as a band's swatch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stroke {
    Solid,
    Dashed,
    /// A filled square (a bar or a phase band).
    Swatch,
    /// A dot (scattered samples).
    Dot,
}

/// One line of a legend.
#[derive(Clone, Debug)]
pub struct LegendEntry {
    pub label: String,
    pub color: RGBColor,
    pub stroke: Stroke,
}

impl LegendEntry {
    pub fn new(label: impl Into<String>, color: RGBColor, stroke: Stroke) -> LegendEntry {
        LegendEntry {
            label: label.into(),
            color,
            stroke,
        }
    }
}

/// Approximate width of a text in px (plotters' SVG backend measures no font).
pub fn text_width(s: &str, size: u32) -> u32 {
    (s.chars().count() as f64 * size as f64 * 0.5).ceil() as u32
}

/// Split `area` into the plot (left) and the legend column (right), drawing the legend there.
/// Labels too long for the column lose their middle to an ellipsis.
pub fn with_legend<'a>(
    area: &DrawingArea<SVGBackend<'a>, Shift>,
    title: Option<&str>,
    entries: &[LegendEntry],
) -> anyhow::Result<DrawingArea<SVGBackend<'a>, Shift>> {
    let (w, _) = area.dim_in_pixel();
    let (plot, side) = area.split_horizontally(w.saturating_sub(LEGEND_W));
    let mut y = 34;
    let text = (FONT, 12).into_font().color(&BLACK);
    if let Some(t) = title {
        side.draw(&Text::new(
            fit(t, LEGEND_W - 12, 12),
            (6, y - 6),
            (FONT, 12).into_font().color(&RGBColor(90, 90, 90)),
        ))
        .map_err(e)?;
        y += 14;
    }
    for en in entries {
        let c = en.color;
        let (x0, x1, cy) = (6, 30, y);
        match en.stroke {
            Stroke::Solid => side.draw(&PathElement::new(vec![(x0, cy), (x1, cy)], c.stroke_width(2))),
            Stroke::Dashed => {
                for k in 0..3 {
                    side.draw(&PathElement::new(vec![(x0 + 9 * k, cy), (x0 + 9 * k + 5, cy)], c.stroke_width(2)))
                        .map_err(e)?;
                }
                Ok(())
            }
            Stroke::Swatch => side.draw(&Rectangle::new([(x0, cy - 6), (x1, cy + 6)], c.mix(0.35).filled())),
            Stroke::Dot => side.draw(&Circle::new(((x0 + x1) / 2, cy), 3, c.filled())),
        }
        .map_err(e)?;
        side.draw(&Text::new(fit(&en.label, LEGEND_W - 44, 12), (x1 + 6, cy - 7), text.clone()))
            .map_err(e)?;
        y += 18;
    }
    Ok(plot)
}

/// `s` cut to about `px` pixels, with an ellipsis when cut.
fn fit(s: &str, px: u32, size: u32) -> String {
    if text_width(s, size) <= px {
        return s.to_string();
    }
    // The middle goes: a label's start (the variant) and end (the group, the percentile) both say
    // which line it is.
    let keep = ((px as f64 / (size as f64 * 0.5)) as usize).saturating_sub(1);
    let chars: Vec<char> = s.chars().collect();
    let head = keep / 2;
    let tail = keep - head;
    let mut o: String = chars[..head].iter().collect();
    o.push('…');
    o.extend(&chars[chars.len() - tail..]);
    o
}

/// How the x values of a sweep are placed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum XKind {
    /// Evenly spaced numbers (or too many to label one by one): a linear axis.
    Linear,
    /// `x_scale = "log"`: positions are log10 of the values.
    Log,
    /// Numbers not evenly spaced, or text: one slot per value, in order.
    Categorical,
}

/// The x axis of a sweep: every distinct value with its position and label.
#[derive(Clone, Debug)]
pub struct XAxis {
    pub kind: XKind,
    /// (value as written, position on the axis), in axis order.
    pub ticks: Vec<(String, f64)>,
}

impl XAxis {
    /// The axis for these values (numbers in a sweep order, or text); `scale` is `[report] x_scale`
    /// (`linear`, `log`, `category`; absent: linear for evenly spaced numbers, else one slot per value).
    pub fn new(values: &[XValue], scale: Option<&str>) -> XAxis {
        let mut distinct: Vec<XValue> = Vec::new();
        for v in values {
            if !distinct.contains(v) {
                distinct.push(v.clone());
            }
        }
        let nums: Option<Vec<f64>> = distinct.iter().map(|v| v.num).collect();
        let Some(mut nums) = nums else {
            let ticks = distinct.iter().enumerate().map(|(i, v)| (v.text.clone(), i as f64)).collect();
            return XAxis {
                kind: XKind::Categorical,
                ticks,
            };
        };
        nums.sort_by(f64::total_cmp);
        let label = |x: f64| tick(x);
        if scale == Some("log") && nums.iter().all(|x| *x > 0.0) {
            let ticks = nums.iter().map(|x| (label(*x), x.log10())).collect();
            return XAxis { kind: XKind::Log, ticks };
        }
        if scale == Some("category") {
            let ticks = nums.iter().enumerate().map(|(i, x)| (label(*x), i as f64)).collect();
            return XAxis {
                kind: XKind::Categorical,
                ticks,
            };
        }
        let even = scale == Some("linear") || nums.len() <= 2 || {
            let step = (nums[nums.len() - 1] - nums[0]) / (nums.len() - 1) as f64;
            nums.windows(2).all(|w| ((w[1] - w[0]) - step).abs() <= step.abs() * 0.01)
        };
        if even || nums.len() > 12 {
            let ticks = nums.iter().map(|x| (label(*x), *x)).collect();
            return XAxis {
                kind: XKind::Linear,
                ticks,
            };
        }
        let ticks = nums.iter().enumerate().map(|(i, x)| (label(*x), i as f64)).collect();
        XAxis {
            kind: XKind::Categorical,
            ticks,
        }
    }

    /// The position of a value on the axis.
    pub fn pos(&self, v: &XValue) -> Option<f64> {
        let text = v.num.map(tick).unwrap_or_else(|| v.text.clone());
        self.ticks.iter().find(|(l, _)| *l == text).map(|(_, p)| *p)
    }

    /// The axis' coordinate: its span with a margin, ticks at the values.
    pub fn coord(&self) -> KeyAxis {
        let (lo, hi) = range(self.ticks.iter().map(|t| t.1));
        let pad = match self.kind {
            XKind::Categorical => 0.5,
            _ => (hi - lo) * 0.05,
        };
        let (lo, hi) = if self.ticks.len() == 1 {
            (lo - 0.5, lo + 0.5)
        } else {
            (lo - pad, hi + pad)
        };
        let keys: Vec<f64> = if self.kind == XKind::Linear && self.ticks.len() > 12 {
            let step = (hi - lo) / 8.0;
            (0..=8).map(|i| lo + step * i as f64).collect()
        } else {
            self.ticks.iter().map(|t| t.1).collect()
        };
        KeyAxis { lo, hi, keys }
    }

    /// The label at an axis position (the value written there).
    pub fn label(&self, pos: f64) -> String {
        match self.ticks.iter().find(|t| (t.1 - pos).abs() < 1e-9) {
            Some((l, _)) => l.clone(),
            None if self.kind == XKind::Linear => tick(pos),
            None => String::new(),
        }
    }

    /// How the axis is described after the parameter's name.
    pub fn note(&self) -> &'static str {
        match self.kind {
            XKind::Linear => "",
            XKind::Log => " (log scale)",
            XKind::Categorical => " (one slot per value)",
        }
    }
}

/// A linear f64 axis with its ticks exactly at the given positions (plotters' own f64 axis picks
/// round numbers, which a categorical or log sweep must not get).
pub struct KeyAxis {
    lo: f64,
    hi: f64,
    keys: Vec<f64>,
}

impl Ranged for KeyAxis {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = (v - self.lo) / (self.hi - self.lo);
        limit.0 + (f * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.keys.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

/// A value of the x parameter: its text as written, and its number if it is one.
#[derive(Clone, Debug, PartialEq)]
pub struct XValue {
    pub text: String,
    pub num: Option<f64>,
}

/// The chart context of a time series: x in seconds since the trial's start over `x`, y from 0 to
/// `hi` described by `y_desc`, the mesh drawn with plain ticks and the phases shaded as bands.
pub fn time_chart<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    margin: u32,
    x: Range<f64>,
    hi: f64,
    y_desc: &str,
    phases: &[PhaseSpan],
) -> anyhow::Result<ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>> {
    let mut chart = ChartBuilder::on(area)
        .margin(margin)
        .x_label_area_size(margin * 2 + 16)
        .y_label_area_size(60)
        .build_cartesian_2d(x, 0.0..hi)
        .map_err(e)?;
    let tk = |v: &f64| tick(*v);
    chart
        .configure_mesh()
        .max_light_lines(0)
        .x_label_formatter(&tk)
        .y_label_formatter(&tk)
        .x_desc("seconds since trial start")
        .y_desc(y_desc)
        .draw()
        .map_err(e)?;
    phase_bands(&mut chart, phases, hi)?;
    Ok(chart)
}

/// The phases of a time series as bands, each named inside its band only when the name fits there
/// (so two names never overlap); the legend lists them all. `hi` is the top of the y range.
pub fn phase_bands(
    chart: &mut ChartContext<SVGBackend, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    phases: &[PhaseSpan],
    hi: f64,
) -> anyhow::Result<()> {
    for PhaseSpan {
        phase,
        start_s: a,
        end_s: b,
    } in phases
    {
        let name = phase.name();
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(*a, 0.0), (*b, hi)],
                phase_color(name).mix(0.12).filled(),
            )))
            .map_err(e)?;
        let (pa, _) = chart.backend_coord(&(*a, hi));
        let (pb, _) = chart.backend_coord(&(*b, hi));
        if (pb - pa) as i64 >= text_width(name, 11) as i64 + 6 {
            chart
                .draw_series(std::iter::once(Text::new(
                    name,
                    (*a, hi),
                    (FONT, 11).into_font().color(&RGBColor(90, 90, 90)),
                )))
                .map_err(e)?;
        }
    }
    Ok(())
}

/// The phases as legend swatches, in order, each named once.
pub fn phase_legend(phases: &[PhaseSpan]) -> Vec<LegendEntry> {
    let mut out: Vec<LegendEntry> = Vec::new();
    for name in phases.iter().map(PhaseSpan::name) {
        if !out.iter().any(|l| l.label == name) {
            out.push(LegendEntry::new(name, phase_color(name), Stroke::Swatch));
        }
    }
    out
}

/// Escape for SVG text.
fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The SVG with its caption as the document's `<title>` (what it shows, in one sentence).
pub fn with_caption(svg: String, caption: &str) -> String {
    let Some(start) = svg.find("<svg") else {
        return svg;
    };
    let Some(end) = svg[start..].find('>') else {
        return svg;
    };
    let at = start + end + 1;
    format!("{}\n<title>{}</title>{}", &svg[..at], xml(caption), &svg[at..])
}

/// The caption [`with_caption`] put in an SVG, unescaped.
pub fn caption_of(svg: &str) -> Option<String> {
    let a = svg.find("<title>")? + "<title>".len();
    let b = svg[a..].find("</title>")? + a;
    Some(svg[a..b].replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(x: f64) -> XValue {
        XValue {
            text: tick(x),
            num: Some(x),
        }
    }

    #[test]
    fn ticks_have_no_spurious_decimals() {
        assert_eq!(tick(2.0), "2");
        assert_eq!(tick(20000.0), "20000");
        assert_eq!(tick(0.5), "0.5");
        assert_eq!(tick(0.025), "0.025");
        assert_eq!(tick(1.25), "1.25");
        assert_eq!(tick(-0.0), "0");
    }

    #[test]
    fn the_axis_follows_the_values() {
        let even = XAxis::new(&[n(10.0), n(20.0), n(30.0)], None);
        assert_eq!(even.kind, XKind::Linear);
        let uneven = XAxis::new(&[n(2.0), n(5.0), n(10.0), n(20.0)], None);
        assert_eq!(uneven.kind, XKind::Categorical);
        assert_eq!(uneven.pos(&n(10.0)), Some(2.0));
        assert_eq!(uneven.label(2.0), "10");
        let log = XAxis::new(&[n(10.0), n(100.0), n(1000.0)], Some("log"));
        assert_eq!(log.kind, XKind::Log);
        assert_eq!(log.pos(&n(100.0)), Some(2.0));
        assert_eq!(XAxis::new(&[n(2.0), n(5.0)], Some("category")).kind, XKind::Categorical);
        assert_eq!(XAxis::new(&[n(2.0), n(5.0), n(20.0)], Some("linear")).kind, XKind::Linear);
        let text = XAxis::new(
            &[
                XValue {
                    text: "seq".into(),
                    num: None,
                },
                XValue {
                    text: "rand".into(),
                    num: None,
                },
            ],
            None,
        );
        assert_eq!(text.kind, XKind::Categorical);
        assert_eq!(text.label(1.0), "rand");
    }

    #[test]
    fn a_long_label_keeps_its_start_and_end() {
        let f = fit("thread-per-connection, size=1000000 p99", 150, 12);
        assert!(f.starts_with("thread") && f.ends_with("p99") && f.contains('…'), "{f}");
        assert_eq!(fit("pool", 150, 12), "pool");
    }

    #[test]
    fn the_caption_round_trips() {
        let svg = with_caption("<?xml version=\"1.0\"?>\n<svg a=\"b\">\n<g/></svg>".into(), "p99 < 5 ms & more");
        assert!(svg.contains("<title>p99 &lt; 5 ms &amp; more</title>"));
        assert_eq!(caption_of(&svg).as_deref(), Some("p99 < 5 ms & more"));
    }
}
