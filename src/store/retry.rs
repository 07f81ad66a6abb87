//! `perflab run --resume DIR --retry-failed`: the failed trials are taken out of the store, with
//! everything kept of them, so that the resumed run runs them again under the same ids.

use super::Store;

/// The tables whose rows belong to one trial (`trial_id`), in every schema version a resumed store
/// may have after its upgrade (the probes' tables only exist once a run had probes).
const TRIAL_TABLES: &[&str] = &[
    "phase",
    "metric",
    "histogram",
    "series",
    "error",
    "raw_output",
    "sample",
    "sample_clock",
    "sample_series",
    "phase_summary",
    "probe",
    "probe_sample",
    "profile",
];

impl Store {
    /// Remove every failed trial and what was stored of it (samples, metrics, outputs, probes, clock
    /// measurements), all in one transaction; returns their ids, in order.
    pub fn forget_failed_trials(&mut self) -> anyhow::Result<Vec<usize>> {
        let tx = self.conn.transaction()?;
        let ids: Vec<i64> = {
            let mut st = tx.prepare("SELECT id FROM trial WHERE status = 'failed' ORDER BY id")?;
            let rows = st.query_map([], |r| r.get::<_, i64>(0))?;
            rows.collect::<Result<_, _>>()?
        };
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let present: Vec<String> = {
            let mut st = tx.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
            let rows = st.query_map([], |r| r.get::<_, String>(0))?;
            rows.collect::<Result<_, _>>()?
        };
        for table in TRIAL_TABLES.iter().filter(|t| present.iter().any(|p| p == *t)) {
            tx.execute(
                &format!("DELETE FROM {table} WHERE trial_id IN (SELECT id FROM trial WHERE status = 'failed')"),
                [],
            )?;
        }
        for id in &ids {
            tx.execute("DELETE FROM meta WHERE key = ?1", [format!("clock:{id}")])?;
        }
        tx.execute("DELETE FROM trial WHERE status = 'failed'", [])?;
        tx.commit()?;
        Ok(ids.into_iter().map(|i| i as usize).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{TrialFailure, TrialRecord};

    fn trial(id: usize, failed: bool) -> TrialRecord {
        TrialRecord {
            info: crate::model::TrialInfo {
                id,
                point: 0,
                repetition: id as u32 + 1,
                params_json: "{}".into(),
                workload: "exec".into(),
                failure: failed.then(|| TrialFailure::Workload("exit status 1".into())),
                started_unix: 1.0,
                ended_unix: 2.0,
                limit_mechanism: None,
                limit_proof: None,
                stdout_tail: None,
                stderr_tail: None,
                phases: vec![crate::model::PhaseSpan::new(crate::model::Phase::Load, 0.0, 1.0)],
            },
            result: None,
            samples: Vec::new(),
            probes: Vec::new(),
            profiles: Vec::new(),
        }
    }

    #[test]
    fn the_failed_trials_and_their_rows_are_gone_the_others_kept() {
        let tmp = tempfile::tempdir().expect("tmp");
        let mut s = super::super::test_store(tmp.path(), 3, 1);
        for (id, failed) in [(0, true), (1, false), (2, true)] {
            s.write_trial(&trial(id, failed)).expect("trial");
            s.write_clocks(id, &[id]).expect("clocks");
        }
        assert_eq!(s.forget_failed_trials().expect("forget"), vec![0, 2]);
        assert_eq!(s.trial_ids().expect("ids"), vec![1]);
        let phases: i64 = s.conn().query_row("SELECT COUNT(*) FROM phase", [], |r| r.get(0)).expect("count");
        assert_eq!(phases, 1, "only the kept trial's phases");
        assert_eq!(s.clocks::<usize>().expect("clocks"), vec![(1, 1)]);
        // The trials run again are stored under the same ids.
        s.write_trial(&trial(0, false)).expect("again");
        assert_eq!(s.trial_ids().expect("ids"), vec![0, 1]);
        assert_eq!(s.forget_failed_trials().expect("none left"), Vec::<usize>::new());
    }
}
