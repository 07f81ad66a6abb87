//! The sections about the runs themselves: what ran where (Run) and what failed (Failed trials).

use super::table::{num, table, Block, Section};
use crate::report::loaded::safe;
use crate::report::model::ReportModel;

/// One row per run (host, kernel, trials, the CPU limit and its proof), the pooling rule and the
/// run's notes.
pub fn run_facts(m: &ReportModel) -> Section {
    let rows = m
        .runs
        .iter()
        .map(|r| {
            vec![
                safe(&r.run),
                safe(&r.plan),
                safe(&r.host),
                safe(&r.kernel),
                r.ncpu.to_string(),
                num(r.mem_total_mb),
                r.seed.to_string(),
                safe(&r.status),
                format!("{} ok / {} failed (planned {})", r.trials_ok, r.trials_failed, r.planned_trials),
                r.limit_mechanism.as_deref().map_or("none".into(), safe),
                r.limit_proof.as_deref().map_or("–".into(), safe),
            ]
        })
        .collect();
    let header = [
        "run",
        "plan",
        "host",
        "kernel",
        "ncpu",
        "mem MB",
        "seed",
        "status",
        "trials",
        "limit",
        "limit proof",
    ];
    let mut blocks = vec![table(&header, rows)];
    if m.runs.len() > 1 {
        blocks.push(Block::Para(format!(
            "{} runs are pooled: n counts the repetitions of all runs; \"between-run CV\" is the CV of the per-run means.",
            m.runs.len()
        )));
    }
    for n in &m.notes {
        blocks.push(Block::Para(format!("Note: {}", safe(n))));
    }
    Section::new("Run", blocks)
}

/// The failed trials and their (redacted) reasons.
pub fn failed_trials(m: &ReportModel) -> Section {
    let block = if m.failed.is_empty() {
        Block::Para("None.".into())
    } else {
        let rows = m
            .failed
            .iter()
            .map(|f| vec![safe(&f.run), f.trial.to_string(), safe(&f.point), safe(&f.reason)])
            .collect();
        table(&["run", "trial", "point", "reason"], rows)
    };
    Section::new("Failed trials", vec![block])
}
