//! Writing a run: the run row, then one transaction per finished trial.

use super::{codec, redact, RunStatus, Store};
use crate::model::{HostIdentity, TrialInfo, WorkloadResult};
use rusqlite::params;

/// The facts about a run, written when it starts.
pub struct RunInfo {
    pub plan_name: String,
    pub plan_file: String,
    /// The plan's text as the run keeps it: the runner gives `plan::Secrets::redacted_source`. The
    /// values of credential headers are redacted again here (unless that would make a plan that was
    /// valid TOML invalid).
    pub plan_source: String,
    pub seed: u64,
    pub started_unix: f64,
    pub planned_trials: usize,
}

/// One monitor sample tagged with the phase it fell in.
#[derive(Clone, Debug)]
pub struct TaggedSample {
    pub phase: String,
    /// Seconds since the trial started.
    pub t_s: f64,
    pub unix_s: f64,
    pub values: Vec<(String, f64)>,
}

/// Everything one trial produced: what every trial has ([`TrialInfo`], read through `Deref`: `rec.id`,
/// `rec.failure`), what its workload measured, the samples taken on this machine and its probes.
pub struct TrialRecord {
    pub info: TrialInfo,
    pub result: Option<WorkloadResult>,
    pub samples: Vec<TaggedSample>,
    /// The plan's `[[probes]]`, every probe sent (see `store/probes.rs`).
    pub probes: Vec<super::ProbeRecord>,
    /// The plan's `[profile]`: the load phase's profiles, per host and kind (`store/profiles.rs`).
    pub profiles: Vec<super::ProfileRecord>,
}

impl TrialRecord {
    /// The record of a trial with nothing measured (yet).
    pub fn new(info: TrialInfo) -> TrialRecord {
        TrialRecord {
            info,
            result: None,
            samples: Vec::new(),
            probes: Vec::new(),
            profiles: Vec::new(),
        }
    }
}

impl std::ops::Deref for TrialRecord {
    type Target = TrialInfo;
    fn deref(&self) -> &TrialInfo {
        &self.info
    }
}

impl std::ops::DerefMut for TrialRecord {
    fn deref_mut(&mut self) -> &mut TrialInfo {
        &mut self.info
    }
}

/// This machine, as the run's row keeps it.
fn this_host() -> HostIdentity {
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .to_string();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .trim()
        .to_string();
    let ncpu = std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1);
    let mem_kb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse::<f64>().ok()))
        })
        .unwrap_or(0.0);
    HostIdentity {
        hostname,
        kernel,
        ncpu,
        mem_total_mb: mem_kb / 1024.0,
    }
}

