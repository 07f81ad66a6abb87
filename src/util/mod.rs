//! Small helpers shared by several stages.

pub mod cancel;
pub mod duration;

pub use cancel::Cancel;
