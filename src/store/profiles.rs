//! The profiles of a trial's load phase (`[profile]` in a plan): one row per trial, host and kind,
//! its folded stacks compressed (DEFLATE of `stack samples ns` lines), or with no stacks and a
//! note saying what was missing. Table `profile`, since schema version 5.

use super::Store;
use crate::model::{Profile, ProfileKind};
use flate2::{read::DeflateDecoder, write::DeflateEncoder, Compression};
use rusqlite::{params, Connection};
use std::io::{Read, Write};

pub(super) const DDL: &str = r#"
CREATE TABLE IF NOT EXISTS profile (
    trial_id INTEGER NOT NULL REFERENCES trial(id),
    host TEXT NOT NULL DEFAULT 'local',
    kind TEXT NOT NULL,              -- on_cpu | off_cpu
    scope TEXT NOT NULL,             -- what was profiled: "process tree of PID 12", "the whole system"
    frequency_hz REAL,               -- on_cpu: the sampling frequency
    window_start_s REAL NOT NULL,    -- the profiled window, seconds since the trial started
    window_end_s REAL NOT NULL,
    first_sample_s REAL,             -- the first and last sample, seconds since the trial started
    last_sample_s REAL,
    samples INTEGER NOT NULL,        -- sum of the stacks' samples
    ns INTEGER NOT NULL,             -- sum of the stacks' time (nanoseconds)
    stacks_deflate BLOB NOT NULL,    -- DEFLATE of `frame;frame;frame samples ns` lines
    notes TEXT NOT NULL,             -- what is missing or was dropped, one per line
    PRIMARY KEY (trial_id, host, kind)
);
"#;

/// A profile of one trial as the runner hands it to the store: the host it was taken on.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileRecord {
    pub host: String,
    pub profile: Profile,
}

/// Write a trial's profiles (inside its transaction).
pub(super) fn insert(conn: &Connection, trial: usize, profiles: &[ProfileRecord]) -> anyhow::Result<()> {
    if profiles.is_empty() {
        return Ok(());
    }
    let mut st = conn.prepare(
        "INSERT OR REPLACE INTO profile (trial_id, host, kind, scope, frequency_hz, window_start_s, window_end_s,
         first_sample_s, last_sample_s, samples, ns, stacks_deflate, notes)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?;
    for r in profiles {
        let p = &r.profile;
        let kind = p.kind.unwrap_or(ProfileKind::OnCpu);
        st.execute(params![
            trial as i64,
            r.host,
            kind.name(),
            p.scope,
            p.frequency_hz,
            p.window.0,
            p.window.1,
            p.sampled.map(|s| s.0),
            p.sampled.map(|s| s.1),
            p.total_samples() as i64,
            p.total_ns() as i64,
            deflate(p.to_lines().as_bytes())?,
            p.notes.join("\n"),
        ])?;
    }
    Ok(())
}

fn deflate(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut e = DeflateEncoder::new(Vec::new(), Compression::default());
    e.write_all(bytes)?;
    e.finish()
}

/// The stacks of a stored blob; None when it does not decode.
pub fn inflate_stacks(blob: &[u8]) -> Option<Vec<crate::model::FoldedStack>> {
    let mut text = String::new();
    DeflateDecoder::new(blob).read_to_string(&mut text).ok()?;
    Profile::stacks_from_lines(&text)
}

impl Store {
    /// Whether this store can hold profiles (schema 5 and later).
    fn has_profiles(&self) -> anyhow::Result<bool> {
        let n: i64 = self.conn().query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'profile'",
            [],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }

    /// The profiles of a trial, by host then kind (none in a store older than version 5).
    pub fn profiles(&self, trial: usize) -> anyhow::Result<Vec<ProfileRecord>> {
        if !self.has_profiles()? {
            return Ok(Vec::new());
        }
        let mut st = self.conn().prepare(
            "SELECT host, kind, scope, frequency_hz, window_start_s, window_end_s, first_sample_s, last_sample_s,
                    stacks_deflate, notes
             FROM profile WHERE trial_id = ?1 ORDER BY host, kind",
        )?;
        let rows = st.query_map([trial as i64], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<f64>>(3)?,
                (r.get::<_, f64>(4)?, r.get::<_, f64>(5)?),
                (r.get::<_, Option<f64>>(6)?, r.get::<_, Option<f64>>(7)?),
                r.get::<_, Vec<u8>>(8)?,
                r.get::<_, String>(9)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (host, kind, scope, frequency_hz, window, sampled, blob, notes) =
                row.map_err(|e| self.read_error("profile", Some(trial as i64), e))?;
            let Some(stacks) = inflate_stacks(&blob) else {
                let why = anyhow::anyhow!("its {kind} profile's stacks do not decode");
                return Err(self.read_error("profile", Some(trial as i64), why));
            };
            out.push(ProfileRecord {
                host,
                profile: Profile {
                    kind: ProfileKind::parse(&kind),
                    scope,
                    frequency_hz,
                    window,
                    sampled: sampled.0.zip(sampled.1),
                    stacks,
                    notes: notes.lines().map(str::to_string).collect(),
                },
            });
        }
        Ok(out)
    }
}
