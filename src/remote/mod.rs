//! Remote hosts, the controller's side: the agent protocol (`protocol`, shared with `agent`), the
//! ssh transport, a channel to one agent, the NTP-style clock offset, and `perflab hosts
//! check|install`. docs/agent.md describes the protocol and the commands.

pub mod channel;
pub mod cli;
pub mod clock;
mod install;
mod monitor;
pub mod programs;
pub mod protocol;
pub mod ssh;

pub use channel::Channel;
pub use clock::{Measured, Offset};
pub use install::install;
pub use monitor::run as monitor;

use crate::plan::HostSpec;

/// How many clock exchanges a measurement makes (the smallest round trip wins).
pub const CLOCK_EXCHANGES: usize = 8;

/// Open a channel to the agent on `h` over ssh.
pub fn open(h: &HostSpec) -> anyhow::Result<Channel> {
    Channel::open(&h.name, ssh::command(h, &ssh::agent_command(h)))
}
