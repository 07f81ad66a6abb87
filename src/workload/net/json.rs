//! The `perflab.load.net/1` document (docs/load.md), typed: [`NetJson`] is the schema, made from a
//! [`NetReport`] by [`NetReport::document`]; the summary (`text.rs`) and the trial's metrics
//! (`metrics.rs`) read the same document.

use super::report::{gbps, loss_pct, Body, NetReport};
use serde::Serialize;
use std::collections::BTreeMap;

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// The whole document. Serialized through [`NetReport::json`], its keys come out in alphabetical
/// order.
#[derive(Clone, Debug, Serialize)]
pub struct NetJson {
    pub schema: &'static str,
    pub mode: &'static str,
    pub target: String,
    pub streams: usize,
    pub size: usize,
    pub warmup_s: f64,
    pub measured_s: f64,
    pub interrupted: bool,
    /// The mode's figures, under the mode's name.
    pub result: ModeJson,
    pub series: Vec<PerSecond>,
    pub cpu: CpuJson,
    /// Failed connections by class.
    pub errors: BTreeMap<&'static str, u64>,
    pub failure: Option<String>,
}

/// The mode's figures, under its name (`stream`, `udp`, `rr`, `crr`).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ModeJson {
    Stream(StreamJson),
    Udp(UdpJson),
    Rr(RrJson),
    Crr(RrJson),
}

#[derive(Clone, Debug, Serialize)]
pub struct StreamJson {
    pub direction: &'static str,
    pub bytes_asked: Option<u64>,
    pub buffer: Option<u32>,
    pub zerocopy: bool,
    pub bytes: u64,
    pub gbit_per_s: f64,
    pub upload: Moved,
    pub download: Moved,
    pub server_bytes: Option<u64>,
    pub retransmits: u64,
    pub streams: Vec<OneStream>,
}

