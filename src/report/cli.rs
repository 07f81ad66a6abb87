//! The `perflab report` and `perflab compare` command lines.

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Run directories
    pub runs: Vec<std::path::PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    pub run_a: std::path::PathBuf,
    pub run_b: std::path::PathBuf,
}

pub fn report(_args: ReportArgs) -> anyhow::Result<i32> {
    Err(crate::error::usage("perflab report is not built yet"))
}

pub fn compare(_args: CompareArgs) -> anyhow::Result<i32> {
    Err(crate::error::usage("perflab compare is not built yet"))
}
