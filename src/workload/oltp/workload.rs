//! The `oltp` workload of a plan (`type = "oltp"`): the tables are prepared in the trial's setup
//! (before the baseline and the warm-up; not measured), the transactions run on the driver in
//! warm-up and load, and `cleanup = true` drops the tables at the end of the trial. Split over
//! machines by `[workload] from`, segment 0's machine does both once for every segment
//! (`Workload::prepare_shared`, `cleanup_shared`) and the slices do neither.

use super::backend::Database;
use super::config::{prepare, OltpConfig, PrepareMode, Settings};
use super::report::METRICS;
use crate::util::Cancel;
use crate::workload::driver::coordinator::Hooks;
use crate::workload::{Primary, Produces, RunSpec, SetupCtx, Shared, Workload, WorkloadResult};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The SQLite file of a plan run without `db`, in the run directory (kept across trials).
pub const DEFAULT_FILE: &str = "oltp.db";

pub struct OltpWorkload {
    s: Arc<Settings>,
    db: Option<Arc<dyn Database>>,
    /// A directory this workload made for its SQLite file (no run directory), removed on drop.
    own_dir: Option<PathBuf>,
}

impl OltpWorkload {
    pub fn new(cfg: &OltpConfig) -> anyhow::Result<OltpWorkload> {
        Ok(OltpWorkload {
            s: Arc::new(prepare(cfg)?),
            db: None,
            own_dir: None,
        })
    }

    /// The `db` URL the workload uses: the plan's, or a SQLite file in `dir`.
    fn url(&self, dir: Option<&Path>) -> anyhow::Result<(String, Option<PathBuf>)> {
        if let Some(u) = &self.s.db {
            return Ok((u.clone(), None));
        }
        let (dir, own) = match dir {
            Some(d) => (d.to_path_buf(), None),
            None => {
                let d = std::env::temp_dir().join(format!("perflab-oltp-{}-{}", std::process::id(), unique()));
                std::fs::create_dir_all(&d).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", d.display()))?;
                (d.clone(), Some(d))
            }
        };
        Ok((format!("sqlite:{}", dir.join(DEFAULT_FILE).display()), own))
    }

