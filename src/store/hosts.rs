//! The remote hosts of a run, kept in `meta` as JSON (`hosts`): each host's name, destination,
//! perflab version, facts and clock offset ± uncertainty as found before the run (docs/agent.md);
//! and every clock offset measured during the run, one `meta` key per trial (`clock:<trial id>`, a
//! JSON list of the runner's measurements, `remote::Measured`). A run without remote hosts has no such keys.

use super::Store;
use rusqlite::OptionalExtension;

impl Store {
    /// Keep the run's remote hosts (a JSON list, one object per host).
    pub fn write_hosts(&mut self, hosts: &serde_json::Value) -> anyhow::Result<()> {
        self.conn().execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('hosts', ?1)",
            [serde_json::to_string(hosts)?],
        )?;
        Ok(())
    }

    /// The run's remote hosts; None for a run without any.
    pub fn hosts(&self) -> anyhow::Result<Option<serde_json::Value>> {
        let v: Option<String> = self
            .conn()
            .query_row("SELECT value FROM meta WHERE key = 'hosts'", [], |r| r.get(0))
            .optional()
            .map_err(|e| self.read_error("meta", None, e))?;
        match v {
            Some(j) => serde_json::from_str(&j)
                .map(Some)
                .map_err(|_| self.read_error("meta", None, anyhow::anyhow!("the run's hosts (meta key hosts) are not JSON"))),
            None => Ok(None),
        }
    }

    /// Keep a trial's clock measurements (replacing those of an earlier attempt at the same trial).
    pub fn write_clocks<T: serde::Serialize>(&mut self, trial: usize, clocks: &[T]) -> anyhow::Result<()> {
        self.conn().execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
            [format!("clock:{trial}"), serde_json::to_string(clocks)?],
        )?;
        Ok(())
    }

    /// Every clock measurement of the run with its trial id, in trial order (none for a run without
    /// remote hosts, or one stored by a perflab that kept only the offset found before the run).
    pub fn clocks<T: serde::de::DeserializeOwned>(&self) -> anyhow::Result<Vec<(usize, T)>> {
        let read = || -> rusqlite::Result<Vec<(String, String)>> {
            let mut st = self.conn().prepare("SELECT key, value FROM meta WHERE key LIKE 'clock:%'")?;
            let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
            rows.collect()
        };
        let mut out = Vec::new();
        for (key, value) in read().map_err(|e| self.read_error("meta", None, e))? {
            let Some(trial) = key.strip_prefix("clock:").and_then(|t| t.parse::<usize>().ok()) else {
                continue;
            };
            let list: Vec<T> = serde_json::from_str(&value).map_err(|_| {
                self.read_error(
                    "meta",
                    None,
                    anyhow::anyhow!("the clock measurements of trial {trial} (meta key {key}) are not the JSON perflab writes"),
                )
            })?;
            out.extend(list.into_iter().map(|m| (trial, m)));
        }
        out.sort_by_key(|(t, _)| *t);
        Ok(out)
    }
}
