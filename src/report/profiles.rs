//! The profiles' part of the report (`[profile]` in the plan): per point, the profiles of its
//! median repetition (by the headline throughput, as the trial charts choose it) with their top
//! frames; per compared variant, the differential against the baseline variant at the same other
//! parameters (what grew, what shrank); the flame graphs themselves (`render`); and the sentence a
//! CPU finding quotes at a point with an on-CPU profile.

use super::loaded::{safe, value_text, Loaded};
use crate::analysis::bottleneck::Finding;
use crate::model::profile::{top_frames, FrameShare};
use crate::model::{Profile, ProfileKind, LOCAL_HOST};
use serde::Serialize;

/// Rows of a top-frames table.
const TOP: usize = 12;

/// One profile of one point (its median repetition).
#[derive(Clone, Debug, Serialize)]
pub struct PointProfile {
    pub point: String,
    /// The host it was taken on (`local`, or a remote target's host).
    pub host: String,
    pub kind: ProfileKind,
    /// The trial it is of, and its run's index.
    pub trial: usize,
    pub run: usize,
    pub scope: String,
    pub frequency_hz: Option<f64>,
    /// The profiled window (the load phase), seconds.
    pub seconds: f64,
    pub samples: u64,
    /// Time the stacks weigh (off-CPU: time blocked), seconds.
    pub weight_s: f64,
    /// By self share (on-CPU by samples, off-CPU by time).
    pub top: Vec<FrameShare>,
    /// What is missing (perf absent, symbols absent, samples lost).
    pub notes: Vec<String>,
    /// The flame graph's chart file (set by `render`).
    pub chart: Option<String>,
    #[serde(skip)]
    pub profile: Profile,
}

/// What changed from the baseline variant's profile to another variant's, at the same other
/// parameters.
#[derive(Clone, Debug, Serialize)]
pub struct Differential {
    pub kind: ProfileKind,
    /// The point compared and the baseline variant's point.
    pub point: String,
    pub against: String,
    /// Frames whose total share changed most, in percentage points (grown positive).
    pub changes: Vec<(String, f64)>,
    pub chart: Option<String>,
    #[serde(skip)]
    pub before: Profile,
    #[serde(skip)]
    pub after: Profile,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Profiles {
    pub points: Vec<PointProfile>,
    pub differentials: Vec<Differential>,
}

impl Profiles {
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }
}

/// The profiles of each point's median repetition (`headlines`: each group's headline throughput),
/// and the differentials between the variants of `compare` and its `baseline` value.
pub fn build(
    groups: &[(String, Vec<&Loaded>)],
    headlines: &[Option<&str>],
    compare: Option<&str>,
    baseline: Option<&str>,
) -> anyhow::Result<Profiles> {
    let mut out = Profiles::default();
    for ((label, g), headline) in groups.iter().zip(headlines) {
        let Some(median) = median(g, *headline) else { continue };
        for r in median.store.profiles(median.trial.id)? {
            let in_time = r.profile.kind == Some(ProfileKind::OffCpu);
            out.points.push(PointProfile {
                point: label.clone(),
                host: r.host.clone(),
                kind: r.profile.kind.unwrap_or(ProfileKind::OnCpu),
                trial: median.trial.id,
                run: median.run,
                scope: r.profile.scope.clone(),
                frequency_hz: r.profile.frequency_hz,
                seconds: r.profile.window.1 - r.profile.window.0,
                samples: r.profile.total_samples(),
                weight_s: r.profile.total_ns() as f64 * 1e-9,
                top: top_frames(&r.profile.stacks, in_time, TOP),
                notes: r.profile.notes.clone(),
                chart: None,
                profile: r.profile,
            });
        }
    }
    if let (Some(c), Some(b)) = (compare, baseline) {
        out.differentials = differentials(groups, &out.points, c, b);
    }
    Ok(out)
}

/// The median repetition among the point's ok trials, by its headline throughput when every
/// trial has it (the lower middle of an even count), else the middle repetition.
fn median<'a>(g: &[&'a Loaded], headline: Option<&str>) -> Option<&'a Loaded> {
    let mut ok: Vec<&Loaded> = g.iter().copied().filter(|l| l.trial.ok()).collect();
    let key = |l: &Loaded| headline.and_then(|m| l.trial.metric(m));
    if ok.iter().all(|l| key(l).is_some()) {
        ok.sort_by(|a, b| key(a).unwrap_or(0.0).total_cmp(&key(b).unwrap_or(0.0)));
    }
    ok.get(ok.len().checked_sub(1)? / 2).copied()
}

