//! The merged run directory: an ordinary run (its plan, points, primary figures, one trial per
//! trial of the segments with their figures added up) whose store says what it merged
//! (`meta.merged`, and a note the report shows: "2 segments merged: ..."), with each segment's
//! monitor samples kept as a host of their own (`segment-0`, ...).

use super::segments::{check_segments, MergeInput, SegmentRun};
use crate::model::{TrialInfo, WorkloadResult, LOCAL_HOST};
use crate::runner::experiment::PointInfo;
use crate::runner::merge_figures::{merge_trial, number_globally};
use crate::store::{MergedMark, MergedSegment, RunInfo, RunStatus, Store, StoredTrial, TrialRecord, DB_FILE};
use anyhow::Context;
use std::path::{Path, PathBuf};

/// What `merge` wrote.
#[derive(Clone, Debug)]
pub struct Merged {
    pub dir: PathBuf,
    pub segments: usize,
    pub trials: usize,
    /// The run's notes: which segments ran where, what was left out.
    pub notes: Vec<String>,
    /// The plan's thresholds that the merged figures break (`expr at point: observed ...`).
    pub thresholds_failed: Vec<String>,
    /// Trials that failed in a segment.
    pub trials_failed: usize,
}

/// The name a segment's own monitor samples have in the merged store.
fn host_name(index: u32) -> String {
    format!("segment-{index}")
}

/// Merge the segments' run directories `dirs` into a new run directory `out`: refused with one
/// line (exit code 2) when they are not the segments `0..N-1` of one plan and start, or when `out`
/// already holds a run; on any failure, nothing is left of `out` if this made it. With
/// `allow_partial`, what is there of a load that is not whole (a segment missing, late, incomplete
/// or saturated) is merged and marked partial: the mark, the notes and the report's first line say so.
pub fn merge(dirs: &[PathBuf], out: &Path, allow_partial: bool) -> anyhow::Result<Merged> {
    let MergeInput { segments, partial } = check_segments(dirs, allow_partial)?;
    if out.join(DB_FILE).exists() {
        return Err(crate::error::usage(format!(
            "cannot merge: {} already holds a run; choose another --out",
            out.display()
        )));
    }
    let made = !out.exists();
    let result = write(&segments, partial, out);
    if result.is_err() && made {
        let _ = std::fs::remove_dir_all(out);
    }
    result
}

fn write(segs: &[SegmentRun], partial: Vec<String>, out: &Path) -> anyhow::Result<Merged> {
    let zero = &segs[0];
    let mut store = Store::create(out)?;
    std::fs::write(out.join("plan.toml"), &zero.run.plan_source)
        .with_context(|| format!("cannot write {}", out.join("plan.toml").display()))?;
    store.write_run(&RunInfo {
        plan_name: zero.run.plan_name.clone(),
        plan_file: zero.run.plan_file.clone(),
        plan_source: zero.run.plan_source.clone(),
        seed: zero.run.seed,
        started_unix: segs.iter().map(|s| s.run.started_unix).fold(f64::INFINITY, f64::min),
        planned_trials: zero.run.planned_trials,
    })?;
    if zero.store.plan_redacted()? {
        store.mark_plan_redacted()?;
    }
    for p in zero.store.points()? {
        store.write_point(p.id, &p.label, &p.params_json, p.repetitions, p.stop_reason.as_deref())?;
    }
    if let Some(p) = zero.store.primary()? {
        store.write_primary(&p)?;
    }
    let mark = merged_mark(segs, partial);
    store.write_merged(&mark)?;
    store.write_hosts(&hosts(segs)?)?;
    let mut notes = vec![merged_note(&mark)];
    let mut left_out: Vec<String> = Vec::new();
    for (k, t) in zero.trials.iter().enumerate() {
        let numbered: Vec<StoredTrial> = segs
            .iter()
            .map(|s| {
                let mut t = s.trials[k].clone();
                number_globally(&mut t, segment_of(&s.mark));
                t
            })
            .collect();
        let parts: Vec<&StoredTrial> = numbered.iter().collect();
        let figures = merge_trial(&parts);
        for l in figures.left_out {
            if !left_out.contains(&l) {
                left_out.push(l);
            }
        }
        for (s, p) in segs.iter().zip(&parts) {
            if let Some(f) = &p.failure {
                notes.push(format!("trial {} failed in segment {}: {f}", t.id, s.mark.segment));
            }
        }
        let mut rec = TrialRecord::new(trial_info(&parts));
        rec.result = Some(WorkloadResult {
            metrics: figures.metrics,
            histograms: figures.histograms,
            series: figures.series,
            errors: figures.errors,
            ..WorkloadResult::default()
        });
        store.write_trial(&rec)?;
        for s in segs {
            copy_samples(s, t.id, &mut store)?;
        }
    }
    if !left_out.is_empty() {
        notes.push(format!(
            "left out of the merge (no exact sum of the segments' figures): {}",
            left_out.join(", ")
        ));
    }
    let trials_failed = store.trials()?.iter().filter(|t| !t.ok()).count();
    let thresholds_failed = judge_thresholds(&mut store, &zero.run.plan_source, &mut notes)?;
    store.add_notes(&notes)?;
    let ended = segs.iter().filter_map(|s| s.run.ended_unix).fold(f64::NEG_INFINITY, f64::max);
    store.finish_run(RunStatus::Complete, ended)?;
    store.checkpoint()?;
    Ok(Merged {
        dir: out.to_path_buf(),
        segments: segs.len(),
        trials: zero.trials.len(),
        notes,
        thresholds_failed,
        trials_failed,
    })
}

