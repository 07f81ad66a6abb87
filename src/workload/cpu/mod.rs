//! The `cpu` built-in workload (`perflab load cpu`, `type = "cpu"`): worker threads doing a fixed
//! unit of arithmetic per operation ([`methods`]), each held at `load` % of its CPU by a closed loop
//! on its own measured thread CPU time ([`duty`]), run on the load driver. The result says the load
//! asked and the load achieved (mean ± sd over the load phase, per worker and in total) and the work
//! done per method, in operations per second and per CPU-second.

pub mod cli;
pub mod config;
pub mod duty;
pub mod engine;
pub mod kind;
pub mod methods;
pub mod op;
pub mod report;
pub mod workload;

pub use kind::Kind;
