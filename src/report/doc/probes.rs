//! The latency probes' sections: in the body, one table of every probe at every point, idle against
//! under load (min, mean, max, sd, the inflation and the loss); in the appendix, per point and probe
//! every phase, the difference of the means with its 95 % CI, the probes' own traffic and the two
//! charts.

use super::table::{chart_blocks, delta_pct, num, num_ci, opt, param, table, Block, CiCells, Section};
use crate::report::loaded::safe;
use crate::report::model::ReportModel;
use crate::report::probes::{ProbePhase, ProbeReport};

/// The title of the appendix section with every phase of every probe (the body's table links to it).
pub const DETAILS: &str = "Latency probes per point";

/// A percentage of the probes: "0", "100", "2.5".
fn pct(v: f64) -> String {
    param(v)
}

/// "2.5 % lost, 100 % failed" for a phase whose probes were not all answered; "" otherwise.
fn lost_failed(ph: &ProbePhase) -> String {
    let mut o = Vec::new();
    if ph.loss_pct > 0.0 {
        o.push(format!("{} % lost", pct(ph.loss_pct)));
    }
    if ph.failed_pct > 0.0 {
        o.push(format!("{} % failed", pct(ph.failed_pct)));
    }
    o.join(", ")
}

/// The phases the body compares: idle (the baseline) and under load.
const COMPARED: [(&str, &str); 2] = [("baseline", "idle"), ("load", "under load")];

/// One point: a row per probe and phase (idle, under load) with min, mean, max, sd and what was
/// not answered, as a hand-written latency table has it.
fn one_point(m: &ReportModel) -> Block {
    let mut rows = Vec::new();
    for p in &m.probes {
        for (phase, name) in COMPARED {
            let ph = p.phase(phase);
            let r = ph.map(|x| &x.rtt);
            rows.push(vec![
                safe(&format!("{} ({})", p.probe, p.kind)),
                name.to_string(),
                ph.map_or("0".into(), |x| x.n.to_string()),
                opt(r.and_then(|r| r.min_ms)),
                opt(r.and_then(|r| r.mean_ms)),
                opt(r.and_then(|r| r.max_ms)),
                opt(r.and_then(|r| r.sd_ms)),
                ph.map_or("–".into(), |x| format!("{} / {}", pct(x.loss_pct), pct(x.failed_pct))),
            ]);
        }
    }
    table(&["probe", "phase", "n", "min", "mean", "max", "sd", "lost / failed %"], rows)
}

/// A probe's mean round trip at a point in one phase ("0.42", "–") and what was not answered
/// ("2.5 % lost", "100 % failed"; "none sent" where the probe ran at the point but sent nothing in
/// that phase: a load shorter than its interval; "" where all were answered or it did not run there).
fn mean_and_note(at: Option<&ProbeReport>, phase: &str) -> (String, String) {
    match (at, at.and_then(|p| p.phase(phase))) {
        (_, Some(x)) => (opt(x.rtt.mean_ms), lost_failed(x)),
        (Some(_), None) => ("–".into(), "none sent".into()),
        (None, None) => ("–".into(), String::new()),
    }
}

/// The cell of a probe at a point: its mean idle → under load, each with what was not answered, or
/// the note once after both where it is the same ("– → – (100 % failed)").
fn idle_to_load(at: Option<&ProbeReport>) -> String {
    let (idle, idle_note) = mean_and_note(at, "baseline");
    let (load, load_note) = mean_and_note(at, "load");
    let with = |v: &str, note: &str| if note.is_empty() { v.to_string() } else { format!("{v} ({note})") };
    if idle_note == load_note {
        with(&format!("{idle} → {load}"), &idle_note)
    } else {
        format!("{} → {}", with(&idle, &idle_note), with(&load, &load_note))
    }
}

/// Where a point's column and row group are: the answer table's x value and its variant (and other
/// parameters) where every point has them, else the point's own column.
fn places<'a>(m: &'a ReportModel, points: &[&'a str]) -> Vec<(String, String)> {
    let by_x: Option<Vec<(String, String)>> = points
        .iter()
        .map(|point| {
            let c = m.overview.answer.iter().find(|c| c.point == *point)?;
            let x = c.x.clone().filter(|_| m.overview.x.is_some())?;
            let mut group = Vec::new();
            if m.overview.compare.is_some() {
                group.push(c.variant.clone());
            }
            if !c.at.is_empty() {
                group.push(c.at.clone());
            }
            Some((group.join(" "), x))
        })
        .collect();
    by_x.unwrap_or_else(|| {
        points
            .iter()
            .map(|p| (String::new(), without(p, &m.overview.set_by_variant)))
            .collect()
    })
}

