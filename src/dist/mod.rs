//! Past one load machine: the segments of a load split over N machines (`perflab run --segment
//! i/N`, docs/distributed.md) put back together, and the files that run them on a cluster.
//!
//! - `perflab merge DIR... --out DIR` checks that the run directories are the segments `0..N-1` of
//!   one plan started at one T0 (`segments.rs`), adds each trial's results up (`runner/merge_figures.rs`,
//!   histograms bucket by bucket, counters summed, per-second series aligned on T0 and summed) and
//!   writes one ordinary run directory (`write.rs`) that `perflab report` and `perflab compare` read
//!   as any other.
//! - `perflab dist slurm|k8s PLAN` (`engines.rs`) writes the files that run each segment on a
//!   cluster users already have (`perflab run --segment auto --start-at T0`, see
//!   [`crate::runner::segment`]), their stores in a shared place for `perflab merge`: [`slurm`], an
//!   sbatch script (N tasks, one per node, a common start computed once before `srun`, then the
//!   merge), submitted with `sbatch --wait` by `--submit`; [`k8s`], an Indexed Job (one pod per
//!   segment, spread over nodes, no retry of a segment), the ConfigMap holding the plan and the
//!   common start, the claim the segments write to and the Job that merges them, built from typed
//!   objects and written as JSON (`kubectl apply -f DIR`); `--apply` (`apply.rs`) applies them itself
//!   with the user's kubeconfig (`kubeconfig.rs`) through a small blocking API client
//!   (`kube_api.rs`), publishes the common start, follows the Job, reads each segment's run
//!   directory from its pod's log and merges them. The plan is checked where the files are
//!   written: it must parse, and every trial's workload must be one that can be cut into segments
//!   (an exec workload cannot).

mod apply;
pub mod cli;
pub mod engines;
pub mod k8s;
mod kube_api;
mod kubeconfig;
mod saturation;
mod segments;
pub mod slurm;
mod write;

pub use crate::runner::merge_figures::{merge_trial, MergedFigures};
pub use segments::{check_segments, SegmentRun};
pub use write::{merge, Merged};

use std::path::Path;

/// A checked plan: its name, its text and the number of segments.
pub struct Checked {
    pub name: String,
    pub source: String,
    pub segments: u32,
}

/// Read and check `path` for `segments` segments: one line (exit code 2) where it cannot run so.
pub fn check(path: &Path, segments: u32) -> anyhow::Result<Checked> {
    let label = path.display().to_string();
    let source = crate::plan::read(path)?;
    let plan = crate::plan::parse_str(&source, &label)?;
    let trials = crate::plan::expand(&plan);
    if let Some(note) = crate::runner::from_plan::check_segments(&plan, &trials, segments)? {
        eprintln!("{note}");
    }
    Ok(Checked {
        name: plan.name.clone(),
        source,
        segments,
    })
}

/// The plan's name as a DNS label (Kubernetes object names, Slurm job names): lower-case letters,
/// digits and `-`, at most `max` characters, never empty.
pub fn dns_label(name: &str, max: usize) -> String {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.truncate(max);
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "plan".into()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::dns_label;

    #[test]
    fn names_become_dns_labels() {
        assert_eq!(dns_label("ab-concurrency", 40), "ab-concurrency");
        assert_eq!(dns_label("My Web  Test (v2)", 40), "my-web-test-v2");
        assert_eq!(dns_label("--", 40), "plan");
        assert_eq!(dns_label("ééé", 40), "plan");
        assert_eq!(dns_label("a-very-long-name-of-a-plan", 10), "a-very-lon");
        assert_eq!(dns_label("abcdefghi-xyz", 10), "abcdefghi");
    }
}
