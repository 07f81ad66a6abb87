//! `perflab load <kind>`: run one built-in workload from the command line (`cpu`, `mem`, `disk`, `net`,
//! `oltp`: the list its help shows comes from the workload registry, [`kinds`]).
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

/// The built-in workloads `perflab load` runs: the registry's kinds that have a subcommand here,
/// in the registry's order (`http` has `perflab http`; `exec` runs other tools).
pub fn kinds() -> Vec<&'static str> {
    use clap::Subcommand;
    let cmd = LoadKind::augment_subcommands(clap::Command::new("load"));
    let subcommands: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
    crate::workload::registry::names()
        .into_iter()
        .filter(|n| subcommands.contains(n))
        .collect()
}

/// `perflab load`'s line in `perflab --help` and at the top of `perflab load --help`.
pub fn about() -> String {
    format!("Load the machine with a built-in workload ({})", kinds().join(", "))
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

#[cfg(test)]
mod tests {
    use clap::Subcommand;

    /// Every subcommand is a kind of the registry, and every kind of the registry but `http` and
    /// `exec` has a subcommand, so the help's list is the command's.
    #[test]
    fn the_subcommands_are_the_registrys_built_in_kinds() {
        let cmd = super::LoadKind::augment_subcommands(clap::Command::new("load"));
        let mut subcommands: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
        subcommands.sort_unstable();
        let mut kinds = super::kinds();
        kinds.sort_unstable();
        assert_eq!(subcommands, kinds);
        let mut built_in: Vec<&str> = crate::workload::registry::names()
            .into_iter()
            .filter(|n| !["http", "exec"].contains(n))
            .collect();
        built_in.sort_unstable();
        assert_eq!(kinds, built_in);
        assert_eq!(
            super::about(),
            "Load the machine with a built-in workload (cpu, mem, disk, net, oltp)"
        );
    }
}
