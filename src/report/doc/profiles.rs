//! The profiles' section (after the findings): per point, what was profiled, the top frames (self
//! and total share) and the flame graph of its median repetition; per compared variant, the
//! frames that grew and shrank against the baseline variant and the differential flame graph; and
//! what is missing where a profile could not be taken.

use super::table::{table, Block, Section};
use crate::model::ProfileKind;
use crate::report::loaded::safe;
use crate::report::model::ReportModel;
use crate::report::profiles::{point_name, PointProfile};

/// The section's title.
pub const TITLE: &str = "Profiles";

/// A share in percent: "62", "4.1", "0.3".
fn pct(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn what(p: &PointProfile) -> String {
    let how = match (p.kind, p.frequency_hz) {
        (ProfileKind::OnCpu, Some(f)) => format!("{} samples at {f:.0} Hz", p.samples),
        (ProfileKind::OnCpu, None) => format!("{} samples", p.samples),
        (ProfileKind::OffCpu, _) => format!("{} switches off a CPU, {:.2} s blocked in all", p.samples, p.weight_s),
    };
    let on = if p.host == crate::model::LOCAL_HOST {
        String::new()
    } else {
        format!(" on host {}", p.host)
    };
    format!(
        "{}, {} profile{on} of trial {} (the median repetition): {how} over the {:.1} s load phase, {}.",
        point_name(&p.point),
        p.kind.words(),
        p.trial,
        p.seconds,
        p.scope
    )
}

pub fn section(m: &ReportModel) -> Option<Section> {
    if m.profiles.is_empty() {
        return None;
    }
    let mut blocks = vec![Block::Para(
        "Where the target's time went during the load phase (Linux perf; on-CPU: stacks sampled on the cpu-clock event; \
         off-CPU: the stack of each switch off a CPU, weighed by the time until the thread ran again). Self: the frame \
         was on top of the stack (off-CPU: the innermost frame outside the kernel, `_[k]`); total: anywhere in it. Hover a frame of a flame graph for its figures; open the graph on its \
         own (its file under charts/, linked under it in report.html) to zoom and search it."
            .into(),
    )];
    for p in &m.profiles.points {
        blocks.push(Block::Para(safe(&what(p))));
        for n in &p.notes {
            blocks.push(Block::Para(safe(&format!("Missing: {n}."))));
        }
        if !p.top.is_empty() {
            let rows = p
                .top
                .iter()
                .map(|f| vec![safe(&f.frame), pct(f.self_pct), pct(f.total_pct)])
                .collect();
            let unit = if p.kind == ProfileKind::OffCpu { "time" } else { "samples" };
            blocks.push(table(&["frame", &format!("self % of {unit}"), &format!("total % of {unit}")], rows));
        }
        blocks.extend(p.chart.clone().map(Block::Chart));
    }
    for d in &m.profiles.differentials {
        blocks.push(Block::Para(safe(&format!(
            "{}: {} against {} (the baseline variant), each frame's total share in percentage points; grown positive.",
            d.kind.words(),
            point_name(&d.point),
            point_name(&d.against)
        ))));
        let rows = d
            .changes
            .iter()
            .map(|(f, pp)| vec![safe(f), format!("{}{:.1}", if *pp > 0.0 { "+" } else { "" }, pp)])
            .collect();
        blocks.push(table(&["frame", "change (points)"], rows));
        blocks.extend(d.chart.clone().map(Block::Chart));
    }
    Some(Section::new(TITLE, blocks))
}
