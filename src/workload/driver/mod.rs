//! The load driver every in-process workload runs on: worker threads, the closed model (a fixed
//! concurrency, each worker sending its next operation when the last one ends) and the open model
//! (a rate, constant or Poisson arrivals, latency measured from each operation's intended time, late
//! and dropped sends counted), the warm-up cutover, one latency histogram per worker merged exactly,
//! the per-second series, each worker thread's own CPU time and the process's (so that a workload can
//! say when the load generator itself was the bottleneck).
//!
//! Two ways in:
//! - [`ops::run`]: a workload supplies an [`ops::Operation`] (one call is one operation) and the
//!   driver runs it on its threads in either model. The built-in `cpu` and `mem` workloads use it.
//! - [`coordinator::drive`]: a workload with its own event loop per thread (the HTTP engine's epoll
//!   and tokio loops) keeps it, and plugs in at the thread level: the driver starts the threads,
//!   calls `on_load_start` at the cutover, merges the per-second [`interval::Interval`]s the loops
//!   send into the series, and returns each thread's result with its CPU and wall time. Its loops
//!   follow the open model's [`schedule::Schedule`] and count late sends by
//!   [`schedule::LATE_TOLERANCE`]; nothing of the driver runs per request.

pub mod clock;
pub mod coordinator;
pub mod interval;
pub mod live;
pub mod ops;
pub mod schedule;
