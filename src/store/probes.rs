//! The latency probes of a trial (`[[probes]]` in a plan): what each probe was (`probe`) and one row
//! per probe sent (`probe_sample`), tagged with the phase it was sent in. The two tables are made
//! when a run first writes a probe, so a store without probes (or written by an older perflab)
//! has none, and reads as having no probes. Their per-phase figures are ordinary metrics of the
//! trial (`probe_<name>_p99_ms`, ...), stored with the workload's.

use super::Store;
use crate::util::redact::Redactor;
use rusqlite::{params, Connection};

const DDL: &str = r#"
CREATE TABLE IF NOT EXISTS probe (
    trial_id INTEGER NOT NULL REFERENCES trial(id),
    name TEXT NOT NULL,              -- the probe's name in the plan (metrics are probe_<name>_...)
    kind TEXT NOT NULL,              -- icmp | tcp | http | udp | command
    target TEXT NOT NULL,
    interval_s REAL NOT NULL,
    detail TEXT NOT NULL,            -- how it measured, e.g. "datagram socket, 56-byte payload"
    started_s REAL NOT NULL,         -- its first send, seconds since the trial started
    PRIMARY KEY (trial_id, name)
);
CREATE TABLE IF NOT EXISTS probe_sample (
    trial_id INTEGER NOT NULL REFERENCES trial(id),
    probe TEXT NOT NULL,             -- probe.name
    seq INTEGER NOT NULL,            -- 0, 1, 2, ... in send order
    phase TEXT NOT NULL,             -- the phase at its send time
    t_s REAL NOT NULL,               -- send time, seconds since the trial started
    outcome TEXT NOT NULL,           -- reply | failed | timeout | error
    rtt_ms REAL,                     -- reply and failed: the time it took
    status INTEGER,                  -- failed: the exit status or HTTP status
    packets INTEGER NOT NULL,        -- the probe's own traffic, out + in
    bytes INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS probe_sample_by_trial ON probe_sample(trial_id, probe);
"#;

/// One probe of one trial, as the runner hands it to the store.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProbeRecord {
    pub name: String,
    pub kind: String,
    pub target: String,
    pub interval_s: f64,
    pub detail: String,
    /// Seconds since the trial started.
    pub started_s: f64,
    pub samples: Vec<ProbeRow>,
}

/// One probe sent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProbeRow {
    pub seq: u64,
    pub phase: String,
    /// Seconds since the trial started.
    pub t_s: f64,
    /// reply | failed | timeout | error.
    pub outcome: String,
    pub rtt_ms: Option<f64>,
    pub status: Option<i64>,
    pub packets: u64,
    pub bytes: u64,
}

/// Write a trial's probes (inside its transaction); nothing at all when it has none.
pub(super) fn insert(conn: &Connection, trial: usize, probes: &[ProbeRecord], red: &Redactor) -> anyhow::Result<()> {
    if probes.is_empty() {
        return Ok(());
    }
    conn.execute_batch(DDL)?;
    let mut st = conn.prepare(
        "INSERT OR REPLACE INTO probe (trial_id, name, kind, target, interval_s, detail, started_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    let mut rows = conn.prepare(
        "INSERT INTO probe_sample (trial_id, probe, seq, phase, t_s, outcome, rtt_ms, status, packets, bytes)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?;
    for p in probes {
        st.execute(params![
            trial as i64,
            p.name,
            p.kind,
            red.apply(&super::redact(&p.target)),
            p.interval_s,
            red.apply(&p.detail),
            p.started_s
        ])?;
        for r in &p.samples {
            rows.execute(params![
                trial as i64,
                p.name,
                r.seq as i64,
                r.phase,
                r.t_s,
                r.outcome,
                r.rtt_ms.filter(|v| v.is_finite()),
                r.status,
                r.packets as i64,
                r.bytes as i64
            ])?;
        }
    }
    Ok(())
}

impl Store {
    /// Whether the run stored any probe.
    pub fn has_probes(&self) -> anyhow::Result<bool> {
        let n: i64 = self.conn().query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'probe'",
            [],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }

    /// The probes of one trial with their samples in send order (none for a store without probes).
    pub fn probes(&self, trial: usize) -> anyhow::Result<Vec<ProbeRecord>> {
        if !self.has_probes()? {
            return Ok(Vec::new());
        }
        self.read_probes(trial)
            .map_err(|e| self.read_error("probe_sample", Some(trial as i64), e))
    }

    fn read_probes(&self, trial: usize) -> rusqlite::Result<Vec<ProbeRecord>> {
        let mut st = self
            .conn()
            .prepare("SELECT name, kind, target, interval_s, detail, started_s FROM probe WHERE trial_id = ?1 ORDER BY rowid")?;
        let mut out: Vec<ProbeRecord> = st
            .query_map([trial as i64], |r| {
                Ok(ProbeRecord {
                    name: r.get(0)?,
                    kind: r.get(1)?,
                    target: r.get(2)?,
                    interval_s: r.get(3)?,
                    detail: r.get(4)?,
                    started_s: r.get(5)?,
                    samples: Vec::new(),
                })
            })?
            .collect::<Result<_, _>>()?;
        let mut st = self.conn().prepare(
            "SELECT seq, phase, t_s, outcome, rtt_ms, status, packets, bytes FROM probe_sample
             WHERE trial_id = ?1 AND probe = ?2 ORDER BY seq",
        )?;
        for p in &mut out {
            p.samples = st
                .query_map(params![trial as i64, p.name], |r| {
                    Ok(ProbeRow {
                        seq: r.get::<_, i64>(0)? as u64,
                        phase: r.get(1)?,
                        t_s: r.get(2)?,
                        outcome: r.get(3)?,
                        rtt_ms: r.get(4)?,
                        status: r.get(5)?,
                        packets: r.get::<_, i64>(6)? as u64,
                        bytes: r.get::<_, i64>(7)? as u64,
                    })
                })?
                .collect::<Result<_, _>>()?;
        }
        Ok(out)
    }
}
