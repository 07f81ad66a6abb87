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

/// What a run measured, each once and sorted: what `perflab compare` matches two runs by.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Measured {
    /// The names of the metrics its trials stored.
    pub metrics: Vec<String>,
    /// The workloads its trials ran (`http`, `exec`, ...).
    pub workloads: Vec<String>,
    /// The parameters (`params_json`) of each point that has a trial.
    pub points: Vec<String>,
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
        self.conn()
            .query_row(
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
            )
            .map_err(|e| self.read_error("run", None, e))
    }

    pub fn points(&self) -> anyhow::Result<Vec<StoredPoint>> {
        let read = || -> rusqlite::Result<Vec<StoredPoint>> {
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
            rows.collect()
        };
        read().map_err(|e| self.read_error("point", None, e))
    }

    /// The ids of the trials already stored (for `--resume`).
    pub fn trial_ids(&self) -> anyhow::Result<Vec<usize>> {
        let read = || -> rusqlite::Result<Vec<usize>> {
            let mut st = self.conn().prepare("SELECT id FROM trial ORDER BY id")?;
            let rows = st.query_map([], |r| r.get::<_, i64>(0))?;
            rows.map(|r| r.map(|v| v as usize)).collect()
        };
        read().map_err(|e| self.read_error("trial", None, e))
    }

    /// The run's notes (see `add_notes`); none in a store that has no `notes` key.
    pub fn notes(&self) -> anyhow::Result<Vec<String>> {
        let v: Option<String> = self
            .conn()
            .query_row("SELECT value FROM meta WHERE key = 'notes'", [], |r| r.get(0))
            .optional()
            .map_err(|e| self.read_error("meta", None, e))?;
        Ok(match v {
            Some(j) => {
                serde_json::from_str(&j).map_err(|_| self.read_error("meta", None, anyhow::anyhow!("the run's notes are not JSON")))?
            }
            None => Vec::new(),
        })
    }

    /// Whether secrets were taken out of the plan this store keeps (`mark_plan_redacted`, or a store
    /// from an older perflab whose plan copy shows `[redacted]`): it cannot be run from the store.
    pub fn plan_redacted(&self) -> anyhow::Result<bool> {
        let flag: Option<String> = self
            .conn()
            .query_row("SELECT value FROM meta WHERE key = 'plan_redacted'", [], |r| r.get(0))
            .optional()
            .map_err(|e| self.read_error("meta", None, e))?;
        Ok(flag.is_some() || self.run()?.plan_source.contains(crate::util::redact::REDACTED))
    }

    /// Why the run failed as a whole (`meta` key `failure`), e.g. the disk filled up while a trial
    /// was being stored; `None` for a run that did not fail that way.
    pub fn failure(&self) -> anyhow::Result<Option<String>> {
        self.conn()
            .query_row("SELECT value FROM meta WHERE key = 'failure'", [], |r| r.get(0))
            .optional()
            .map_err(|e| self.read_error("meta", None, e))
    }

    /// Every stored trial, with its metrics, histograms, series and errors (not its samples). A
    /// value that is not what perflab wrote is an error naming the trial (`error::DamagedStore`).
    pub fn trials(&self) -> anyhow::Result<Vec<StoredTrial>> {
        self.trials_of(None)
    }

    /// The stored trials of one point, as [`trials`](Self::trials) reads them (a point's rows
    /// only: what a run reads after each trial stays as large as a point, not the run).
    pub fn trials_at(&self, point: usize) -> anyhow::Result<Vec<StoredTrial>> {
        self.trials_of(Some(point))
    }

    fn trials_of(&self, point: Option<usize>) -> anyhow::Result<Vec<StoredTrial>> {
        // (A number of this code's, not text from the store or the user.)
        let (trial_where, rows_where) = match point {
            Some(p) => (
                format!(" WHERE point = {p}"),
                format!(" WHERE trial_id IN (SELECT id FROM trial WHERE point = {p})"),
            ),
            None => (String::new(), String::new()),
        };
        let c = self.conn();
        let fail = |table: &'static str| move |e: rusqlite::Error| self.read_error(table, None, e);
        // The failure's kind is stored from schema version 4; before, it is told from the text.
        let kind = if self.schema_version() >= 4 { "failure_kind" } else { "NULL" };
        let mut st = c
            .prepare(&format!(
                "SELECT id, point, repetition, params_json, workload, failure, started_unix, ended_unix,
                    limit_mechanism, limit_proof, target_stdout_tail, target_stderr_tail, {kind} FROM trial{trial_where} ORDER BY id"
            ))
            .map_err(fail("trial"))?;
        let mut trials: Vec<StoredTrial> = Vec::new();
        let mut rows = st.query([]).map_err(fail("trial"))?;
        while let Some(r) = rows.next().map_err(fail("trial"))? {
            trials.push(self.trial_row("trial", r, trial_of)?.1);
        }
        let index: BTreeMap<usize, usize> = trials.iter().enumerate().map(|(i, t)| (t.id, i)).collect();
        let mut st = c
            .prepare(&format!(
                "SELECT trial_id, name, start_s, end_s FROM phase{rows_where} ORDER BY trial_id, start_s"
            ))
            .map_err(fail("phase"))?;
        let mut rows = st.query([]).map_err(fail("phase"))?;
        while let Some(r) = rows.next().map_err(fail("phase"))? {
            let (id, phase) = self.trial_row("phase", r, |r| Ok(PhaseSpan::new(r.get(1)?, r.get(2)?, r.get(3)?)))?;
            if let Some(&i) = index.get(&id) {
                trials[i].info.phases.push(phase);
            }
        }
        // Kinds are stored from schema version 2; before, and for a kind this version does not know,
        // they are inferred from the name and unit.
        let kind = if self.schema_version() >= 2 { "kind" } else { "NULL" };
        let mut st = c
            .prepare(&format!(
                "SELECT trial_id, name, unit, value, better, {kind} FROM metric{rows_where} ORDER BY trial_id, name"
            ))
            .map_err(fail("metric"))?;
        let mut rows = st.query([]).map_err(fail("metric"))?;
        while let Some(r) = rows.next().map_err(fail("metric"))? {
            let (id, m) = self.trial_row("metric", r, |r| {
                let b: String = r.get(4)?;
                let mut m = Metric::new(r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get(3)?, better(&b));
                if let Some(k) = r.get::<_, Option<String>>(5)?.as_deref().and_then(MetricKind::from_text) {
                    m.kind = k;
                }
                Ok(m)
            })?;
            if let Some(&i) = index.get(&id) {
                trials[i].metrics.push(m);
            }
        }
        let mut st = c
            .prepare(&format!(
                "SELECT trial_id, name, hdr_v2_deflate FROM histogram{rows_where} ORDER BY trial_id, name"
            ))
            .map_err(fail("histogram"))?;
        let mut rows = st.query([]).map_err(fail("histogram"))?;
        while let Some(r) = rows.next().map_err(fail("histogram"))? {
            let (id, (name, blob)) = self.trial_row("histogram", r, |r| Ok((r.get::<_, String>(1)?, r.get::<_, Vec<u8>>(2)?)))?;
            if let Some(&i) = index.get(&id) {
                let hist = codec::decode_histogram(&blob)
                    .map_err(|_| self.read_error("histogram", Some(id as i64), anyhow::anyhow!(super::damage::histogram(&name))))?;
                trials[i].histograms.push(NamedHistogram { name, hist });
            }
        }
        let mut st = c
            .prepare(&format!(
                "SELECT trial_id, name, t_s, value FROM series{rows_where} ORDER BY trial_id, name, t_s"
            ))
            .map_err(fail("series"))?;
        let mut rows = st.query([]).map_err(fail("series"))?;
        while let Some(r) = rows.next().map_err(fail("series"))? {
            let (id, p) = self.trial_row("series", r, |r| {
                Ok(SeriesPoint {
                    name: r.get(1)?,
                    t_s: r.get(2)?,
                    value: r.get(3)?,
                })
            })?;
            if let Some(&i) = index.get(&id) {
                trials[i].series.push(p);
            }
        }
        let mut st = c
            .prepare(&format!(
                "SELECT trial_id, class, count FROM error{rows_where} ORDER BY trial_id, class"
            ))
            .map_err(fail("error"))?;
        let mut rows = st.query([]).map_err(fail("error"))?;
        while let Some(r) = rows.next().map_err(fail("error"))? {
            let (id, e) = self.trial_row("error", r, |r| Ok((r.get(1)?, r.get::<_, i64>(2)? as u64)))?;
            if let Some(&i) = index.get(&id) {
                trials[i].errors.push(e);
            }
        }
        Ok(trials)
    }

    /// One row of a table whose first column is a trial id: the id and what `f` reads of the row;
    /// a value that is not what perflab wrote is an error naming the trial.
    fn trial_row<T>(
        &self,
        table: &str,
        r: &rusqlite::Row<'_>,
        f: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> anyhow::Result<(usize, T)> {
        let id: i64 = r.get(0).map_err(|e| self.read_error(table, None, e))?;
        let v = f(r).map_err(|e| match super::damage::row_misfit(table, r) {
            // The same words as `perflab store check` and `perflab export` use.
            Some(what) => self.read_error(table, Some(id), anyhow::anyhow!(what)),
            None => self.read_error(table, Some(id), e),
        })?;
        Ok((id as usize, v))
    }

    /// Every threshold verdict, by point then expression.
    pub fn thresholds(&self) -> anyhow::Result<Vec<StoredThreshold>> {
        let basis = if self.schema_version() >= 2 { "basis" } else { "NULL" };
        let read = || -> rusqlite::Result<Vec<StoredThreshold>> {
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
            rows.collect()
        };
        read().map_err(|e| self.read_error("threshold", None, e))
    }

    /// The metrics, workloads and points of the run's trials (see [`Measured`]). Text is read as
    /// it is (a damaged name is met, and named, when the trials are read).
    pub fn measured(&self) -> anyhow::Result<Measured> {
        let list = |sql: &str, table: &str| -> anyhow::Result<Vec<String>> {
            let read = || -> rusqlite::Result<Vec<String>> {
                let mut st = self.conn().prepare(sql)?;
                let rows = st.query_map([], |r| Ok(String::from_utf8_lossy(r.get_ref(0)?.as_bytes()?).into_owned()))?;
                rows.collect()
            };
            read().map_err(|e| self.read_error(table, None, e))
        };
        Ok(Measured {
            metrics: list("SELECT DISTINCT name FROM metric ORDER BY name", "metric")?,
            workloads: list("SELECT DISTINCT workload FROM trial ORDER BY workload", "trial")?,
            points: list(
                "SELECT params_json FROM point WHERE id IN (SELECT point FROM trial) ORDER BY id",
                "point",
            )?,
        })
    }

    /// The raw output lines kept for a trial.
    pub fn raw_output(&self, trial_id: usize) -> anyhow::Result<Vec<String>> {
        let read = || -> rusqlite::Result<Vec<String>> {
            let mut st = self
                .conn()
                .prepare("SELECT line FROM raw_output WHERE trial_id = ?1 ORDER BY line_no")?;
            let rows = st.query_map(params![trial_id as i64], |r| r.get(0))?;
            rows.collect()
        };
        read().map_err(|e| self.read_error("raw_output", Some(trial_id as i64), e))
    }
}

