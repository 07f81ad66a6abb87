//! `perflab run --segment i/N [--start-at T0]`: this run is slice `i` of `N` of every trial's load
//! (see [`crate::model::segment`]), begun at a common wall-clock start and marked as such in its
//! store, for `perflab merge` to add the segments of one load up.

use super::experiment::Experiment;
use crate::model::Segment;
use crate::store::SegmentMark;
use crate::util::Cancel;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `--segment`: `i/N`, or `auto` read from the engine that started this process.
pub fn resolve(arg: &str) -> Result<Segment, String> {
    if arg.trim() != "auto" {
        return Segment::parse(arg).map_err(|e| format!("--segment {arg}: {e}"));
    }
    from_env(|k| std::env::var(k).ok())
}

/// `--segment auto`: Slurm's `SLURM_PROCID` of `SLURM_NTASKS`, or a Kubernetes Indexed Job's
/// `JOB_COMPLETION_INDEX` of `PERFLAB_SEGMENTS` (the Job's completions, which the manifest
/// `perflab dist k8s` writes passes in).
pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Segment, String> {
    let pair = |i: &str, n: &str| -> Option<Result<Segment, String>> {
        let (iv, nv) = (var(i)?, var(n)?);
        Some(match (iv.trim().parse(), nv.trim().parse()) {
            (Ok(a), Ok(b)) => Segment::new(a, b).map_err(|e| format!("--segment auto: {i}={iv}, {n}={nv}: {e}")),
            _ => Err(format!("--segment auto: {i}={iv} and {n}={nv} are not numbers")),
        })
    };
    pair("SLURM_PROCID", "SLURM_NTASKS")
        .or_else(|| pair("JOB_COMPLETION_INDEX", "PERFLAB_SEGMENTS"))
        .unwrap_or_else(|| {
            Err("--segment auto: no engine's index here (SLURM_PROCID and SLURM_NTASKS under Slurm, JOB_COMPLETION_INDEX and PERFLAB_SEGMENTS in a Kubernetes Indexed Job): give --segment i/N".into())
        })
}

/// `--start-at`: Unix seconds (`1790000000.25`) or RFC 3339 (`2026-11-26T10:30:00Z`), as Unix seconds.
pub fn parse_start_at(s: &str) -> Result<f64, String> {
    let t = s.trim();
    if let Ok(v) = t.parse::<f64>() {
        if v.is_finite() && v > 0.0 {
            return Ok(v);
        }
    }
    humantime::parse_rfc3339_weak(t)
        .ok()
        .and_then(|st| st.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_secs_f64())
        .ok_or_else(|| format!("--start-at {s}: not a time: give Unix seconds (1790000000) or RFC 3339 (2026-11-26T10:30:00Z)"))
}

/// Slice every trial's workload (and those adaptive repetitions add) to `segment`; a workload that
/// cannot be split is bad input, one line.
pub fn apply(exp: &mut Experiment, segment: Segment) -> anyhow::Result<()> {
    let refuse = move |e: String| crate::error::usage(format!("--segment {segment}: {e}"));
    for t in &mut exp.trials {
        t.workload.segment(segment).map_err(refuse)?;
    }
    if let Some(inner) = exp.extend.take() {
        exp.extend = Some(Box::new(move |point, rep, id| {
            let mut t = inner(point, rep, id)?;
            t.workload.segment(segment).map_err(refuse)?;
            Ok(t)
        }));
    }
    Ok(())
}

/// The mark this segment's store gets, before the start.
pub fn mark(exp: &Experiment, segment: Segment, start_at: Option<f64>, tolerance: Duration) -> SegmentMark {
    let (est, synced) = kernel_clock();
    SegmentMark {
        segment: segment.to_string(),
        index: segment.index,
        count: segment.count,
        plan_sha256: crate::store::plan_sha256(&exp.plan_source),
        start_at_unix: start_at,
        late_s: None,
        tolerance_s: start_at.map(|_| tolerance.as_secs_f64()),
        clock_est_error_us: est,
        clock_synced: synced,
    }
}