impl Store {
    pub fn write_run(&mut self, info: &RunInfo) -> anyhow::Result<()> {
        let host = this_host();
        let parses = |text: &str| toml::from_str::<toml::Table>(text).is_ok();
        let mut plan_source = redact(&info.plan_source);
        if !parses(&plan_source) && parses(&info.plan_source) {
            plan_source = info.plan_source.clone();
        }
        self.conn().execute(
            "INSERT INTO run (id, plan_name, plan_file, plan_source, seed, started_unix, status, perflab_version,
                              host, kernel, ncpu, mem_total_mb, planned_trials)
             VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                info.plan_name,
                info.plan_file,
                plan_source,
                info.seed as i64,
                info.started_unix,
                RunStatus::Running,
                env!("CARGO_PKG_VERSION"),
                host.hostname,
                host.kernel,
                host.ncpu,
                host.mem_total_mb,
                info.planned_trials as i64
            ],
        )?;
        Ok(())
    }

    /// Keep the run's notes (points the plan skipped here, variants whose `skip_unless` failed) in
    /// `meta` under the key `notes`, a JSON array; notes already stored (a `--resume`) are not repeated.
    pub fn add_notes(&mut self, notes: &[String]) -> anyhow::Result<()> {
        let mut all = self.notes()?;
        for n in notes.iter().map(|n| self.redactor.apply(n)) {
            if !all.contains(&n) {
                all.push(n);
            }
        }
        if !all.is_empty() {
            self.conn().execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('notes', ?1)",
                [serde_json::to_string(&all)?],
            )?;
        }
        Ok(())
    }

    /// Record that secrets were taken out of the plan kept in the store (`meta.plan_redacted`): it
    /// cannot be run again from there.
    pub fn mark_plan_redacted(&mut self) -> anyhow::Result<()> {
        self.conn()
            .execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('plan_redacted', '1')", [])?;
        Ok(())
    }

    /// Mark the run complete, interrupted or failed.
    pub fn finish_run(&mut self, status: RunStatus, ended_unix: f64) -> anyhow::Result<()> {
        self.conn().execute(
            "UPDATE run SET status = ?1, ended_unix = ?2 WHERE id = 1",
            params![status, ended_unix],
        )?;
        Ok(())
    }

    /// Mark a resumed run as running again (forgetting why it failed, if it did).
    pub fn reopen_run(&mut self) -> anyhow::Result<()> {
        self.conn()
            .execute("UPDATE run SET status = ?1, ended_unix = NULL WHERE id = 1", [RunStatus::Running])?;
        self.conn().execute("DELETE FROM meta WHERE key = 'failure'", [])?;
        Ok(())
    }

    /// Run `f` in one transaction: all its writes are kept, or none (the last writes of a run
    /// need little room this way).
    pub fn in_transaction<T>(&mut self, f: impl FnOnce(&mut Store) -> anyhow::Result<T>) -> anyhow::Result<T> {
        self.conn().execute_batch("BEGIN IMMEDIATE")?;
        match f(self) {
            Ok(v) => {
                if let Err(e) = self.conn().execute_batch("COMMIT") {
                    let _ = self.conn().execute_batch("ROLLBACK");
                    return Err(e.into());
                }
                Ok(v)
            }
            Err(e) => {
                let _ = self.conn().execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Keep why the run failed as a whole in `meta` under the key `failure`.
    pub fn set_failure(&mut self, reason: &str) -> anyhow::Result<()> {
        self.conn()
            .execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('failure', ?1)", [redact(reason)])?;
        Ok(())
    }

    /// Move everything in the write-ahead log into the database file and empty the log
    /// (`PRAGMA wal_checkpoint(TRUNCATE)`), so a finished run is one self-contained file.
    pub fn checkpoint(&mut self) -> anyhow::Result<()> {
        let busy: i64 = self.conn().query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
        if busy != 0 {
            anyhow::bail!("the database was busy; its write-ahead log was not emptied");
        }
        Ok(())
    }

    /// Record (or update) a matrix point and why its repetitions stopped.
    pub fn write_point(
        &mut self,
        id: usize,
        label: &str,
        params_json: &str,
        repetitions: u32,
        stop_reason: Option<&str>,
    ) -> anyhow::Result<()> {
        self.conn().execute(
            "INSERT INTO point (id, label, params_json, repetitions, stop_reason) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT(id) DO UPDATE SET repetitions = excluded.repetitions, stop_reason = excluded.stop_reason",
            params![
                id as i64,
                self.redactor.apply(label),
                self.redactor.apply(params_json),
                repetitions,
                stop_reason
            ],
        )?;
        Ok(())
    }

    /// Store one finished trial, all in one transaction.
    pub fn write_trial(&mut self, t: &TrialRecord) -> anyhow::Result<()> {
        let red = &self.redactor;
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO trial (id, point, repetition, params_json, workload, status, failure, failure_kind, started_unix,
                                ended_unix, limit_mechanism, limit_proof, target_stdout_tail, target_stderr_tail)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![
                t.id as i64,
                t.point as i64,
                t.repetition,
                red.apply(&t.params_json),
                t.workload,
                if t.failure.is_some() { "failed" } else { "ok" },
                t.failure.as_ref().map(|f| red.apply(&f.to_string())),
                t.failure.as_ref().map(|f| f.kind()),
                t.started_unix,
                t.ended_unix,
                t.limit_mechanism,
                t.limit_proof,
                t.stdout_tail.as_deref().map(|s| red.apply(s)),
                t.stderr_tail.as_deref().map(|s| red.apply(s)),
            ],
        )?;
        {
            let mut st = tx.prepare("INSERT INTO phase (trial_id, name, start_s, end_s) VALUES (?1, ?2, ?3, ?4)")?;
            for p in &t.phases {
                st.execute(params![t.id as i64, p.phase, p.start_s, p.end_s])?;
            }
        }
        super::samples::write(&tx, t.id, super::LOCAL_HOST, &t.samples)?;
        super::summary::write(&tx, t.id, super::LOCAL_HOST, &t.samples, &t.phases)?;
        if let Some(r) = &t.result {
            let mut st =
                tx.prepare("INSERT OR REPLACE INTO metric (trial_id, name, unit, value, better, kind) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
            for m in r.metrics.iter().filter(|m| m.value.is_finite()) {
                st.execute(params![
                    t.id as i64,
                    red.apply(&m.name),
                    m.unit,
                    m.value,
                    m.better.as_str(),
                    m.kind.to_text()
                ])?;
            }
            let mut st = tx.prepare("INSERT OR REPLACE INTO histogram (trial_id, name, count, hdr_v2_deflate) VALUES (?1, ?2, ?3, ?4)")?;
            for h in &r.histograms {
                st.execute(params![t.id as i64, h.name, h.hist.len() as i64, codec::encode_histogram(&h.hist)?])?;
            }
            let mut st = tx.prepare("INSERT INTO series (trial_id, name, t_s, value) VALUES (?1, ?2, ?3, ?4)")?;
            for p in r.series.iter().filter(|p| p.value.is_finite()) {
                st.execute(params![t.id as i64, p.name, p.t_s, p.value])?;
            }
            let mut st = tx.prepare("INSERT INTO error (trial_id, class, count) VALUES (?1, ?2, ?3)")?;
            for (class, n) in &r.errors {
                st.execute(params![t.id as i64, red.apply(class), *n as i64])?;
            }
            let mut st = tx.prepare("INSERT INTO raw_output (trial_id, line_no, line) VALUES (?1, ?2, ?3)")?;
            for (i, line) in r.raw.iter().enumerate() {
                st.execute(params![t.id as i64, i as i64, red.apply(line)])?;
            }
        }
        super::probes::insert(&tx, t.id, &t.probes, red)?;
        super::profiles::insert(&tx, t.id, &t.profiles)?;
        tx.commit()?;
        Ok(())
    }

    /// One threshold's verdict at one point; `basis` says what `observed` is ("median of 3 trials'
    /// p99").
    pub fn write_threshold(&mut self, expr: &str, point: usize, observed: Option<f64>, basis: &str, passed: bool) -> anyhow::Result<()> {
        self.conn().execute(
            "INSERT INTO threshold (expr, point, observed, passed, basis) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![expr, point as i64, observed, passed as i64, basis],
        )?;
        Ok(())
    }

    pub fn clear_thresholds(&mut self) -> anyhow::Result<()> {
        self.conn().execute("DELETE FROM threshold", [])?;
        Ok(())
    }
}
