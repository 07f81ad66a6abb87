//! Did a segment's own load generator saturate? A segment whose load generator ran out of CPU
//! sent less than its share of the load, late (its latencies include its own queueing): a total
//! that adds it in is not the load the plan asked for. The segment's own monitor samples answer,
//! through the rule the report uses for the same question (R12, "the load generator itself
//! saturated": its CPU at 90 % or more of the cores it could use, in the load phase).

use crate::analysis::bottleneck::{load_generator_saturated, Context};
use crate::analysis::table::SampleTable;
use crate::store::{Store, StoredTrial, LOCAL_HOST};

/// Where the load generator of the run in `store` (on a machine of `ncpu` CPUs) saturated:
/// "at c=100 (its CPU 196 % in the load phase, the limit 180 %)"; None when it never did or
/// the run has no monitor samples.
pub fn saturated(store: &Store, ncpu: u32, trials: &[StoredTrial]) -> anyhow::Result<Option<String>> {
    let ctx = Context::of(ncpu.max(1));
    let mut at: Vec<String> = Vec::new();
    for p in store.points()? {
        let group: Vec<&StoredTrial> = trials.iter().filter(|t| t.point == p.id).collect();
        if group.is_empty() {
            continue;
        }
        let mut read =
            |i: usize, wanted: &dyn Fn(&str) -> bool, t: &mut SampleTable| store.read_sample_table(group[i].id, LOCAL_HOST, wanted, t);
        at.extend(load_generator_saturated(&p.label, group.len(), &ctx, &mut read)?);
    }
    Ok(if at.is_empty() { None } else { Some(at.join(", ")) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Phase, PhaseSpan, TrialInfo};
    use crate::store::{RunInfo, TaggedSample, TrialRecord};

    /// A one-point run on a 2-CPU machine whose load generator (2 threads) used `cpu` % in the
    /// load phase, 10 % before it.
    fn run(dir: &std::path::Path, cpu: f64) -> Store {
        let mut s = Store::create(dir).unwrap();
        s.write_run(&RunInfo {
            plan_name: "split".into(),
            plan_file: "split.toml".into(),
            plan_source: String::new(),
            seed: 1,
            started_unix: 1_700_000_000.0,
            planned_trials: 1,
        })
        .unwrap();
        s.write_point(0, "c=100", r#"{"concurrency":100}"#, 1, None).unwrap();
        let samples = (0..12)
            .map(|t| {
                let load = t >= 4;
                TaggedSample {
                    phase: if load { "load" } else { "baseline" }.into(),
                    t_s: t as f64 + 0.5,
                    unix_s: 1_700_000_000.0 + t as f64,
                    values: vec![
                        ("proc_loadgen_cpu_pct".into(), if load { cpu } else { 10.0 }),
                        ("proc_loadgen_threads".into(), 2.0),
                        ("cpu_busy_pct".into(), 50.0),
                    ],
                }
            })
            .collect();
        let mut rec = TrialRecord::new(TrialInfo {
            id: 0,
            point: 0,
            repetition: 1,
            params_json: r#"{"concurrency":100}"#.into(),
            workload: "http".into(),
            phases: vec![PhaseSpan::new(Phase::Baseline, 0.0, 4.0), PhaseSpan::new(Phase::Load, 4.0, 12.0)],
            ..TrialInfo::default()
        });
        rec.samples = samples;
        s.write_trial(&rec).unwrap();
        s
    }

    #[test]
    fn a_load_generator_at_90_percent_of_its_cores_is_saturated_below_it_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let busy = run(&dir.path().join("busy"), 196.0);
        let trials = busy.trials().unwrap();
        let said = saturated(&busy, 2, &trials).unwrap().expect("196 % of 2 cores is saturated");
        assert!(
            said.starts_with("at c=100 (its CPU 196 % in the load phase, the limit 180 %)"),
            "{said}"
        );
        let calm = run(&dir.path().join("calm"), 120.0);
        let trials = calm.trials().unwrap();
        assert_eq!(saturated(&calm, 2, &trials).unwrap(), None, "120 % of 2 cores is not");
    }
}
