//! `type = "net"`: the built-in network load (`perflab load net`), in-process, against `perflab
//! serve --net PORT`.

use super::{build_builtin, Key, Locator, WorkloadKind};
use crate::workload::net::workload::NetWorkload;
use crate::workload::Workload;

pub struct Kind;

const KEYS: &[Key] = &[
    Key { name: "target", ty: "string", default: "required", doc: "the server, `perflab serve --net PORT`: `\"HOST:PORT\"` (`\"127.0.0.1:5201\"`, `\"[::1]:5201\"`, `\"server:5201\"`)" },
    Key { name: "mode", ty: "`\"stream\"`, `\"udp\"`, `\"rr\"` or `\"crr\"`", default: "`\"stream\"`", doc: "TCP bulk transfer, UDP at a rate, round trips on kept connections (TCP_RR), or a connection per round trip (TCP_CRR)" },
    Key { name: "streams", ty: "integer from 1 to 256", default: "`1`", doc: "connections (stream, rr, crr) or UDP senders" },
    Key { name: "direction", ty: "`\"upload\"`, `\"download\"` or `\"both\"`", default: "`\"upload\"`", doc: "stream: who sends (`both`: a connection each way per stream)" },
    Key { name: "size", ty: "integer (bytes) or string (`\"128K\"`)", default: "stream `\"128K\"`, udp `1400`, rr/crr `1`", doc: "bytes per write, per datagram (32 to 65 507), or per request and response" },
    Key { name: "rate", ty: "integer (bit/s) or string (`\"500M\"`, `\"1G\"`)", default: "`\"1M\"` (as iperf3)", doc: "udp: the send rate over all senders" },
    Key { name: "bytes", ty: "integer or string (`\"1G\"`)", default: "none (time-based)", doc: "stream: move exactly this many bytes over all streams, then stop (no warm-up)" },
    Key { name: "buffer", ty: "integer or string (`\"4M\"`)", default: "the kernel's", doc: "SO_SNDBUF and SO_RCVBUF of both ends, set before connecting (capped by `net.core.wmem_max`/`rmem_max`)" },
    Key { name: "zerocopy", ty: "bool", default: "`false`", doc: "stream upload: send with MSG_ZEROCOPY (refused where the kernel lacks SO_ZEROCOPY)" },
];

impl WorkloadKind for Kind {
    fn name(&self) -> &'static str {
        "net"
    }

    fn summary(&self) -> &'static str {
        "perflab's built-in network load against `perflab serve --net PORT`, the options of `perflab load net`. Primary figures: stream `gbit_per_s` and `rtt_mean_us`; udp `received_gbit_per_s` and `jitter_ms`; rr/crr `transactions_per_s` and the p99 of the `rtt` histogram (`rtt_p99_us`)."
    }

    fn keys(&self) -> &'static [Key] {
        KEYS
    }

    fn build(&self, table: toml::Table, loc: &dyn Locator) -> anyhow::Result<Box<dyn Workload>> {
        build_builtin(table, KEYS, loc, NetWorkload::new)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_declared_keys_are_what_the_config_decodes() {
        super::super::assert_declared_keys::<crate::workload::net::config::NetConfig>(super::KEYS);
    }
}
