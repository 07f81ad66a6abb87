//! The `perflab http` command line.

#[derive(clap::Args, Debug)]
pub struct HttpArgs {
    /// Target URL (loopback only in tests and examples)
    pub url: String,
}

pub fn run(_args: HttpArgs) -> anyhow::Result<i32> {
    Err(crate::error::usage("perflab http is not built yet"))
}
