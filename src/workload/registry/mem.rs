//! `type = "mem"`: the built-in memory load (`perflab load mem`), in-process.

use super::{build_builtin, Key, Locator, WorkloadKind};
use crate::workload::mem::workload::MemWorkload;
use crate::workload::Workload;

pub struct Kind;

const KEYS: &[Key] = &[
    Key { name: "mode", ty: "`\"touch\"`, `\"bandwidth\"` or `\"latency\"`", default: "required", doc: "touch and hold a region (and verify it), memory bandwidth (STREAM, or a sequential read or write), or pointer-chase latency" },
    Key { name: "size", ty: "integer (bytes) or string (`\"512M\"`, `\"2G\"`, `\"75%\"`)", default: "touch: required; latency: `\"64M\"`; bandwidth: 4 × the last-level cache", doc: "touch: the region; latency: the working set; bandwidth: each array (method read or write: each block); more than the machine can give is refused" },
    Key { name: "verify", ty: "bool", default: "`false`", doc: "touch: run memtester's pattern tests over the region and report each one" },
    Key { name: "workers", ty: "integer ≥ 1", default: "`1`", doc: "bandwidth: worker threads, each with its own arrays" },
    Key { name: "method", ty: "`\"stream\"`, `\"read\"` or `\"write\"`", default: "`\"stream\"`", doc: "bandwidth: STREAM's four kernels, or a pure sequential read (a sum of every 8-byte word) or write of one block of `size` per worker, one pass per operation" },
];

impl WorkloadKind for Kind {
    fn name(&self) -> &'static str {
        "mem"
    }

    fn summary(&self) -> &'static str {
        "perflab's built-in memory load, the options of `perflab load mem`. Primary figures: touch `touch_mib_per_s`; bandwidth `triad_mib_per_s` (method read: `read_mib_per_s`, write: `write_mib_per_s`); latency `accesses_per_s` and `access_latency_ns`."
    }

    fn keys(&self) -> &'static [Key] {
        KEYS
    }

    fn build(&self, table: toml::Table, loc: &dyn Locator) -> anyhow::Result<Box<dyn Workload>> {
        build_builtin(table, KEYS, loc, MemWorkload::new)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_declared_keys_are_what_the_config_decodes() {
        super::super::assert_declared_keys::<crate::workload::mem::config::MemConfig>(super::KEYS);
    }
}
