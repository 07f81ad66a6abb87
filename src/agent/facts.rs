//! The facts an agent reports about its host: the runner's reading of this machine
//! (`runner::hosts::local_facts`), which a run also keeps for `local`.

use crate::remote::protocol::Facts;

/// This host's name, architecture, kernel, CPU model and count, memory and cgroup mechanism.
pub fn facts() -> Facts {
    crate::runner::hosts::local_facts()
}
