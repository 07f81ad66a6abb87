//! Reading a run back: for reports, exports and `--resume`.

use super::{codec, RunStatus, Store};
use crate::model::{Better, Metric, MetricKind, NamedHistogram, PhaseSpan, SeriesPoint, TrialFailure, TrialInfo};
use rusqlite::{params, OptionalExtension};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub struct StoredRun {
    pub plan_name: String,
    pub plan_file: String,
    pub plan_source: String,
    pub seed: u64,
    pub started_unix: f64,
    pub ended_unix: Option<f64>,
    pub status: RunStatus,
    pub perflab_version: String,
    pub host: String,
    pub kernel: String,
    pub ncpu: u32,
    pub mem_total_mb: f64,
    pub planned_trials: usize,
}

#[derive(Clone, Debug)]
pub struct StoredPoint {
    pub id: usize,
    pub label: String,
    pub params_json: String,
    pub repetitions: u32,
    pub stop_reason: Option<String>,
}

/// A trial read back: what every trial has ([`TrialInfo`], read through `Deref`: `t.id`,
/// `t.failure`) and what its workload measured (its raw output is read apart, `raw_output`).
#[derive(Clone, Debug)]
pub struct StoredTrial {
    pub info: TrialInfo,
    pub metrics: Vec<Metric>,
    pub histograms: Vec<NamedHistogram>,
    pub series: Vec<SeriesPoint>,
    pub errors: Vec<(String, u64)>,
}

impl std::ops::Deref for StoredTrial {
    type Target = TrialInfo;
    fn deref(&self) -> &TrialInfo {
        &self.info
    }
}

/// One threshold's verdict at one point.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredThreshold {
    pub expr: String,
    pub point: usize,
    pub observed: Option<f64>,
    pub passed: bool,
    /// What `observed` is ("median of 3 trials' p99"); None in stores written before it was kept.
    pub basis: Option<String>,
}

impl StoredTrial {
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics.iter().find(|m| m.name == name).map(|m| m.value)
    }
}

fn better(s: &str) -> Better {
    match s {
        "higher" => Better::Higher,
        "lower" => Better::Lower,
        _ => Better::Neither,
    }
}

impl Store {
    pub fn run(&self) -> anyhow::Result<StoredRun> {
        Ok(self.conn().query_row(
            "SELECT plan_name, plan_file, plan_source, seed, started_unix, ended_unix, status, perflab_version,
                    host, kernel, ncpu, mem_total_mb, planned_trials FROM run WHERE id = 1",
            [],
            |r| {
                Ok(StoredRun {
                    plan_name: r.get(0)?,
                    plan_file: r.get(1)?,
                    plan_source: r.get(2)?,
                    seed: r.get::<_, i64>(3)? as u64,
                    started_unix: r.get(4)?,
                    ended_unix: r.get(5)?,
                    status: r.get(6)?,
                    perflab_version: r.get(7)?,
                    host: r.get(8)?,
                    kernel: r.get(9)?,
                    ncpu: r.get(10)?,
                    mem_total_mb: r.get(11)?,
                    planned_trials: r.get::<_, i64>(12)? as usize,
                })
            },
        )?)
    }

