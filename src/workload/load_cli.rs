//! `perflab load <kind>`: run one built-in workload from the command line (`cpu`, `mem`, `disk`, `net`, `oltp`).
//!
//! Exit codes, as `perflab http`'s: 2 for bad input (one line on stderr, no load started); 130 when
//! interrupted by SIGINT or SIGTERM (the summary of what was measured is still printed); 1 when an
//! operation failed or none was measured; 0 otherwise.

#[derive(clap::Args, Debug)]
pub struct LoadArgs {
    #[command(subcommand)]
    pub kind: LoadKind,
}

#[derive(clap::Subcommand, Debug)]
pub enum LoadKind {
    /// Load the CPUs: workers at a load % each, held by their measured thread CPU time
    Cpu(crate::workload::cpu::cli::CpuArgs),
    /// Load the memory: touch and hold (and verify) a region, STREAM bandwidth, or access latency
    Mem(crate::workload::mem::cli::MemArgs),
    /// Load a disk: fio's jobs (rw, bs, iodepth, jobs) on a file laid out first, io_uring or sync
    Disk(crate::workload::disk::cli::DiskArgs),
    /// Load the network (loopback) against `perflab serve --net PORT`: TCP stream, UDP, round trips
    Net(crate::workload::net::cli::NetArgs),
    /// Load a database with sysbench's OLTP transactions: SQLite (default), PostgreSQL, MySQL/MariaDB
    Oltp(crate::workload::oltp::cli::OltpArgs),
}

pub fn run(a: LoadArgs) -> anyhow::Result<i32> {
    match a.kind {
        LoadKind::Cpu(c) => crate::workload::cpu::cli::run(c),
        LoadKind::Mem(m) => crate::workload::mem::cli::run(m),
        LoadKind::Disk(d) => crate::workload::disk::cli::run(d),
        LoadKind::Net(n) => crate::workload::net::cli::run(n),
        LoadKind::Oltp(o) => crate::workload::oltp::cli::run(o),
    }
}
