//! The `exec` workload: run any command to completion in its own process group, record its exit
//! status, wall time and CPU time, and let a tool adapter (stress-ng, fio, iperf3, sysbench, ...)
//! turn its output into named metrics.

pub mod adapters;
pub mod config;
pub mod names;
pub mod preflight;
pub mod process;
mod workload;

pub use adapters::{Adapter, ParseError, ToolOutput};
pub use config::ExecConfig;
pub use preflight::preflight;
pub use workload::{ExecWorkload, Runner};
