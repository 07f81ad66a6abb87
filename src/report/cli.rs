//! The `perflab report` and `perflab compare` command lines.

use super::Formats;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Run directories (several runs of one plan are pooled)
    #[arg(required = true)]
    pub runs: Vec<PathBuf>,
    /// Formats to write, comma-separated: md, html, json, csv, png (every chart also as `charts/<name>.png`)
    #[arg(long, default_value = "md,html,json,csv")]
    pub format: String,
    /// Output directory (default: the run directory, or the first one)
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// The baseline run
    pub run_a: PathBuf,
    /// The run compared against it
    pub run_b: PathBuf,
    /// Formats to write, comma-separated: md, html, json, csv, png (every chart also as `charts/<name>.png`)
    #[arg(long, default_value = "md,html,json")]
    pub format: String,
    /// Output directory (default: <RUN_B>/compare)
    #[arg(long)]
    pub out: Option<PathBuf>,
}

fn finish(paths: &super::ReportPaths) -> i32 {
    print!("{}", paths.summary);
    for (_, p) in &paths.files {
        println!("wrote {}", p.display());
    }
    if !paths.charts.is_empty() {
        println!("wrote {} charts in {}", paths.charts.len(), paths.dir.join("charts").display());
    }
    0
}

pub fn report(args: ReportArgs) -> anyhow::Result<i32> {
    let formats = Formats::parse(&args.format)?;
    let dirs: Vec<&Path> = args.runs.iter().map(|p| p.as_path()).collect();
    let out = args.out.clone().unwrap_or_else(|| args.runs[0].clone());
    let paths = super::write(&dirs, &out, formats, false).map_err(|e| crate::store::explain(&dirs, e))?;
    Ok(finish(&paths))
}

pub fn compare(args: CompareArgs) -> anyhow::Result<i32> {
    let formats = Formats::parse(&args.format)?;
    let out = args.out.clone().unwrap_or_else(|| args.run_b.join("compare"));
    let dirs = [args.run_a.as_path(), args.run_b.as_path()];
    let paths = super::write(&dirs, &out, formats, true).map_err(|e| crate::store::explain(&dirs, e))?;
    Ok(finish(&paths))
}
