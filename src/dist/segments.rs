//! The run directories given to `perflab merge`, read and checked: each is a segment's run
//! (`meta.segment`), all are the segments `0..N-1` of one split, each once, of one plan (its
//! SHA-256), started at one T0, none later than its tolerance, each run complete and with the same
//! trials. Anything else is refused with one line naming the segment (exit code 2): a merge of
//! what is not the whole load would give a total that is not one.

use crate::store::{RunStatus, SegmentMark, Store, StoredRun, StoredTrial};
use std::path::{Path, PathBuf};

/// Two segments' T0 are one start when they differ by no more than this (a T0 written with more
/// decimals on one machine than another), seconds.
const SAME_T0_S: f64 = 1e-3;

/// One segment's run, read.
pub struct SegmentRun {
    pub dir: PathBuf,
    pub store: Store,
    pub mark: SegmentMark,
    pub run: StoredRun,
    pub trials: Vec<StoredTrial>,
}

/// A mark with the directory it came from, for the checks.
struct Marked<'a> {
    dir: &'a Path,
    mark: &'a SegmentMark,
}

impl Marked<'_> {
    fn name(&self) -> String {
        format!("segment {} ({})", self.mark.segment, self.dir.display())
    }
}

fn refuse(msg: String) -> anyhow::Error {
    crate::error::usage(format!("cannot merge: {msg}"))
}

/// What `order` found: the marks' order by segment, and what makes the merge partial (a missing
/// segment, one that began later than its tolerance), each one line; merged only with
/// `--allow-partial`.
#[derive(Debug, PartialEq)]
struct Order {
    order: Vec<usize>,
    partial: Vec<String>,
}

/// The order of the marks by segment, once each checked to be of one split (each segment at most
/// once) and one plan started at one T0; or the one line saying why not. Missing and late segments
/// are not refused here: they are `partial`.
fn order(marks: &[Marked]) -> Result<Order, String> {
    let first = marks.first().ok_or("no run directory given")?;
    let n = first.mark.count;
    for m in marks {
        if m.mark.count != n {
            return Err(format!("{} and {} are segments of different splits", first.name(), m.name()));
        }
        if m.mark.plan_sha256 != first.mark.plan_sha256 {
            return Err(format!(
                "{} and {} ran different plans (their plans' SHA-256 are {:.12}… and {:.12}…)",
                first.name(),
                m.name(),
                first.mark.plan_sha256,
                m.mark.plan_sha256
            ));
        }
    }
    let mut slots: Vec<Option<usize>> = vec![None; n as usize];
    for (k, m) in marks.iter().enumerate() {
        let Some(slot) = slots.get_mut(m.mark.index as usize) else {
            return Err(format!("{} does not exist in a split into {n}", m.name()));
        };
        if let Some(other) = slot {
            return Err(format!(
                "segment {} is given twice: {} and {}",
                m.mark.segment,
                marks[*other].dir.display(),
                m.dir.display()
            ));
        }
        *slot = Some(k);
    }
    let mut partial = Vec::new();
    let missing: Vec<String> = (0..n)
        .filter(|i| slots[*i as usize].is_none())
        .map(|i| format!("{i}/{n}"))
        .collect();
    if !missing.is_empty() {
        let (s, verb) = if missing.len() > 1 { ("s", "are") } else { ("", "is") };
        partial.push(format!("segment{s} {} of {n} {verb} missing", missing.join(", ")));
    }
    let order: Vec<usize> = slots.into_iter().flatten().collect();
    let zero = &marks[order[0]];
    for &k in &order {
        let m = &marks[k];
        match (zero.mark.start_at_unix, m.mark.start_at_unix) {
            (None, None) => {}
            (Some(a), Some(b)) if (a - b).abs() <= SAME_T0_S => {}
            (a, b) => {
                let t0 = |t: Option<f64>| t.map_or("no --start-at".to_string(), |t| format!("--start-at {t:.3}"));
                return Err(format!(
                    "{} had {} but {} had {}: not one common start",
                    zero.name(),
                    t0(a),
                    m.name(),
                    t0(b)
                ));
            }
        }
        if let (Some(late), Some(tol)) = (m.mark.late_s, m.mark.tolerance_s) {
            if late > tol {
                partial.push(format!(
                    "{} began {late:.3} s after its --start-at, more than the {tol:.3} s allowed",
                    m.name()
                ));
            }
        }
    }
    Ok(Order { order, partial })
}

/// The segments to merge, in order, and what makes them less than the whole load as planned
/// (empty: the whole load).
pub struct MergeInput {
    pub segments: Vec<SegmentRun>,
    /// One line each: a missing segment, one that began late, did not complete (left out), or
    /// whose load generator saturated. Merged only with `--allow-partial`.
    pub partial: Vec<String>,
}