/// A trial's own row (its metrics and the rest are read after).
fn trial_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredTrial> {
    let failure: Option<String> = r.get(5)?;
    let kind: Option<String> = r.get(12)?;
    Ok(StoredTrial {
        info: TrialInfo {
            id: r.get::<_, i64>(0)? as usize,
            point: r.get::<_, i64>(1)? as usize,
            repetition: r.get(2)?,
            params_json: r.get(3)?,
            workload: r.get(4)?,
            failure: failure.map(|text| TrialFailure::from_stored(kind.as_deref(), &text)),
            started_unix: r.get(6)?,
            ended_unix: r.get(7)?,
            limit_mechanism: r.get(8)?,
            limit_proof: r.get(9)?,
            stdout_tail: r.get(10)?,
            stderr_tail: r.get(11)?,
            phases: vec![],
        },
        metrics: vec![],
        histograms: vec![],
        series: vec![],
        errors: vec![],
    })
}

#[cfg(test)]
mod tests {
    use super::super::TrialRecord;
    use crate::model::{Better, Metric, SeriesPoint, WorkloadResult};

    #[test]
    fn a_points_trials_are_those_of_every_trial_at_that_point_with_all_their_rows() {
        let tmp = tempfile::tempdir().expect("tmp");
        let mut s = super::super::test_store(tmp.path(), 4, 2);
        for id in 0..4usize {
            let mut result = WorkloadResult::default();
            result.metrics.push(Metric::new("ops_per_s", "ops/s", id as f64, Better::Higher));
            result.series.push(SeriesPoint {
                name: "ops".into(),
                t_s: 1.0,
                value: 10.0 * id as f64,
            });
            result.errors.push(("timeout".into(), id as u64));
            s.write_trial(&TrialRecord {
                info: crate::model::TrialInfo {
                    id,
                    point: id % 2,
                    repetition: id as u32 / 2 + 1,
                    params_json: "{}".into(),
                    workload: "cpu".into(),
                    started_unix: 1.0,
                    ended_unix: 2.0,
                    phases: vec![crate::model::PhaseSpan::new(crate::model::Phase::Load, 0.0, 1.0)],
                    ..crate::model::TrialInfo::default()
                },
                result: Some(result),
                samples: Vec::new(),
                probes: Vec::new(),
                profiles: Vec::new(),
            })
            .expect("trial");
        }
        let all = s.trials().expect("all");
        let at = s.trials_at(1).expect("point 1");
        let want: Vec<_> = all.iter().filter(|t| t.point == 1).collect();
        assert_eq!(at.iter().map(|t| t.id).collect::<Vec<_>>(), vec![1, 3]);
        for (a, w) in at.iter().zip(want) {
            assert_eq!((&a.metrics, &a.series, &a.errors), (&w.metrics, &w.series, &w.errors));
            assert_eq!(a.info.phases, w.info.phases);
        }
        assert_eq!(at[1].metric("ops_per_s"), Some(3.0));
    }
}