/// Several points: a row per probe (and variant), a column per x value (or point), each cell the
/// mean round trip idle → under load, with what was not answered: the answer table's shape, one
/// line a row.
fn by_point(m: &ReportModel) -> Block {
    let mut points: Vec<&str> = Vec::new();
    let mut probes: Vec<(&str, &str)> = Vec::new();
    for p in &m.probes {
        if !points.contains(&p.point.as_str()) {
            points.push(&p.point);
        }
        if !probes.contains(&(p.probe.as_str(), p.kind.as_str())) {
            probes.push((&p.probe, &p.kind));
        }
    }
    // The probes that were answered somewhere first: a probe that never was (an ssh probe without
    // a server) comes last, below the figures.
    let answered = |probe: &str| {
        m.probes
            .iter()
            .any(|p| p.probe == probe && p.phases.iter().any(|ph| ph.rtt.mean_ms.is_some()))
    };
    probes.sort_by_key(|(probe, _)| !answered(probe));
    let places = places(m, &points);
    let mut groups: Vec<&str> = Vec::new();
    let mut columns: Vec<&str> = Vec::new();
    for (g, x) in &places {
        if !groups.contains(&g.as_str()) {
            groups.push(g);
        }
        if !columns.contains(&x.as_str()) {
            columns.push(x);
        }
    }
    let grouped = groups.iter().any(|g| !g.is_empty());
    let mut rows = Vec::new();
    for (probe, kind) in &probes {
        for group in &groups {
            let mut row = vec![safe(&format!("{probe} ({kind})"))];
            if grouped {
                row.push(safe(group));
            }
            for column in &columns {
                let point = points.iter().zip(&places).find(|(_, (g, x))| g == group && x == column);
                let at = point.and_then(|(pt, _)| m.probes.iter().find(|p| p.probe == *probe && p.point == *pt));
                row.push(match point {
                    Some(_) => idle_to_load(at),
                    None => "–".into(),
                });
            }
            rows.push(row);
        }
    }
    let mut header = vec!["probe".to_string()];
    if grouped {
        let name = match (&m.overview.compare, m.overview.dimensions.is_empty()) {
            (Some(c), true) => c.clone(),
            _ => "point".into(),
        };
        header.push(safe(&name));
    }
    match m.overview.x.as_deref().filter(|_| places.iter().all(|(_, x)| !x.contains('='))) {
        // "concurrency = 10", then the other values alone, as the answer table heads them.
        Some(x) => header.extend(
            columns
                .iter()
                .enumerate()
                .map(|(i, v)| if i == 0 { safe(&format!("{x} = {v}")) } else { safe(v) }),
        ),
        None => header.extend(columns.iter().map(|c| safe(c))),
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    table(&header, rows)
}

/// A point's label without the parameters a variant sets ("variant=after model=event-loop c=10"
/// → "variant=after c=10": the variant names them). A value with spaces stays whole.
fn without(label: &str, set_by_variant: &[String]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for word in label.split(' ') {
        match (word.split_once('='), parts.last_mut()) {
            (None, Some(last)) => {
                last.push(' ');
                last.push_str(word);
            }
            _ => parts.push(word.to_string()),
        }
    }
    parts.retain(|p| !p.split_once('=').is_some_and(|(k, _)| set_by_variant.iter().any(|s| s == k)));
    parts.join(" ")
}

/// Every probe idle (baseline) against under load: with one point the seeds' table (min, mean, max,
/// sd per probe and phase), with several the mean at each point; None without probes.
pub fn section(m: &ReportModel) -> Option<Section> {
    let first = m.probes.first()?;
    let one = m.probes.iter().all(|p| p.point == first.point);
    let (intro, body) = if one {
        (
            "Round trips of the probes in ms, sent while idle (the baseline) and under load, all trials pooled; \
             lost = timed out or erred, failed = answered failure (a non-zero exit, HTTP ≥ 400), % of the probes \
             sent. Every phase, inflation, the difference with its 95 % CI and the charts:",
            one_point(m),
        )
    } else {
        (
            "Mean round trip of the probes in ms, idle (the baseline) → under load, at each point (its trials \
             pooled); lost = timed out or erred, failed = answered failure (a non-zero exit, HTTP ≥ 400), % of \
             the probes sent. Min, max, sd, inflation, the difference with its 95 % CI and the charts:",
            by_point(m),
        )
    };
    Some(Section::new(
        "Latency probes: idle vs under load",
        vec![
            Block::Link {
                text: intro.into(),
                section: DETAILS.into(),
            },
            body,
        ],
    ))
}

/// " Mean under load − mean idle: +0.12 ms (95 % CI +0.05 to +0.19 ms)." where the CI means
/// something (n ≥ 3 a side, no wider than the idle mean), else the difference alone.
fn difference(p: &ProbeReport, cis: &mut CiCells) -> String {
    let Some(d) = p.diff_mean_ms else {
        return String::new();
    };
    let base = p.phase("baseline").and_then(|b| b.rtt.mean_ms).filter(|b| *b > 0.0);
    let n = [p.phase("baseline"), p.phase("load")]
        .iter()
        .map(|ph| ph.map_or(0, |x| x.rtt.count as usize))
        .min()
        .unwrap_or(0);
    let pct = |x: f64| base.map(|b| 100.0 * x / b);
    let ci_pct = p.diff_ci95_ms.and_then(|(lo, hi)| pct(lo).zip(pct(hi)));
    let half = p.diff_ci95_ms.map(|(lo, hi)| (hi - lo).abs() / 2.0);
    let mut text = format!(" Mean under load − mean idle: {} ms", num_ci(d, half));
    if let Some(pd) = pct(d) {
        text.push_str(&format!(" ({})", delta_pct(pd, ci_pct)));
    }
    match (cis.delta(ci_pct, n), p.diff_ci95_ms) {
        (c, Some((lo, hi))) if c != "–" => {
            text.push_str(&format!(", 95 % CI {} to {} ms", num_ci(lo, half), num_ci(hi, half)));
        }
        _ => {}
    }
    text.push('.');
    text
}

/// Per point and probe: every phase's table, the difference of the means, the probe's own traffic
/// and its two charts; None without probes.
pub fn details(m: &ReportModel, charts: &[(String, String)]) -> Option<Section> {
    if m.probes.is_empty() {
        return None;
    }
    let mut cis = CiCells::new();
    let mut blocks = vec![Block::Para(
        "Each probe ran through every phase of every trial; a probe is counted in the phase it was sent in. \
         Latency figures are of the replies (ms); loss is timeouts and errors, failed is answers that said failure \
         (a command's non-zero exit, an HTTP status of 400 or more), both % of the probes sent. Inflation = median \
         under load / median at baseline."
            .into(),
    )];
    for (i, p) in m.probes.iter().enumerate() {
        let at = if p.point.is_empty() {
            String::new()
        } else {
            format!(" at {}", p.point)
        };
        let mut text = format!(
            "Probe {} ({} {}){at}, {} trial(s); its own traffic {} packets/s, {} B/s.",
            p.probe,
            p.kind,
            p.target,
            p.trials,
            num(p.packets_per_s),
            num(p.bytes_per_s)
        );
        if let Some(x) = p.inflation {
            text.push_str(&format!(" Inflation ×{}.", num(x)));
        }
        text.push_str(&difference(p, &mut cis));
        blocks.push(Block::Para(safe(&text)));
        let rows = p
            .phases
            .iter()
            .map(|ph| {
                let r = &ph.rtt;
                vec![
                    ph.phase.clone(),
                    ph.n.to_string(),
                    opt(r.min_ms),
                    opt(r.median_ms),
                    opt(r.mean_ms),
                    opt(r.p90_ms),
                    opt(r.p99_ms),
                    opt(r.max_ms),
                    opt(r.sd_ms),
                    num(ph.loss_pct),
                    num(ph.failed_pct),
                ]
            })
            .collect();
        blocks.push(table(
            &[
                "phase", "n", "min", "median", "mean", "p90", "p99", "max", "sd", "loss %", "failed %",
            ],
            rows,
        ));
        blocks.extend(chart_blocks(charts, &format!("probe_{i:02}_")));
    }
    blocks.extend(cis.note().map(Block::Para));
    Some(Section::new(DETAILS, blocks))
}