/// Bytes one way and their rate.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Moved {
    pub bytes: u64,
    pub gbit_per_s: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct OneStream {
    pub direction: &'static str,
    pub bytes: u64,
    pub warmup_bytes: u64,
    pub gbit_per_s: f64,
    pub server_bytes: Option<u64>,
    pub retransmits: u32,
    pub rtt_mean_us: Option<f64>,
    pub rtt_max_us: u32,
    pub seconds: Vec<StreamSecond>,
    pub error: Option<String>,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct StreamSecond {
    pub bytes: u64,
    pub retransmits: u32,
    pub rtt_us: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct UdpJson {
    pub rate_asked_bit_per_s: f64,
    pub datagrams_sent: u64,
    pub bytes_sent: u64,
    pub sent_gbit_per_s: f64,
    pub datagrams_received: u64,
    pub bytes_received: u64,
    pub received_gbit_per_s: f64,
    pub lost: u64,
    pub loss_pct: Option<f64>,
    pub out_of_order: u64,
    pub jitter_ms: Option<f64>,
    pub send_errors: u64,
    pub dropped_by_aid: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct RrJson {
    pub transactions: u64,
    pub transactions_per_s: f64,
    pub connections: u64,
    pub rtt_us: RttUs,
    /// Not in the document (serde skips it): the round trips timed, 0 when `rtt_us` means nothing.
    #[serde(skip)]
    pub timed: u64,
}

/// A round trip's time, µs.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct RttUs {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: u64,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct PerSecond {
    pub t_s: f64,
    pub per_s: f64,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct CpuJson {
    pub client_pct: Option<f64>,
    pub cpu_s_per_gb: Option<f64>,
    pub cpu_us_per_transaction: Option<f64>,
}

impl NetReport {
    fn mode_json(&self) -> ModeJson {
        let p = &self.p;
        let secs = self.secs();
        match &self.body {
            Body::Stream(v) => {
                let (u, d) = self.stream_bytes();
                ModeJson::Stream(StreamJson {
                    direction: p.direction.name(),
                    bytes_asked: p.bytes,
                    buffer: p.buffer,
                    zerocopy: p.zerocopy,
                    bytes: u + d,
                    gbit_per_s: gbps(u + d, secs),
                    upload: Moved {
                        bytes: u,
                        gbit_per_s: gbps(u, secs),
                    },
                    download: Moved {
                        bytes: d,
                        gbit_per_s: gbps(d, secs),
                    },
                    server_bytes: self.server_bytes(),
                    retransmits: v.iter().map(|s| u64::from(s.retransmits)).sum(),
                    streams: v
                        .iter()
                        .map(|s| OneStream {
                            direction: if s.upload { "upload" } else { "download" },
                            bytes: s.bytes,
                            warmup_bytes: s.warmup_bytes,
                            gbit_per_s: gbps(s.bytes, secs),
                            server_bytes: s.server_bytes,
                            retransmits: s.retransmits,
                            rtt_mean_us: finite(s.rtt_mean_us),
                            rtt_max_us: s.rtt_max_us,
                            seconds: s
                                .seconds
                                .iter()
                                .map(|x| StreamSecond {
                                    bytes: x.bytes,
                                    retransmits: x.retransmits,
                                    rtt_us: x.rtt_us,
                                })
                                .collect(),
                            error: s.error.as_ref().map(|e| e.line()),
                        })
                        .collect(),
                })
            }
            Body::Udp(_) => {
                let t = self.udp();
                ModeJson::Udp(UdpJson {
                    rate_asked_bit_per_s: p.rate,
                    datagrams_sent: t.sent,
                    bytes_sent: t.sent_bytes,
                    sent_gbit_per_s: gbps(t.sent_bytes, secs),
                    datagrams_received: t.received,
                    bytes_received: t.received_bytes,
                    received_gbit_per_s: gbps(t.received_bytes, secs),
                    lost: t.lost,
                    loss_pct: finite(loss_pct(&t)),
                    out_of_order: t.out_of_order,
                    jitter_ms: finite(t.jitter_ms),
                    send_errors: t.send_errors,
                    dropped_by_aid: t.dropped_by_aid,
                })
            }
            Body::Rr(r) => {
                let q = |q: f64| NetReport::rr_us(r, q);
                let rr = RrJson {
                    transactions: r.stats.ops,
                    transactions_per_s: r.stats.ops as f64 / secs,
                    connections: r.connections,
                    rtt_us: RttUs {
                        p50: q(0.5),
                        p90: q(0.9),
                        p99: q(0.99),
                        max: r.stats.latency.max(),
                    },
                    timed: r.stats.latency.len(),
                };
                match p.mode {
                    super::config::NetMode::Crr => ModeJson::Crr(rr),
                    _ => ModeJson::Rr(rr),
                }
            }
        }
    }

    /// The `perflab.load.net/1` document, typed.
    pub fn document(&self) -> NetJson {
        let p = &self.p;
        NetJson {
            schema: super::report::SCHEMA,
            mode: p.mode.name(),
            target: p.target.to_string(),
            streams: p.streams,
            size: p.size,
            warmup_s: self.warmup.as_secs_f64(),
            measured_s: self.secs(),
            interrupted: self.interrupted,
            result: self.mode_json(),
            series: self
                .series
                .iter()
                .map(|t| PerSecond {
                    t_s: t.t_s,
                    per_s: t.requests_per_s,
                })
                .collect(),
            cpu: CpuJson {
                client_pct: finite(self.cpu_pct()),
                cpu_s_per_gb: finite(self.cpu_s_per_gb()),
                cpu_us_per_transaction: finite(self.cpu_us_per_transaction()),
            },
            errors: self.errors(),
            failure: self.failure(),
        }
    }

    /// The `perflab.load.net/1` JSON document, as printed (keys in alphabetical order).
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(self.document()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::{Direction, NetMode, Prepared};
    use super::super::report::{Body, NetReport, Rr};
    use super::super::sock::{ErrorClass, NetError};
    use super::super::stream::{Second, StreamStats};
    use super::super::udp::UdpStats;
    use crate::workload::driver::ops::OpStats;
    use crate::workload::result::{assert_json_documented, doc_section};
    use std::time::Duration;

    fn report(mode: NetMode, body: Body) -> serde_json::Value {
        let r = NetReport {
            p: Prepared {
                target: "127.0.0.1:5201".parse().expect("address"),
                mode,
                streams: 1,
                direction: Direction::Upload,
                size: 1400,
                rate: 1e6,
                bytes: None,
                buffer: Some(4096),
                zerocopy: false,
            },
            warmup: Duration::ZERO,
            body,
            series: Vec::new(),
            measured: Duration::from_secs(1),
            wall: Duration::from_secs(1),
            cpu: Duration::from_millis(10),
            interrupted: false,
        };
        r.json()
    }

    /// Each mode's document: its figures under `result.<mode>`, every key named in docs/load.md.
    #[test]
    fn every_key_of_the_json_is_documented() {
        let doc = doc_section(include_str!("../../../docs/load.md"), "perflab.load.net/1");
        let error = Some(NetError {
            class: ErrorClass::Reset,
            message: "reset".into(),
        });
        let stream = StreamStats {
            upload: true,
            bytes: 10,
            warmup_bytes: 0,
            server_bytes: Some(10),
            seconds: vec![Second::default()],
            retransmits: 0,
            rtt_mean_us: 50.0,
            rtt_max_us: 60,
            error: error.clone(),
            ended: None,
        };
        let j = report(NetMode::Stream, Body::Stream(vec![stream]));
        assert_eq!(j["result"]["stream"]["streams"][0]["error"], "reset: reset");
        assert_eq!(j["errors"]["reset"], 1);
        assert_json_documented(&j, doc, &["errors"]);
        let udp = UdpStats {
            server: Some(Default::default()),
            ..Default::default()
        };
        let j = report(NetMode::Udp, Body::Udp(vec![udp]));
        assert_eq!(j["result"]["udp"]["loss_pct"], serde_json::Value::Null);
        assert_json_documented(&j, doc, &["errors"]);
        for mode in [NetMode::Rr, NetMode::Crr] {
            let rr = Rr {
                stats: OpStats::new(),
                connections: 1,
                errors: Default::default(),
                error: None,
            };
            let j = report(mode, Body::Rr(rr));
            assert_eq!(j["result"][mode.name()]["connections"], 1);
            assert_json_documented(&j, doc, &["errors"]);
        }
    }
}
