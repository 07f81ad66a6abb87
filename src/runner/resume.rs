//! `perflab run --resume DIR`: the stored run opened, checked and upgraded, the plan compared with
//! the one it was made from, the failed trials taken out to run again (`--retry-failed`), and what
//! the resumed run will do said before it starts.

use super::experiment::Experiment;
use super::progress::Progress;
use crate::store::{reserve, Store};
use anyhow::Context;
use std::collections::HashSet;
use std::path::Path;

/// What a resumed run finds in its store.
#[derive(Default)]
pub struct Resumed {
    /// The trials stored (and not to run again).
    pub done: HashSet<usize>,
    /// Failed trials taken out of the store to run again (`--retry-failed`).
    pub retried: usize,
    /// Failed trials kept as they are (without `--retry-failed`).
    pub failed: usize,
}

/// Open the run in `dir` to add to it.
pub fn open(dir: &Path, exp: &Experiment, retry_failed: bool) -> anyhow::Result<(Store, Resumed)> {
    let mut store = Store::open(dir)?;
    store.check_whole()?;
    store.set_redactor(exp.redactor.clone());
    // A store an older perflab wrote gets the current schema before this run adds to it.
    let from = store.upgrade()?;
    if from != crate::store::SCHEMA_VERSION {
        eprintln!(
            "perflab: upgraded the store of {} from schema version {from} to {} (its samples packed)",
            dir.display(),
            crate::store::SCHEMA_VERSION
        );
    }
    let run = store.run()?;
    // The same plan gives the same copy (which the store kept with its header pass applied).
    let same = [exp.plan_source.clone(), crate::store::redact(&exp.plan_source)];
    if !same.contains(&run.plan_source) {
        return Err(crate::error::usage(format!(
            "{} was made from a different plan; --resume needs the same plan file",
            dir.display()
        )));
    }
    let retried = if retry_failed { store.forget_failed_trials()?.len() } else { 0 };
    let failed = store.trials()?.iter().filter(|t| !t.ok()).count();
    let done: HashSet<usize> = store.trial_ids()?.into_iter().collect();
    reserve::take(dir).with_context(|| format!("cannot resume the run in {}", dir.display()))?;
    store.reopen_run()?;
    Ok((store, Resumed { done, retried, failed }))
}

impl Resumed {
    /// Say what the resumed run in `dir` keeps and what it runs (`todo` trials).
    pub fn announce(&self, progress: &Progress, dir: &Path, todo: usize) {
        let again = match self.retried {
            0 => String::new(),
            n => format!(" ({n} that failed, run again)"),
        };
        progress.note(&format!(
            "resuming {}: {} trial(s) already stored, {todo} to run{again}",
            dir.display(),
            self.done.len(),
        ));
        if self.failed > 0 {
            progress.note(&format!(
                "note: {} stored trial(s) failed and are kept as they are; --retry-failed runs them again",
                self.failed
            ));
        }
    }
}
