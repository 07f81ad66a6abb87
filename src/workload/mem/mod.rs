//! The `mem` built-in workload (`perflab load mem`, `type = "mem"`), on the load driver, in three
//! modes:
//! - `touch` ([`touch`]): allocate `size`, touch every page, hold it through the load phase, and
//!   optionally verify it with memtester's pattern tests ([`patterns`]);
//! - `bandwidth` ([`stream`]): STREAM's copy, scale, add and triad per worker over arrays of at least
//!   four times the last-level cache, the best of the iterations as STREAM reports it (method
//!   `stream`), or a pure sequential read or write of one block per worker ([`seq`], methods `read`
//!   and `write`, sysbench's memory test with a large block);
//! - `latency` ([`chase`]): a dependent random pointer chase over `size`, in ns per access.
//!
//! A size the machine cannot hold is refused before the run ([`size`]).

pub mod chase;
pub mod cli;
pub mod config;
pub mod engine;
pub mod kind;
pub mod op;
pub mod patterns;
pub mod report;
pub mod seq;
pub mod size;
pub mod stream;
pub mod touch;
pub mod workload;

pub use kind::Kind;
