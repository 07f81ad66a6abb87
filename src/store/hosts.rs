//! The remote hosts of a run, kept in `meta` as JSON (`hosts`): each host's name, destination,
//! perflab version, facts and clock offset ± uncertainty (docs/agent.md). A run without remote
//! hosts has no such key.

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
            .optional()?;
        Ok(match v {
            Some(j) => Some(serde_json::from_str(&j)?),
            None => None,
        })
    }
}
