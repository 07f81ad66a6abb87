//! `perflab serve`. Not built yet.

pub mod cli;
