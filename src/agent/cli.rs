//! `perflab agent --stdio`.

use crate::error::usage;

#[derive(clap::Args, Debug)]
pub struct AgentArgs {
    /// Speak the agent protocol on stdin/stdout (the only mode; a controller starts it over ssh)
    #[arg(long)]
    pub stdio: bool,
}

pub fn run(a: AgentArgs) -> anyhow::Result<i32> {
    if !a.stdio {
        return Err(usage(
            "perflab agent needs --stdio (it is started by `perflab run` or `perflab hosts` over ssh)",
        ));
    }
    let stdin = std::io::stdin().lock();
    Ok(super::serve(stdin, super::Out::new(Box::new(std::io::stdout()))))
}