    fn open(&mut self, dir: Option<&Path>) -> anyhow::Result<Arc<dyn Database>> {
        if let Some(db) = &self.db {
            return Ok(db.clone());
        }
        let (url, own) = self.url(dir)?;
        self.own_dir = own;
        let db: Arc<dyn Database> = Arc::from(super::open(&url).map_err(|e| anyhow::anyhow!("db: {e}"))?);
        self.db = Some(db.clone());
        Ok(db)
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

impl Drop for OltpWorkload {
    fn drop(&mut self) {
        self.db = None;
        if let Some(d) = self.own_dir.take() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

impl Workload for OltpWorkload {
    fn name(&self) -> String {
        "oltp".into()
    }

    fn facts(&self) -> Option<String> {
        let s = &self.s;
        let db = match &s.db {
            Some(u) => super::redact_url(u),
            None => format!("sqlite:<run directory>/{DEFAULT_FILE}"),
        };
        let model = match s.rate {
            Some(r) => format!("open model at {r} transactions/s"),
            None => "closed model".into(),
        };
        Some(format!(
            "{} on {db}, {} table(s) × {} rows, {} connection(s), {model}",
            s.scenario.name(),
            s.tables,
            s.table_size,
            s.threads,
        ))
    }

    fn primary(&self) -> Primary {
        // Declared once, with its key figures, in workload/figures.rs.
        crate::workload::figures::OLTP.primary
    }

    fn metrics(&self) -> Produces {
        Produces::only([METRICS])
    }

    fn segment(&mut self, segment: crate::model::Segment) -> Result<(), String> {
        self.s = Arc::new(self.s.segmented(segment)?);
        Ok(())
    }

    fn shared(&self) -> Shared {
        Shared {
            prepare: true,
            cleanup: self.s.cleanup,
        }
    }

    fn segment_shared(&mut self, segment: crate::model::Segment) -> Result<(), String> {
        self.s = Arc::new(self.s.segmented_shared(segment)?);
        Ok(())
    }

    fn prepare_shared(&mut self, ctx: &SetupCtx, progress: bool, cancel: &Cancel) -> anyhow::Result<String> {
        let db = self.open(ctx.run_dir)?;
        let done = super::prepare::prepare(db.as_ref(), &self.s, cancel, progress)?;
        let s = &self.s;
        let (n, rows, at) = (s.tables, s.table_size, db.describe());
        Ok(match (done.loaded.len(), s.prepare) {
            (0, PrepareMode::Never) => format!("prepare = \"never\": the {n} table(s) are in {at}"),
            (0, _) => format!("the {n} table(s) of {at} already held {rows} rows each: nothing loaded"),
            (loaded, _) => format!("{loaded} table(s) × {rows} rows loaded into {at}"),
        })
    }

    fn cleanup_shared(&mut self, cancel: &Cancel) -> anyhow::Result<String> {
        let db = self.open(None)?;
        super::prepare::cleanup(db.as_ref(), &self.s, cancel)?;
        Ok(format!("{} table(s) dropped from {}", self.s.tables, db.describe()))
    }

    fn setup(&mut self, ctx: &SetupCtx, cancel: &Cancel) -> anyhow::Result<()> {
        let db = self.open(ctx.run_dir)?;
        // A slice of `[workload] from`: segment 0's machine prepared the tables before the start.
        if !self.s.shared {
            super::prepare::prepare(db.as_ref(), &self.s, cancel, true)?;
        }
        Ok(())
    }

    fn run(&mut self, spec: RunSpec, cancel: &Cancel, on_load_start: &mut dyn FnMut()) -> anyhow::Result<WorkloadResult> {
        let fresh = self.db.is_none();
        let db = self.open(None)?;
        if fresh && !self.s.shared {
            super::prepare::prepare(db.as_ref(), &self.s, cancel, true)?;
        }
        let hooks = Hooks {
            on_load_start,
            on_tick: &mut |_, _| {},
        };
        let report = super::engine::run(&self.s, &db, spec.warmup, spec.load, cancel, hooks)?;
        let mut r = report.to_result().with_summary(&report.summary());
        if let Some(session) = db.session() {
            // the run's facts: how the database connections were secured and authenticated
            let shown = db.describe();
            let target = shown.split('?').next().unwrap_or_default();
            r.raw.push(format!("{}{target}: {session}", crate::model::result::DB_SESSION_LINE));
        }
        if self.s.cleanup {
            if let Err(e) = super::prepare::cleanup(db.as_ref(), &self.s, cancel) {
                r.failure.get_or_insert(format!("cleanup: {e:#}"));
            }
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_work_says_what_it_did() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("shared.db").display());
        let cfg = |cleanup| OltpConfig {
            db: Some(url.clone()),
            table_size: Some(2500),
            tables: Some(2),
            cleanup,
            ..Default::default()
        };
        let mut w = OltpWorkload::new(&cfg(true)).unwrap();
        assert_eq!(
            w.shared(),
            Shared {
                prepare: true,
                cleanup: true
            }
        );
        let (ctx, cancel) = (SetupCtx::default(), Cancel::new());
        let said = w.prepare_shared(&ctx, false, &cancel).unwrap();
        assert_eq!(said, format!("2 table(s) × 2500 rows loaded into {url}"));
        let again = OltpWorkload::new(&cfg(false))
            .unwrap()
            .prepare_shared(&ctx, false, &cancel)
            .unwrap();
        assert_eq!(
            again,
            format!("the 2 table(s) of {url} already held 2500 rows each: nothing loaded")
        );
        assert_eq!(w.cleanup_shared(&cancel).unwrap(), format!("2 table(s) dropped from {url}"));
        let db = super::super::open(&url).unwrap();
        let mut c = db.connect().unwrap();
        assert_eq!(c.table_rows(1).unwrap(), None, "dropped");
    }
}
