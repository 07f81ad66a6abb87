//! `perflab monitor`. Not built yet.

pub mod cli;
