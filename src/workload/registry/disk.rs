//! `type = "disk"`: the built-in disk load (`perflab load disk`), in-process.

use super::{build_builtin, Key, Locator, WorkloadKind};
use crate::workload::disk::workload::DiskWorkload;
use crate::workload::Workload;

pub struct Kind;

const KEYS: &[Key] = &[
    Key { name: "rw", ty: "`\"read\"`, `\"write\"`, `\"randread\"`, `\"randwrite\"` or `\"randrw\"`", default: "`\"randread\"`", doc: "the pattern: sequential or random, reads, writes or both" },
    Key { name: "mix", ty: "number from 0 to 100", default: "`50`", doc: "randrw: % of operations that read" },
    Key { name: "bs", ty: "integer (bytes) or string (`\"4K\"`, `\"1M\"`)", default: "`\"4K\"`", doc: "bytes per operation; a multiple of 512 with direct I/O" },
    Key { name: "iodepth", ty: "integer from 1 to 4096", default: "`1`", doc: "operations in flight per job" },
    Key { name: "jobs", ty: "integer from 1 to 256", default: "`1`", doc: "jobs, each a thread with its own io_uring ring, on the same file" },
    Key { name: "size", ty: "integer (bytes) or string (`\"1G\"`)", default: "`\"1G\"` (a block device: its size)", doc: "the file's size; more than the free space is refused before the run" },
    Key { name: "file", ty: "string (a path)", default: "a new file in a temporary directory", doc: "the file or block device; a file perflab creates is laid out before the run and removed after it" },
    Key { name: "allow_destroy", ty: "string (a path)", default: "none", doc: "writing to a block device destroys its data: name the device here again to allow it" },
    Key { name: "direct", ty: "bool", default: "`true`", doc: "O_DIRECT: past the page cache, to the device" },
    Key { name: "fsync", ty: "integer ≥ 0", default: "`0` (never)", doc: "an fsync after every N writes of a job (not timed as an operation)" },
    Key { name: "keep", ty: "bool", default: "`false`", doc: "keep the file perflab laid out" },
    Key { name: "engine", ty: "`\"auto\"`, `\"io_uring\"` or `\"sync\"`", default: "`\"auto\"`", doc: "`auto`: io_uring, else synchronous pread/pwrite with one thread per operation in flight (said in the result)" },
    Key { name: "ops", ty: "integer ≥ 1", default: "none (time-based)", doc: "stop after this many measured operations over all jobs" },
];

impl WorkloadKind for Kind {
    fn name(&self) -> &'static str {
        "disk"
    }

    fn summary(&self) -> &'static str {
        "perflab's built-in disk load, the options of `perflab load disk` (fio's jobs): IOPS, MiB/s and submission-to-completion latency per direction. Primary figures: `iops` and the p99 of the `read` histogram (`read_lat_p99_us`), or of `write` for write-only patterns."
    }

    fn keys(&self) -> &'static [Key] {
        KEYS
    }

    fn build(&self, table: toml::Table, loc: &dyn Locator) -> anyhow::Result<Box<dyn Workload>> {
        build_builtin(table, KEYS, loc, DiskWorkload::new)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_declared_keys_are_what_the_config_decodes() {
        super::super::assert_declared_keys::<crate::workload::disk::config::DiskConfig>(super::KEYS);
    }
}
