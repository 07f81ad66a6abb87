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

/// Write the plan's copy and the script into the shared directory; the script's path. A directory
/// that holds an earlier job's runs (`segment-I/`, `merged/`) is refused (exit code 2): the merge
/// of a second job there would find every segment twice.
pub fn write(plan: &Checked, s: &Settings) -> anyhow::Result<std::path::PathBuf> {
    use anyhow::Context;
    if let Some(used) = earlier_runs(s.dir) {
        return Err(crate::error::usage(format!(
            "--dir {}: it holds an earlier job's runs ({used}): give a new directory, or move them away",
            s.dir.display()
        )));
    }
    std::fs::create_dir_all(s.dir).with_context(|| format!("cannot create {}", s.dir.display()))?;
    let copy = s.dir.join("plan.toml");
    crate::util::fs::write_atomic(&copy, &plan.source).with_context(|| format!("cannot write {}", copy.display()))?;
    let path = s.dir.join("perflab.sbatch");
    crate::util::fs::write_atomic(&path, script(plan, s)).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// The first of `dir`'s entries a job of the script writes (`segment-I`, `merged`), if any.
fn earlier_runs(dir: &Path) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n == "merged" || n.starts_with("segment-"))
        .collect();
    names.sort();
    names.into_iter().next().map(|n| format!("{n}/"))
}

/// `sbatch --wait SCRIPT`: the job's exit code; where the merged run is, or where Slurm's output
/// says why there is none.
pub fn submit(script: &Path, dir: &Path) -> anyhow::Result<i32> {
    let status = std::process::Command::new("sbatch")
        .arg("--wait")
        .arg(script)
        .status()
        .map_err(|e| {
            let why = match e.kind() {
                std::io::ErrorKind::NotFound => "it is not on the PATH".to_string(),
                kind => kind.to_string(),
            };
            crate::error::usage(format!("cannot run sbatch ({why}): is Slurm's client installed here?"))
        })?;
    let code = status.code().unwrap_or(1);
    if code == 0 {
        println!("the merged run: {}", dir.join("merged").display());
    } else {
        eprintln!(
            "perflab: the Slurm job ended with exit code {code}, no merged run: Slurm's output is in {}",
            dir.join("slurm-JOBID.out").display()
        );
    }
    Ok(code)
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
