//! The `disk` built-in workload (`perflab load disk`, `type = "disk"`): fio's jobs, in-process.
//! A file (or a block device) is laid out before the measured phase with incompressible data; then
//! `jobs` jobs each keep `iodepth` operations of `bs` bytes in flight (io_uring, or one synchronous
//! thread per operation in flight where io_uring is not allowed), reading and writing in the `rw`
//! pattern with O_DIRECT by default, for the load phase or an exact number of operations. Every
//! operation is timed from submission to completion into a histogram of its direction; the result
//! gives IOPS, MiB/s, the latency percentiles, the per-second series, the CPU per I/O and the bytes
//! the kernel counted for the jobs' threads.

pub mod cli;
pub mod config;
pub mod engine;
pub mod file;
pub mod job;
pub mod kind;
pub mod report;
pub mod sync;
pub mod uring;
pub mod workload;

pub use kind::Kind;