fn differentials(groups: &[(String, Vec<&Loaded>)], points: &[PointProfile], compare: &str, baseline: &str) -> Vec<Differential> {
    let params = |label: &str| {
        groups
            .iter()
            .find(|(l, _)| l == label)
            .and_then(|(_, g)| g.first())
            .map(|l| &l.params)
    };
    let mut out = Vec::new();
    for p in points.iter().filter(|p| !p.profile.stacks.is_empty()) {
        let Some(mine) = params(&p.point) else { continue };
        if mine.get(compare).map(value_text).as_deref() == Some(baseline) || !mine.contains_key(compare) {
            continue;
        }
        let base = points.iter().find(|q| {
            q.kind == p.kind
                && q.host == p.host
                && !q.profile.stacks.is_empty()
                && params(&q.point).is_some_and(|theirs| {
                    theirs.get(compare).map(value_text).as_deref() == Some(baseline)
                        && theirs
                            .iter()
                            .filter(|(k, _)| *k != compare && *k != "run")
                            .all(|(k, v)| mine.get(k) == Some(v))
                })
        });
        if let Some(q) = base {
            let in_time = p.kind == ProfileKind::OffCpu;
            out.push(Differential {
                kind: p.kind,
                point: p.point.clone(),
                against: q.point.clone(),
                changes: crate::profile::flame::changes(&q.profile, &p.profile, in_time, TOP),
                chart: None,
                before: q.profile.clone(),
                after: p.profile.clone(),
            });
        }
    }
    out
}

/// The flame graphs: one per point profile, one per differential (their names set in `p`).
pub fn render(p: &mut Profiles) -> anyhow::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (i, pp) in p.points.iter_mut().enumerate().filter(|(_, pp)| !pp.profile.stacks.is_empty()) {
        let name = format!("flame_{i:02}_{}.svg", pp.kind.name());
        let title = format!("{} flame graph: {}", pp.kind.words(), point_name(&pp.point));
        let sub = format!(
            "trial {}, {} samples over {:.1} s of the load phase, {}",
            pp.trial, pp.samples, pp.seconds, pp.scope
        );
        let svg = crate::profile::flame::svg(&pp.profile, &safe(&title), Some(safe(&sub)), pp.kind == ProfileKind::OffCpu)?;
        let caption = format!("{title}, the median repetition: hover a frame for its figures");
        let svg = super::chart_kit::with_caption(svg, &safe(&caption));
        pp.chart = Some(name.clone());
        out.push((name, svg));
    }
    for (i, d) in p.differentials.iter_mut().enumerate() {
        let name = format!("flame_diff_{i:02}_{}.svg", d.kind.name());
        let title = format!(
            "{} differential: {} against {}",
            d.kind.words(),
            point_name(&d.point),
            point_name(&d.against)
        );
        let sub = "red: grew, blue: shrank (shares, the baseline scaled to the same total)".to_string();
        let svg = crate::profile::flame::differential_svg(&d.before, &d.after, &safe(&title), Some(sub), d.kind == ProfileKind::OffCpu)?;
        let svg = super::chart_kit::with_caption(svg, &safe(&format!("{title}: red grew, blue shrank")));
        d.chart = Some(name.clone());
        out.push((name, svg));
    }
    Ok(out)
}

pub fn point_name(label: &str) -> String {
    if label.is_empty() {
        "the only point".into()
    } else {
        label.to_string()
    }
}

/// Each CPU finding quotes the on-CPU profile of the points it fired at: "c=50: 62 % of the
/// on-CPU samples of process tree of PID 12 in `deflate_slow`".
pub fn quote_in_findings(findings: &mut [Finding], p: &Profiles) {
    for f in findings
        .iter_mut()
        .filter(|f| f.resource.starts_with("CPU") || f.resource.contains("CPU limit"))
    {
        for point in f.points.clone() {
            let host = f.host.clone().unwrap_or_else(|| LOCAL_HOST.to_string());
            let prof = p
                .points
                .iter()
                .find(|pp| pp.point == point && pp.kind == ProfileKind::OnCpu && pp.host == host);
            if let Some(top) = prof.and_then(|pp| pp.top.first().map(|t| (pp, t))) {
                let (pp, t) = top;
                f.profile.push(format!(
                    "{}: {:.0} % of the on-CPU samples of {} in `{}`",
                    point_name(&pp.point),
                    t.self_pct,
                    pp.scope,
                    t.frame
                ));
            }
        }
    }
}
