//! Run facts kept in `meta` as JSON: the workload's primary figures (`primary`).

use super::Store;
use crate::model::PrimaryMetrics;
use rusqlite::OptionalExtension;

impl Store {
    /// Keep `value` as JSON under `key` in `meta` (replacing what was there).
    pub(super) fn write_meta_json<T: serde::Serialize>(&mut self, key: &str, value: &T) -> anyhow::Result<()> {
        self.conn().execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
            [key.to_string(), serde_json::to_string(value)?],
        )?;
        Ok(())
    }

    /// The JSON kept under `key` in `meta`, or None where there is none; `not_json` is the error
    /// when it does not read ("the run's primary figures (meta key primary) are not JSON").
    pub(super) fn meta_json<T: serde::de::DeserializeOwned>(&self, key: &str, not_json: &str) -> anyhow::Result<Option<T>> {
        let v: Option<String> = self
            .conn()
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| self.read_error("meta", None, e))?;
        match v {
            Some(j) => serde_json::from_str(&j)
                .map(Some)
                .map_err(|_| self.read_error("meta", None, anyhow::anyhow!("{not_json}"))),
            None => Ok(None),
        }
    }

    /// Keep the names of the run's primary throughput and latency metrics (`meta.primary`), so that
    /// the analysis sweeps the workload's own headline figure.
    pub fn write_primary(&mut self, p: &PrimaryMetrics) -> anyhow::Result<()> {
        self.write_meta_json("primary", p)
    }

    /// The run's primary figures; None for a run that stored none (written before they were kept,
    /// or interrupted before its end).
    pub fn primary(&self) -> anyhow::Result<Option<PrimaryMetrics>> {
        self.meta_json("primary", "the run's primary figures (meta key primary) are not JSON")
    }

    /// The primary throughput metric of the run in `dir`, if it stored one (a report falls back to
    /// its own choice otherwise, so an unreadable store is just "none" here).
    pub fn primary_throughput_of(dir: &std::path::Path) -> Option<String> {
        Store::open(dir).ok()?.primary().ok()??.throughput
    }
}
