//! `perflab merge DIR... --out DIR`: the segments' run directories merged into one run, and its
//! report written.

use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// The run directories of the segments 0/N to N-1/N of one plan (`perflab run --segment i/N`)
    #[arg(required = true)]
    pub runs: Vec<PathBuf>,
    /// The merged run's directory (new)
    #[arg(long)]
    pub out: PathBuf,
    /// Formats of the merged run's report, comma-separated: md, html, json, csv, png
    #[arg(long, default_value = "md,html,json,csv")]
    pub format: String,
    /// Merge what is there when a segment is missing, began late, did not complete (left out) or
    /// its own load generator saturated, marked PARTIAL in the run and its report (without it,
    /// any of these refuses the merge)
    #[arg(long)]
    pub allow_partial: bool,
}

pub fn run(args: MergeArgs) -> anyhow::Result<i32> {
    // Ctrl-C or SIGTERM (any number of them) lets the merge and its report finish writing, then
    // removes the merged run: an interrupted merge leaves no run, never half of one.
    let cancel = crate::util::Cancel::on_signals_hurrying()?;
    let made = !args.out.exists();
    let interrupted = || {
        if made {
            let _ = std::fs::remove_dir_all(&args.out);
        }
        eprintln!("perflab: interrupted: nothing merged into {}", args.out.display());
        Ok(130)
    };
    let formats = crate::report::Formats::parse(&args.format)?;
    let merged = super::merge(&args.runs, &args.out, args.allow_partial)?;
    if cancel.is_cancelled() {
        return interrupted();
    }
    let paths = {
        let dirs: Vec<&Path> = vec![merged.dir.as_path()];
        crate::report::write(&dirs, &merged.dir, formats, false).map_err(|e| crate::store::explain(&dirs, e))?
    };
    if cancel.is_cancelled() {
        return interrupted();
    }
    println!(
        "merged {} segments ({} trial(s)) into {}",
        merged.segments,
        merged.trials,
        merged.dir.display()
    );
    if merged.notes[0].starts_with("PARTIAL") {
        eprintln!("warning: {}", merged.notes[0]);
    }
    for n in merged.notes.iter().skip(1) {
        println!("note: {n}");
    }
    print!("{}", paths.summary);
    for (_, p) in &paths.files {
        println!("wrote {}", p.display());
    }
    for t in &merged.thresholds_failed {
        println!("  ✗ threshold {t}");
    }
    // As `perflab run`: 1 when a threshold broke or a trial failed (in any segment).
    Ok(if merged.thresholds_failed.is_empty() && merged.trials_failed == 0 {
        0
    } else {
        1
    })
}