/// Read every run directory and check that together they are one split load, whole: the
/// segments in order, or one line (exit code 2) naming what is wrong. With `allow_partial`, a
/// missing, late, incomplete or saturated segment is not refused but said in `partial` (an
/// incomplete one is left out); a doubled segment, another plan, split or start never merge.
pub fn check_segments(dirs: &[PathBuf], allow_partial: bool) -> anyhow::Result<MergeInput> {
    let mut runs = Vec::new();
    for dir in dirs {
        let store = Store::open(dir)?;
        let Some(mark) = store.segment()? else {
            return Err(refuse(format!(
                "{} is not a segment's run (it was not run with --segment i/N)",
                dir.display()
            )));
        };
        let run = store.run()?;
        runs.push((dir.clone(), store, mark, run));
    }
    let marks: Vec<Marked> = runs.iter().map(|(dir, _, mark, _)| Marked { dir, mark }).collect();
    let Order { order, mut partial } = order(&marks).map_err(refuse)?;
    let waive = |partial: &[String]| -> anyhow::Result<()> {
        match partial.first() {
            Some(p) if !allow_partial => Err(refuse(format!("{p} (--allow-partial merges what is there, marked partial)"))),
            _ => Ok(()),
        }
    };
    waive(&partial)?;
    let mut slots: Vec<Option<(PathBuf, Store, SegmentMark, StoredRun)>> = runs.into_iter().map(Some).collect();
    let mut out: Vec<SegmentRun> = Vec::new();
    for k in order {
        let (dir, store, mark, run) = slots[k].take().expect("each index once");
        let name = format!("segment {} ({})", mark.segment, dir.display());
        if run.status != RunStatus::Complete {
            partial.push(format!(
                "{name} did not complete (its run is {}): its share of the load is not all there",
                run.status.as_str()
            ));
            waive(&partial[partial.len() - 1..])?;
            continue;
        }
        let trials = store.trials()?;
        if let Some(zero) = out.first() {
            let ids = |t: &[StoredTrial]| t.iter().map(|t| (t.id, t.point, t.repetition)).collect::<Vec<_>>();
            if ids(&trials) != ids(&zero.trials) {
                return Err(refuse(format!(
                    "{name} has {} trial(s), segment {} has {}: not the same trials",
                    trials.len(),
                    zero.mark.segment,
                    zero.trials.len()
                )));
            }
        }
        if let Some(at) = super::saturation::saturated(&store, run.ncpu, &trials)? {
            partial.push(format!(
                "{name}'s own load generator saturated {at}: it did not send its share as planned"
            ));
            waive(&partial[partial.len() - 1..])?;
        }
        out.push(SegmentRun {
            dir,
            store,
            mark,
            run,
            trials,
        });
    }
    if out.is_empty() {
        return Err(refuse("no segment completed: nothing to merge".to_string()));
    }
    Ok(MergeInput { segments: out, partial })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(index: u32, count: u32, plan: &str, t0: Option<f64>) -> SegmentMark {
        SegmentMark {
            segment: format!("{index}/{count}"),
            index,
            count,
            plan_sha256: crate::store::plan_sha256(plan),
            start_at_unix: t0,
            late_s: t0.map(|_| 0.002),
            tolerance_s: t0.map(|_| 0.5),
            clock_est_error_us: None,
            clock_synced: None,
        }
    }

    /// The order, or the first reason the merge is refused or partial.
    fn check(marks: &[SegmentMark]) -> Result<Vec<usize>, String> {
        let dirs: Vec<PathBuf> = (0..marks.len()).map(|k| PathBuf::from(format!("runs/s{k}"))).collect();
        let m: Vec<Marked> = dirs.iter().zip(marks).map(|(dir, mark)| Marked { dir, mark }).collect();
        let o = order(&m)?;
        match o.partial.into_iter().next() {
            Some(p) => Err(p),
            None => Ok(o.order),
        }
    }

    #[test]
    fn the_segments_are_put_in_order_and_whatever_is_not_one_whole_split_is_refused() {
        let t0 = Some(1_800_000_000.0);
        assert_eq!(check(&[mark(1, 2, "p", t0), mark(0, 2, "p", t0)]), Ok(vec![1, 0]));
        assert_eq!(check(&[mark(0, 1, "p", None)]), Ok(vec![0]));
        let missing = check(&[mark(0, 3, "p", t0), mark(2, 3, "p", t0)]).unwrap_err();
        assert!(missing.contains("segment 1/3 of 3 is missing"), "{missing}");
        // Not refused by the order itself: partial, and the others in order.
        let dirs = [PathBuf::from("a"), PathBuf::from("b")];
        let ms = [mark(2, 3, "p", t0), mark(0, 3, "p", t0)];
        let m: Vec<Marked> = dirs.iter().zip(&ms).map(|(dir, mark)| Marked { dir, mark }).collect();
        assert_eq!(
            order(&m),
            Ok(Order {
                order: vec![1, 0],
                partial: vec!["segment 1/3 of 3 is missing".to_string()]
            })
        );
        let twice = check(&[mark(0, 2, "p", t0), mark(0, 2, "p", t0)]).unwrap_err();
        assert!(twice.contains("segment 0/2 is given twice: runs/s0 and runs/s1"), "{twice}");
        let plans = check(&[mark(0, 2, "p", t0), mark(1, 2, "q", t0)]).unwrap_err();
        assert!(plans.contains("ran different plans"), "{plans}");
        let split = check(&[mark(0, 2, "p", t0), mark(1, 3, "p", t0)]).unwrap_err();
        assert!(split.contains("different splits"), "{split}");
        let start = check(&[mark(0, 2, "p", t0), mark(1, 2, "p", Some(1_800_000_010.0))]).unwrap_err();
        assert!(start.contains("not one common start"), "{start}");
        let mut late = mark(1, 2, "p", t0);
        late.late_s = Some(0.9);
        let late = check(&[mark(0, 2, "p", t0), late]).unwrap_err();
        assert!(late.contains("segment 1/2 (runs/s1) began 0.900 s after"), "{late}");
        // Within a millisecond, two T0 are one (written with more decimals on one machine).
        assert!(check(&[mark(0, 2, "p", t0), mark(1, 2, "p", Some(1_800_000_000.000_4))]).is_ok());
    }
}
