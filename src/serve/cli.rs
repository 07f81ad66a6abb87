//! The `perflab serve` command line.

#[derive(clap::Args, Debug)]
pub struct ServeArgs {}

pub fn run(_args: ServeArgs) -> anyhow::Result<i32> {
    Err(crate::error::usage("perflab serve is not built yet"))
}
