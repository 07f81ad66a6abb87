//! The `perflab monitor` command line.

#[derive(clap::Args, Debug)]
pub struct MonitorArgs {}

pub fn run(_args: MonitorArgs) -> anyhow::Result<i32> {
    Err(crate::error::usage("perflab monitor is not built yet"))
}
