//! Small helpers shared by several stages.

pub mod cancel;
pub mod duration;
pub mod time;

pub use cancel::Cancel;