    pub fn points(&self) -> anyhow::Result<Vec<StoredPoint>> {
        let mut st = self
            .conn()
            .prepare("SELECT id, label, params_json, repetitions, stop_reason FROM point ORDER BY id")?;
        let rows = st.query_map([], |r| {
            Ok(StoredPoint {
                id: r.get::<_, i64>(0)? as usize,
                label: r.get(1)?,
                params_json: r.get(2)?,
                repetitions: r.get(3)?,
                stop_reason: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The ids of the trials already stored (for `--resume`).
    pub fn trial_ids(&self) -> anyhow::Result<Vec<usize>> {
        let mut st = self.conn().prepare("SELECT id FROM trial ORDER BY id")?;
        let rows = st.query_map([], |r| r.get::<_, i64>(0))?;
        Ok(rows.map(|r| r.map(|v| v as usize)).collect::<Result<_, _>>()?)
    }

    /// The run's notes (see `add_notes`); none in a store that has no `notes` key.
    pub fn notes(&self) -> anyhow::Result<Vec<String>> {
        let v: Option<String> = self
            .conn()
            .query_row("SELECT value FROM meta WHERE key = 'notes'", [], |r| r.get(0))
            .optional()?;
        Ok(match v {
            Some(j) => serde_json::from_str(&j)?,
            None => Vec::new(),
        })
    }

    /// Whether secrets were taken out of the plan this store keeps (`mark_plan_redacted`, or a store
    /// from an older perflab whose plan copy shows `[redacted]`): it cannot be run from the store.
    pub fn plan_redacted(&self) -> anyhow::Result<bool> {
        let flag: Option<String> = self
            .conn()
            .query_row("SELECT value FROM meta WHERE key = 'plan_redacted'", [], |r| r.get(0))
            .optional()?;
        Ok(flag.is_some() || self.run()?.plan_source.contains(crate::util::redact::REDACTED))
    }

    /// Why the run failed as a whole (`meta` key `failure`), e.g. the disk filled up while a trial
    /// was being stored; `None` for a run that did not fail that way.
    pub fn failure(&self) -> anyhow::Result<Option<String>> {
        Ok(self
            .conn()
            .query_row("SELECT value FROM meta WHERE key = 'failure'", [], |r| r.get(0))
            .optional()?)
    }

    /// Every stored trial, with its metrics, histograms, series and errors (not its samples).
    pub fn trials(&self) -> anyhow::Result<Vec<StoredTrial>> {
        // The failure's kind is stored from schema version 4; before, it is told from the text.
        let kind = if self.schema_version() >= 4 { "failure_kind" } else { "NULL" };
        let mut st = self.conn().prepare(&format!(
            "SELECT id, point, repetition, params_json, workload, failure, {kind}, started_unix, ended_unix,
                    limit_mechanism, limit_proof, target_stdout_tail, target_stderr_tail FROM trial ORDER BY id"
        ))?;
        let mut trials: Vec<StoredTrial> = st
            .query_map([], |r| {
                let failure: Option<String> = r.get(5)?;
                let kind: Option<String> = r.get(6)?;
                Ok(StoredTrial {
                    info: TrialInfo {
                        id: r.get::<_, i64>(0)? as usize,
                        point: r.get::<_, i64>(1)? as usize,
                        repetition: r.get(2)?,
                        params_json: r.get(3)?,
                        workload: r.get(4)?,
                        failure: failure.map(|text| TrialFailure::from_stored(kind.as_deref(), &text)),
                        started_unix: r.get(7)?,
                        ended_unix: r.get(8)?,
                        limit_mechanism: r.get(9)?,
                        limit_proof: r.get(10)?,
                        stdout_tail: r.get(11)?,
                        stderr_tail: r.get(12)?,
                        phases: vec![],
                    },
                    metrics: vec![],
                    histograms: vec![],
                    series: vec![],
                    errors: vec![],
                })
            })?
            .collect::<Result<_, _>>()?;
        let index: BTreeMap<usize, usize> = trials.iter().enumerate().map(|(i, t)| (t.id, i)).collect();
        let c = self.conn();
        let mut st = c.prepare("SELECT trial_id, name, start_s, end_s FROM phase ORDER BY trial_id, start_s")?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            if let Some(&i) = index.get(&(r.get::<_, i64>(0)? as usize)) {
                trials[i].info.phases.push(PhaseSpan::new(r.get(1)?, r.get(2)?, r.get(3)?));
            }
        }
        // Kinds are stored from schema version 2; before, and for a kind this version does not know,
        // they are inferred from the name and unit.
        let kind = if self.schema_version() >= 2 { "kind" } else { "NULL" };
        let mut st = c.prepare(&format!(
            "SELECT trial_id, name, unit, value, better, {kind} FROM metric ORDER BY trial_id, name"
        ))?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            if let Some(&i) = index.get(&(r.get::<_, i64>(0)? as usize)) {
                let b: String = r.get(4)?;
                let mut m = Metric::new(r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get(3)?, better(&b));
                if let Some(k) = r.get::<_, Option<String>>(5)?.as_deref().and_then(MetricKind::from_text) {
                    m.kind = k;
                }
                trials[i].metrics.push(m);
            }
        }
        let mut st = c.prepare("SELECT trial_id, name, hdr_v2_deflate FROM histogram ORDER BY trial_id, name")?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            if let Some(&i) = index.get(&(r.get::<_, i64>(0)? as usize)) {
                let blob: Vec<u8> = r.get(2)?;
                trials[i].histograms.push(NamedHistogram {
                    name: r.get(1)?,
                    hist: codec::decode_histogram(&blob)?,
                });
            }
        }
        let mut st = c.prepare("SELECT trial_id, name, t_s, value FROM series ORDER BY trial_id, name, t_s")?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            if let Some(&i) = index.get(&(r.get::<_, i64>(0)? as usize)) {
                trials[i].series.push(SeriesPoint {
                    name: r.get(1)?,
                    t_s: r.get(2)?,
                    value: r.get(3)?,
                });
            }
        }
        let mut st = c.prepare("SELECT trial_id, class, count FROM error ORDER BY trial_id, class")?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            if let Some(&i) = index.get(&(r.get::<_, i64>(0)? as usize)) {
                trials[i].errors.push((r.get(1)?, r.get::<_, i64>(2)? as u64));
            }
        }
        Ok(trials)
    }

    /// Every threshold verdict, by point then expression.
    pub fn thresholds(&self) -> anyhow::Result<Vec<StoredThreshold>> {
        let basis = if self.schema_version() >= 2 { "basis" } else { "NULL" };
        let mut st = self.conn().prepare(&format!(
            "SELECT expr, point, observed, passed, {basis} FROM threshold ORDER BY point, rowid"
        ))?;
        let rows = st.query_map([], |r| {
            Ok(StoredThreshold {
                expr: r.get(0)?,
                point: r.get::<_, i64>(1)? as usize,
                observed: r.get(2)?,
                passed: r.get::<_, i64>(3)? != 0,
                basis: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The raw output lines kept for a trial.
    pub fn raw_output(&self, trial_id: usize) -> anyhow::Result<Vec<String>> {
        let mut st = self
            .conn()
            .prepare("SELECT line FROM raw_output WHERE trial_id = ?1 ORDER BY line_no")?;
        let rows = st.query_map(params![trial_id as i64], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
