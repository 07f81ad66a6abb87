//! Per-phase summaries of a trial's monitor samples (`phase_summary`, schema 3): for each sampled
//! metric its baseline, under-load and recovery means, its peak under load and its recovery time
//! (`analysis::phases::metric_phases`), computed once when the trial is stored. The report reads
//! these instead of the raw samples; a store of version 1 or 2 has them computed when read.

use super::samples;
use super::Store;
use super::TaggedSample;
use crate::analysis::phases::{trial_phases, PhaseStats};
use crate::model::{PhaseSpan, LOCAL_HOST};
use rusqlite::{params, Connection};

/// When the load phase ended (seconds since the trial started), from a trial's phases.
pub fn load_end(phases: &[PhaseSpan]) -> Option<f64> {
    PhaseSpan::load_end(phases)
}

/// The summaries of one trial's samples: one per metric, sorted by name.
pub fn summarize(samples: &[TaggedSample], phases: &[PhaseSpan]) -> Vec<PhaseStats> {
    let refs: Vec<_> = samples.iter().map(|s| (s.t_s, s.phase.as_str(), s.values.as_slice())).collect();
    trial_phases(&refs, load_end(phases))
}

/// Store the summaries of one trial's samples taken on `host` (inside the trial's transaction).
pub(super) fn write(c: &Connection, trial_id: usize, host: &str, samples: &[TaggedSample], phases: &[PhaseSpan]) -> anyhow::Result<()> {
    for s in summarize(samples, phases) {
        let id: i64 = c
            .prepare_cached("SELECT id FROM metric_dict WHERE host = ?1 AND name = ?2")?
            .query_row(params![host, s.metric], |r| r.get(0))?;
        c.prepare_cached(
            "INSERT INTO phase_summary (trial_id, metric_id, baseline, n_baseline, under_load, n_load, peak,
                                        recovery, n_recovery, recovery_s, never_recovered)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?
        .execute(params![
            trial_id as i64,
            id,
            s.baseline,
            s.n_baseline as i64,
            s.under_load,
            s.n_load as i64,
            s.peak,
            s.recovery,
            s.n_recovery as i64,
            s.recovery_s,
            s.never_recovered
        ])?;
    }
    Ok(())
}

/// Pack the `sample` rows of a store of version 1 or 2 into the tables of version 3, trial by
/// trial, with their summaries (the upgrade; inside its transaction).
pub(super) fn pack_rows(c: &Connection) -> anyhow::Result<()> {
    let ids: Vec<i64> = c
        .prepare("SELECT DISTINCT trial_id FROM sample ORDER BY trial_id")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for id in ids {
        let id = id as usize;
        let phases: Vec<PhaseSpan> = c
            .prepare_cached("SELECT name, start_s, end_s FROM phase WHERE trial_id = ?1 ORDER BY start_s")?
            .query_map([id as i64], |r| Ok(PhaseSpan::new(r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        let samples = samples::read_rows(c, id)?;
        samples::write(c, id, LOCAL_HOST, &samples)?;
        write(c, id, LOCAL_HOST, &samples, &phases)?;
    }
    Ok(())
}

impl Store {
    /// Store the monitor samples one trial took on another `host` (its metrics get their own
    /// dictionary entries, its times their own clock), with their per-phase summaries, in one
    /// transaction. The trial's own record (`write_trial`) holds this machine's samples.
    pub fn write_host_samples(
        &mut self,
        trial_id: usize,
        host: &str,
        samples: &[TaggedSample],
        phases: &[PhaseSpan],
    ) -> anyhow::Result<()> {
        let tx = self.conn_mut().transaction()?;
        samples::write(&tx, trial_id, host, samples)?;
        write(&tx, trial_id, host, samples, phases)?;
        tx.commit()?;
        Ok(())
    }

    /// Whether a trial has per-phase summaries of samples taken on this machine (that is, has
    /// monitor samples), without reading them.
    pub fn has_phase_summaries(&self, trial_id: usize, phases: &[PhaseSpan]) -> anyhow::Result<bool> {
        if self.schema_version() < 3 {
            return Ok(!self.phase_summaries(trial_id, phases)?.is_empty());
        }
        self.conn()
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM phase_summary p JOIN metric_dict d ON d.id = p.metric_id
                            WHERE p.trial_id = ?1 AND d.host = ?2)",
            )
            .and_then(|mut st| st.query_row(params![trial_id as i64, LOCAL_HOST], |r| r.get(0)))
            .map_err(|e| self.read_error("phase_summary", Some(trial_id as i64), e))
    }

    /// The per-phase summaries of one trial's local samples, sorted by metric name: as stored at the
    /// end of the trial, or (a store of version 1 or 2) computed from its samples now.
    pub fn phase_summaries(&self, trial_id: usize, phases: &[PhaseSpan]) -> anyhow::Result<Vec<PhaseStats>> {
        self.phase_summaries_on(trial_id, LOCAL_HOST, phases)
    }

    /// The per-phase summaries of one trial's samples taken on `host` ("local" for this machine),
    /// sorted by metric name. A store of version 1 or 2 has local samples only.
    pub fn phase_summaries_on(&self, trial_id: usize, host: &str, phases: &[PhaseSpan]) -> anyhow::Result<Vec<PhaseStats>> {
        if self.schema_version() < 3 {
            if host != LOCAL_HOST {
                return Ok(Vec::new());
            }
            return Ok(summarize(&self.samples_on(trial_id, host)?, phases));
        }
        let read = || -> rusqlite::Result<Vec<PhaseStats>> {
            let mut st = self.conn().prepare_cached(
                "SELECT d.name, p.baseline, p.n_baseline, p.under_load, p.n_load, p.peak, p.recovery, p.n_recovery,
                    p.recovery_s, p.never_recovered
             FROM phase_summary p JOIN metric_dict d ON d.id = p.metric_id
             WHERE p.trial_id = ?1 AND d.host = ?2 ORDER BY d.name",
            )?;
            let rows = st.query_map(params![trial_id as i64, host], |r| {
                Ok(PhaseStats {
                    metric: r.get(0)?,
                    baseline: r.get(1)?,
                    n_baseline: r.get::<_, i64>(2)? as usize,
                    under_load: r.get(3)?,
                    n_load: r.get::<_, i64>(4)? as usize,
                    peak: r.get(5)?,
                    recovery: r.get(6)?,
                    n_recovery: r.get::<_, i64>(7)? as usize,
                    recovery_s: r.get(8)?,
                    never_recovered: r.get(9)?,
                })
            })?;
            rows.collect()
        };
        read().map_err(|e| self.read_error("phase_summary", Some(trial_id as i64), e))
    }
}
