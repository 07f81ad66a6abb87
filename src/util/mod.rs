//! Small helpers shared by several stages.

pub mod cancel;
pub mod command;
pub mod cpus;
pub mod duration;
pub mod suggest;
pub mod time;

pub use cancel::Cancel;
