//! The sbatch script of `perflab dist slurm PLAN --nodes N`: N tasks, one per node; the common
//! start computed once, before `srun`, `START_IN` seconds ahead (time for `srun` to start every
//! task); each task runs its segment (`--segment auto` reads `SLURM_PROCID` of `SLURM_NTASKS`)
//! into `DIR/segment-I`; then `perflab merge` adds the segments into `DIR/merged`. `DIR` must be
//! on a file system every node shares.

use super::Checked;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

/// What the script needs besides the plan.
pub struct Settings<'a> {
    pub nodes: u32,
    /// The shared directory (absolute): the plan's copy, the segments' stores, the merged run.
    pub dir: &'a Path,
    /// How far ahead of the job's start the segments begin.
    pub start_in: Duration,
    /// A segment that begins later than this after the common start runs nothing.
    pub tolerance: Duration,
    /// The perflab program on the nodes.
    pub perflab: &'a str,
    /// A partition, an account, a time limit: passed to sbatch as they are (`--partition=debug`).
    pub sbatch: &'a [String],
}

/// A word for a shell script, quoted where it needs it.
pub fn sh_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c)) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The script's text.
pub fn script(plan: &Checked, s: &Settings) -> String {
    let name = super::dns_label(&plan.name, 40);
    let dir = sh_quote(&s.dir.display().to_string());
    let perflab = sh_quote(s.perflab);
    let mut out = String::new();
    let _ = writeln!(out, "#!/bin/bash");
    let _ = writeln!(
        out,
        "# Written by `perflab dist slurm`: plan \"{}\" from {} nodes, one segment each, merged.",
        plan.name.replace('\n', " "),
        s.nodes
    );
    let _ = writeln!(out, "# Submit it with `sbatch --wait` (or `perflab dist slurm --submit`).");
    let _ = writeln!(out, "#SBATCH --job-name=perflab-{name}");
    let _ = writeln!(out, "#SBATCH --nodes={}", s.nodes);
    let _ = writeln!(out, "#SBATCH --ntasks={}", s.nodes);
    let _ = writeln!(out, "#SBATCH --ntasks-per-node=1");
    let _ = writeln!(out, "#SBATCH --output={}/slurm-%j.out", s.dir.display());
    for extra in s.sbatch {
        let _ = writeln!(out, "#SBATCH {extra}");
    }
    let _ = writeln!(out, "set -euo pipefail");
    let _ = writeln!(out, "DIR={dir}");
    let _ = writeln!(out, "PERFLAB={perflab}");
    let _ = writeln!(out, "# The common start, once for every task: srun starts them all within it.");
    let _ = writeln!(out, "T0=$(( $(date +%s) + {} ))", s.start_in.as_secs().max(1));
    let _ = writeln!(out, "status=0");
    let _ = writeln!(
        out,
        "srun --ntasks={n} --ntasks-per-node=1 --kill-on-bad-exit=0 bash -c \\\n  'exec \"$0\" run \"$1/plan.toml\" --segment auto --start-at \"$2\" --start-tolerance {tol}ms --quiet --runs-dir \"$1/segment-$SLURM_PROCID\"' \\\n  \"$PERFLAB\" \"$DIR\" \"$T0\" || status=$?",
        n = s.nodes,
        tol = s.tolerance.as_millis().max(1)
    );
    let _ = writeln!(out, "# A missing, late or failed segment makes the merge refuse, naming it.");
    let _ = writeln!(out, "\"$PERFLAB\" merge \"$DIR\"/segment-*/*/ --out \"$DIR/merged\"");
    let _ = writeln!(out, "exit \"$status\"");
    out
}

/// Write the plan's copy and the script into the shared directory; the script's path.
pub fn write(plan: &Checked, s: &Settings) -> anyhow::Result<std::path::PathBuf> {
    use anyhow::Context;
    std::fs::create_dir_all(s.dir).with_context(|| format!("cannot create {}", s.dir.display()))?;
    let copy = s.dir.join("plan.toml");
    crate::util::fs::write_atomic(&copy, &plan.source).with_context(|| format!("cannot write {}", copy.display()))?;
    let path = s.dir.join("perflab.sbatch");
    crate::util::fs::write_atomic(&path, script(plan, s)).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::sh_quote;

    #[test]
    fn words_are_quoted_for_the_shell() {
        assert_eq!(sh_quote("/shared/perflab"), "/shared/perflab");
        assert_eq!(sh_quote("/my dir"), "'/my dir'");
        assert_eq!(sh_quote("it's"), r"'it'\''s'");
        assert_eq!(sh_quote(""), "''");
        assert_eq!(sh_quote("$(rm -rf /)"), "'$(rm -rf /)'");
    }
}
