//! The runner: phases, repetitions, the system under test's lifecycle and resource limits.

pub mod cli;
pub mod limits;
pub mod target;