/// The plan's thresholds judged on the merged figures, as `perflab run` judges them, stored; the
/// broken ones returned. A plan that does not parse here (a file it names is not on this machine)
/// gets a note instead of verdicts.
fn judge_thresholds(store: &mut Store, source: &str, notes: &mut Vec<String>) -> anyhow::Result<Vec<String>> {
    let plan = match crate::plan::parse_str(source, "plan.toml") {
        Ok(p) => p,
        Err(e) => {
            notes.push(format!(
                "the plan's thresholds were not judged: its copy does not read here ({})",
                crate::error::one_line(&e)
            ));
            return Ok(Vec::new());
        }
    };
    if plan.thresholds.is_empty() {
        return Ok(Vec::new());
    }
    let points: Vec<PointInfo> = store
        .points()?
        .into_iter()
        .map(|p| PointInfo {
            id: p.id,
            label: p.label,
            params_json: p.params_json,
            primary: crate::model::Primary::default(),
        })
        .collect();
    let trials = store.trials()?;
    crate::runner::thresholds::judge_all(store, &plan.thresholds, &points, &trials)
}

/// The merged trial's own row: the segments' trial that began first (its phases are relative to
/// its start), ended when the last one ended, failed when one failed.
fn trial_info(parts: &[&StoredTrial]) -> TrialInfo {
    let first = parts
        .iter()
        .min_by(|a, b| a.started_unix.total_cmp(&b.started_unix))
        .expect("one segment at least");
    let mut info = first.info.clone();
    info.ended_unix = parts.iter().map(|p| p.ended_unix).fold(info.ended_unix, f64::max);
    info.failure = parts.iter().find_map(|p| p.failure.clone());
    info
}

/// Each segment's samples of trial `id` under its own host name; the samples of the remote hosts
/// every segment monitored (`[monitor] hosts`: the same machines) are kept once, segment 0's.
fn copy_samples(s: &SegmentRun, id: usize, store: &mut Store) -> anyhow::Result<()> {
    let Some(trial) = s.trials.iter().find(|t| t.id == id) else {
        return Ok(());
    };
    for host in s.store.sample_hosts()? {
        let name = match host.as_str() {
            LOCAL_HOST => host_name(s.mark.index),
            _ if s.mark.index == 0 => host.clone(),
            _ => continue,
        };
        let samples = s.store.samples_on(id, &host)?;
        if !samples.is_empty() {
            store.write_host_samples(id, &name, &samples, &trial.phases)?;
        }
    }
    Ok(())
}

/// The segment a mark names (a mark that does not name one is read as the whole load).
fn segment_of(m: &crate::store::SegmentMark) -> crate::model::Segment {
    crate::model::Segment::new(m.index, m.count).unwrap_or(crate::model::Segment::WHOLE)
}

fn merged_mark(segs: &[SegmentRun], partial: Vec<String>) -> MergedMark {
    MergedMark {
        partial,
        count: segs[0].mark.count,
        plan_sha256: segs[0].mark.plan_sha256.clone(),
        start_at_unix: segs[0].mark.start_at_unix,
        segments: segs
            .iter()
            .map(|s| MergedSegment {
                segment: s.mark.segment.clone(),
                host: host_name(s.mark.index),
                hostname: s.run.host.clone(),
                dir: s.dir.display().to_string(),
                late_s: s.mark.late_s,
            })
            .collect(),
    }
}

/// "2 segments merged: 0/2 on client1 (began 0.003 s after T0), 1/2 on client2 (...)".
fn merged_note(m: &MergedMark) -> String {
    let each: Vec<String> = m
        .segments
        .iter()
        .map(|s| match s.late_s {
            Some(l) if l < 0.0 => format!("{} on {} (began {:.3} s before T0)", s.segment, s.hostname, -l),
            Some(l) => format!("{} on {} (began {l:.3} s after T0)", s.segment, s.hostname),
            None => format!("{} on {}", s.segment, s.hostname),
        })
        .collect();
    if m.partial.is_empty() {
        format!("{} segments merged: {}", m.count, each.join(", "))
    } else {
        format!(
            "PARTIAL: {} of {} segments merged ({}), with --allow-partial although {}",
            m.segments.len(),
            m.count,
            each.join(", "),
            m.partial.join("; ")
        )
    }
}

/// The merged run's hosts (`meta.hosts`): one per segment, its machine as its run row gives it,
/// and the remote hosts of segment 0's run.
fn hosts(segs: &[SegmentRun]) -> anyhow::Result<serde_json::Value> {
    let mut list: Vec<serde_json::Value> = segs
        .iter()
        .map(|s| {
            serde_json::json!({
                "name": host_name(s.mark.index),
                "ssh": "",
                "perflab": s.run.perflab_version,
                "facts": {
                    "hostname": s.run.host,
                    "kernel": s.run.kernel,
                    "cpus": s.run.ncpu,
                    "mem_bytes": s.run.mem_total_mb * 1_048_576.0,
                },
            })
        })
        .collect();
    if let Some(serde_json::Value::Array(remote)) = segs[0].store.hosts()? {
        list.extend(
            remote
                .into_iter()
                .filter(|h| h.get("name").and_then(|n| n.as_str()) != Some(LOCAL_HOST)),
        );
    }
    Ok(serde_json::Value::Array(list))
}
