//! `type = "net"` and `perflab load net`: the built-in network load, against `perflab serve --net PORT`, in-process.

use super::config::NetConfig;
use super::workload::NetWorkload;
use crate::workload::registry::spec::{build_builtin, Key, LoadCommand, Locator, Settings, WorkloadKind};
use crate::workload::Workload;

pub struct Kind;

impl WorkloadKind for Kind {
    fn name(&self) -> &'static str {
        "net"
    }

    fn summary(&self) -> &'static str {
        "perflab's built-in network load against `perflab serve --net PORT`, the options of `perflab load net`. Primary figures: stream `gbit_per_s` and `rtt_mean_us`; udp `received_gbit_per_s` and `jitter_ms`; rr/crr `transactions_per_s` and the p99 of the `rtt` histogram (`rtt_p99_us`)."
    }

    fn keys(&self) -> &'static [Key] {
        NetConfig::KEYS
    }

    fn build(&self, table: toml::Table, loc: &dyn Locator) -> anyhow::Result<Box<dyn Workload>> {
        build_builtin(table, loc, NetWorkload::new)
    }

    fn load(&self) -> Option<LoadCommand> {
        Some(LoadCommand::of::<NetConfig>(
            "Load the network (loopback) against `perflab serve --net PORT`: TCP stream, UDP, round trips",
        ))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_key_is_an_option_of_the_command() {
        crate::workload::registry::spec::assert_keys_are_options::<super::NetConfig>(&[]);
    }
}
