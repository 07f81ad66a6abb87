//! A workload's headline figures now live in `crate::model::primary` (the bottom layer); these
//! paths stay for the workloads that name them.

pub use crate::model::primary::*;
