//! The `net` built-in workload (`perflab load net`, `type = "net"`) against its server half
//! `perflab serve --net PORT` (`serve::net`), on this machine or another: `stream` (TCP bulk transfer, upload,
//! download or both, per-stream `TCP_INFO` retransmits and RTT), `udp` (datagrams at a rate; loss,
//! out-of-order and RFC 3550 jitter counted by the server as iperf3 -u does), `rr` and `crr`
//! (netperf's TCP_RR and TCP_CRR round trips, timed by the load driver into HDR histograms). The
//! wire format both ends share is `util::netwire`.

pub mod cli;
pub mod config;
pub mod engine;
pub mod json;
pub mod kind;
pub mod metrics;
pub mod pace;
pub mod report;
pub mod rr;
pub mod seconds;
pub mod sock;
pub mod stream;
mod text;
pub mod udp;
pub mod workload;

pub use kind::Kind;
