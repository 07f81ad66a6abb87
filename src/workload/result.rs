//! The result model now lives in `crate::model` (the bottom layer); these paths stay for the
//! workloads that name them.

pub use crate::model::result::*;
