//! Small helpers shared by several stages.

pub mod cancel;
pub mod charts;
pub mod command;
pub mod cpus;
pub mod cut;
pub mod duration;
pub mod fs;
pub mod listeners;
pub mod netwire;
pub mod process;
pub mod redact;
pub mod rng;
pub mod suggest;
pub mod tail;
pub mod text;
pub mod time;
pub mod tls;
pub mod url;

pub use cancel::Cancel;
pub use tail::Tail;
