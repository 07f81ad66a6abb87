//! The `perflab run` and `perflab demo` command lines.

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The plan file (TOML)
    pub plan: Option<std::path::PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct DemoArgs {}

pub fn run(_args: RunArgs) -> anyhow::Result<i32> {
    Err(crate::error::usage("perflab run is not built yet"))
}

pub fn demo(_args: DemoArgs) -> anyhow::Result<i32> {
    Err(crate::error::usage("perflab demo is not built yet"))
}