fn now_unix() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// Wait for the common start `t0` (Unix seconds); how late this segment begins, seconds. Later
/// than `tolerance` (a start already past, a machine too slow to get here) is a [`LateStart`]
/// error: nothing runs. None when interrupted while waiting.
///
/// [`LateStart`]: crate::error::LateStart
pub fn wait_for_start(segment: Segment, t0: f64, tolerance: Duration, cancel: &Cancel) -> anyhow::Result<Option<f64>> {
    loop {
        if cancel.is_cancelled() {
            return Ok(None);
        }
        let left = t0 - now_unix();
        if left <= 0.0 {
            break;
        }
        // Sleep most of the way in steps that still see Ctrl-C, the last stretch at once.
        std::thread::sleep(Duration::from_secs_f64(left.min(0.1)));
    }
    let late = now_unix() - t0;
    check_late(segment, late, tolerance)?;
    Ok(Some(late))
}

/// A segment `late` seconds after the start, against `tolerance`.
pub fn check_late(segment: Segment, late: f64, tolerance: Duration) -> anyhow::Result<()> {
    if late > tolerance.as_secs_f64() {
        return Err(anyhow::Error::new(crate::error::LateStart(format!(
            "segment {segment} began {:.3} s after --start-at, more than the {:.3} s allowed (--start-tolerance): nothing was run",
            late,
            tolerance.as_secs_f64()
        ))));
    }
    Ok(())
}

/// The kernel's estimate of this clock's error (microseconds) and whether it is synchronised, from
/// `adjtimex` (read only); None where it cannot be read.
fn kernel_clock() -> (Option<f64>, Option<bool>) {
    // SAFETY: `timex` is a plain C struct of integers, for which all zeroes is a valid value.
    let mut tx: libc::timex = unsafe { std::mem::zeroed() };
    // SAFETY: with `modes = 0` (zeroed), `adjtimex` only reads the kernel's clock state into `tx`,
    // a valid, exclusively borrowed `timex`.
    let state = unsafe { libc::adjtimex(&mut tx) };
    if state < 0 {
        return (None, None);
    }
    (Some(tx.esterror as f64), Some(state != libc::TIME_ERROR))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_reads_slurm_then_an_indexed_job() {
        let env =
            |pairs: &'static [(&'static str, &'static str)]| move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string());
        assert_eq!(
            from_env(env(&[("SLURM_PROCID", "2"), ("SLURM_NTASKS", "3")])),
            Ok(Segment { index: 2, count: 3 })
        );
        assert_eq!(
            from_env(env(&[("JOB_COMPLETION_INDEX", "0"), ("PERFLAB_SEGMENTS", "4")])),
            Ok(Segment { index: 0, count: 4 })
        );
        assert!(from_env(env(&[])).unwrap_err().contains("give --segment i/N"));
        assert!(from_env(env(&[("SLURM_PROCID", "3"), ("SLURM_NTASKS", "3")]))
            .unwrap_err()
            .contains("numbered 0 to 2"));
        assert!(from_env(env(&[("SLURM_PROCID", "x"), ("SLURM_NTASKS", "3")]))
            .unwrap_err()
            .contains("not numbers"));
    }

    #[test]
    fn start_at_takes_unix_seconds_and_rfc_3339() {
        assert_eq!(parse_start_at("1790000000.25"), Ok(1_790_000_000.25));
        assert_eq!(parse_start_at("2026-11-26T10:30:00Z"), Ok(1_795_689_000.0));
        assert!(parse_start_at("tomorrow").unwrap_err().contains("RFC 3339"));
        assert!(parse_start_at("-5").is_err());
    }

    #[test]
    fn a_start_already_past_the_tolerance_is_refused_with_exit_code_4() {
        let seg = Segment { index: 1, count: 2 };
        let e = wait_for_start(seg, now_unix() - 5.0, Duration::from_millis(500), &Cancel::new()).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_LATE);
        assert!(crate::error::one_line(&e).starts_with("segment 1/2 began 5."), "{e}");
        // A start a moment ahead is waited for, and on time.
        let late = wait_for_start(seg, now_unix() + 0.05, Duration::from_secs(3600), &Cancel::new()).unwrap();
        assert!(late.is_some_and(|l| l >= 0.0));
    }
}
