//! Flame graphs of folded stacks (inferno's SVG: hover for a frame's figures, click to zoom,
//! Ctrl-F to search when the SVG is opened on its own) and Brendan Gregg's differential flame graph
//! of two profiles: the second profile's stacks, each frame colored by how its share changed from
//! the first (red grew, blue shrank), the first scaled to the second's total.

use crate::model::{FoldedStack, Profile};
use anyhow::Context;
use std::collections::BTreeMap;

/// Options shared by every graph: colors by a hash of the name (the same bytes for the same
/// stacks, and the same function the same color in every graph).
fn options<'a>(title: &str, subtitle: Option<String>, count_name: &str) -> inferno::flamegraph::Options<'a> {
    let mut o = inferno::flamegraph::Options::default();
    o.title = title.to_string();
    o.subtitle = subtitle;
    o.count_name = count_name.to_string();
    o.hash = true;
    o.deterministic = true;
    o
}

/// The flame graph of a profile, weighed in samples (on-CPU) or in time (off-CPU: microseconds).
pub fn svg(p: &Profile, title: &str, subtitle: Option<String>, in_time: bool) -> anyhow::Result<String> {
    let (folded, unit) = if in_time {
        (scaled(&p.stacks, |s| s.ns / 1000), "µs")
    } else {
        (p.folded(false), "samples")
    };
    let mut opts = options(title, subtitle, unit);
    let mut out = Vec::new();
    if folded.is_empty() {
        return Ok(empty_svg(title));
    }
    inferno::flamegraph::from_lines(&mut opts, folded.lines(), &mut out).context("cannot draw the flame graph")?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The differential flame graph from `before` to `after` (by samples, or by time for off-CPU).
pub fn differential_svg(before: &Profile, after: &Profile, title: &str, subtitle: Option<String>, in_time: bool) -> anyhow::Result<String> {
    let lines = differential_lines(before, after, in_time)?;
    if lines.is_empty() {
        return Ok(empty_svg(title));
    }
    let mut opts = options(title, subtitle, if in_time { "µs" } else { "samples" });
    let mut out = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), &mut out)
        .context("cannot draw the differential flame graph")?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// inferno's differential folding: `stack before after`, `before` normalized to `after`'s total.
fn differential_lines(before: &Profile, after: &Profile, in_time: bool) -> anyhow::Result<Vec<String>> {
    let w = |p: &Profile| {
        if in_time {
            scaled(&p.stacks, |s| s.ns / 1000)
        } else {
            p.folded(false)
        }
    };
    let opts = inferno::differential::Options {
        normalize: true,
        ..Default::default()
    };
    let mut out = Vec::new();
    inferno::differential::from_readers(opts, w(before).as_bytes(), w(after).as_bytes(), &mut out)
        .context("cannot compare the profiles")?;
    Ok(String::from_utf8_lossy(&out).lines().map(str::to_string).collect())
}

fn scaled(stacks: &[FoldedStack], f: impl Fn(&FoldedStack) -> u64) -> String {
    let mut o = String::new();
    for s in stacks {
        let w = f(s);
        if w > 0 {
            o.push_str(&format!("{} {w}\n", s.stack));
        }
    }
    o
}

/// How each frame's total share (in percentage points of its profile) changed from `before` to
/// `after`, the largest change first (grown positive, shrunk negative), at most `n`.
pub fn changes(before: &Profile, after: &Profile, in_time: bool, n: usize) -> Vec<(String, f64)> {
    let total_share = |p: &Profile| -> BTreeMap<String, f64> {
        crate::model::profile::top_frames(&p.stacks, in_time, usize::MAX)
            .into_iter()
            .map(|f| (f.frame, f.total_pct))
            .collect()
    };
    let (a, b) = (total_share(before), total_share(after));
    let mut out: Vec<(String, f64)> = a
        .keys()
        .chain(b.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|f| (f.clone(), b.get(f).copied().unwrap_or(0.0) - a.get(f).copied().unwrap_or(0.0)))
        .filter(|(_, d)| d.abs() >= 0.05)
        .collect();
    out.sort_by(|x, y| y.1.abs().total_cmp(&x.1.abs()).then(x.0.cmp(&y.0)));
    out.truncate(n);
    out
}

/// A graph with nothing to draw says so (inferno refuses empty input).
fn empty_svg(title: &str) -> String {
    let t = title.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1200\" height=\"60\" viewBox=\"0 0 1200 60\">\
<text x=\"600\" y=\"24\" text-anchor=\"middle\" font-size=\"17\">{t}</text>\
<text x=\"600\" y=\"48\" text-anchor=\"middle\" font-size=\"12\">no samples</text></svg>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prof(stacks: &[(&str, u64)]) -> Profile {
        Profile {
            stacks: stacks
                .iter()
                .map(|(s, n)| FoldedStack {
                    stack: s.to_string(),
                    samples: *n,
                    ns: n * 20_000_000,
                })
                .collect(),
            ..Profile::default()
        }
    }

    #[test]
    fn a_graph_names_its_frames_and_is_the_same_twice() {
        let p = prof(&[("app;main;hot_function", 70), ("app;main;cold_function", 30)]);
        let a = svg(&p, "t", None, false).expect("svg");
        assert!(a.contains("hot_function (70 samples, 70.00%)"), "{a}");
        assert_eq!(a, svg(&p, "t", None, false).expect("svg"));
        assert!(svg(&Profile::default(), "t", None, true).expect("empty").contains("no samples"));
    }

    #[test]
    fn the_differential_shows_what_grew() {
        let before = prof(&[("app;main;hot_function", 50), ("app;main;cold_function", 50)]);
        let after = prof(&[("app;main;hot_function", 100), ("app;main;cold_function", 50)]);
        let ch = changes(&before, &after, false, 10);
        // 50 % → 66.7 % and 50 % → 33.3 %; the frames on every stack did not change.
        assert_eq!(ch.len(), 2, "{ch:?}");
        assert!(
            ch.iter()
                .any(|(f, d)| f == "hot_function" && (*d - (200.0 / 3.0 - 50.0)).abs() < 1e-6),
            "{ch:?}"
        );
        assert!(
            ch.iter()
                .any(|(f, d)| f == "cold_function" && (*d + (200.0 / 3.0 - 50.0)).abs() < 1e-6),
            "{ch:?}"
        );
        let g = differential_svg(&before, &after, "diff", None, false).expect("svg");
        assert!(g.contains("hot_function (100 samples, 66.67%; +"), "{g}");
    }
}
