//! iperf3 `-J` (client side). TCP: `sent_mbitps`, `received_mbitps` (goodput), `retransmits`, and
//! with one stream `rtt_mean_us`, `rtt_max_us`. UDP: `sent_mbitps`, `received_mbitps`,
//! `jitter_ms`, `lost_packets`, `lost_pct`, `packets`. Both: `client_cpu_pct`, `server_cpu_pct`
//! (iperf3's own CPU use, % of one core) and a per-interval series `mbitps`. 1 Mbit = 10^6 bits.
//! iperf3 3.12 exits 0 even when it could not connect: the JSON `error` field is what counts.

use super::text::Metrics;
use super::{Adapter, ParseError, ToolOutput};
use crate::workload::{Better, Primary, SeriesPoint, WorkloadResult};
use serde_json::Value;

pub struct Iperf3;

impl Adapter for Iperf3 {
    fn name(&self) -> &'static str {
        "iperf3"
    }
    fn programs(&self) -> &[&'static str] {
        &["iperf3"]
    }
    fn debian_package(&self) -> &'static str {
        "iperf3"
    }
    fn primary(&self) -> Primary {
        Primary {
            throughput: &["received_mbitps", "sent_mbitps"],
            latency: &["rtt_mean_us", "jitter_ms"],
            latency_histogram: None,
        }
    }

    fn output_files(&self, args: &[String]) -> Vec<String> {
        super::option(args, "--logfile", None).into_iter().collect()
    }

    fn parse(&self, out: &ToolOutput) -> Result<WorkloadResult, ParseError> {
        let text = match out.option("--logfile", None) {
            Some(f) => out.read_file(&f)?,
            None => out.stdout.clone(),
        };
        let Some(doc) = super::fio::first_json(&text) else {
            let msg = super::text::error_message(&out.all_text(), &["iperf3: error", "error"]);
            return Err(ParseError::with_raw(
                format!("no JSON report found (run iperf3 with -J): {msg}"),
                &out.all_text(),
            ));
        };
        if let Some(e) = doc.get("error").and_then(Value::as_str) {
            return Err(ParseError::with_raw(e.to_string(), &text));
        }
        let end = &doc["end"];
        let udp = doc["start"]["test_start"]["protocol"].as_str() == Some("UDP");
        let mut m = Metrics::default();
        let mbit = |v: &Value| v.get("bits_per_second").and_then(Value::as_f64).map(|b| b / 1e6);
        m.opt("sent_mbitps", "Mbit/s", mbit(&end["sum_sent"]), Better::Higher);
        m.opt("received_mbitps", "Mbit/s", mbit(&end["sum_received"]), Better::Higher);
        if udp {
            let sum = &end["sum"];
            m.opt("jitter_ms", "ms", sum["jitter_ms"].as_f64(), Better::Lower);
            m.opt("lost_packets", "packets", sum["lost_packets"].as_f64(), Better::Lower);
            m.opt("lost_pct", "%", sum["lost_percent"].as_f64(), Better::Lower);
            m.opt("packets", "packets", sum["packets"].as_f64(), Better::Neither);
        } else {
            m.opt("retransmits", "segments", end["sum_sent"]["retransmits"].as_f64(), Better::Lower);
            if let Some([s]) = end["streams"].as_array().map(Vec::as_slice) {
                m.opt("rtt_mean_us", "us", s["sender"]["mean_rtt"].as_f64(), Better::Lower);
                m.opt("rtt_max_us", "us", s["sender"]["max_rtt"].as_f64(), Better::Lower);
            }
        }
        let cpu = &end["cpu_utilization_percent"];
        m.opt("client_cpu_pct", "%", cpu["host_total"].as_f64(), Better::Lower);
        m.opt("server_cpu_pct", "%", cpu["remote_total"].as_f64(), Better::Lower);
        if !m.has("sent_mbitps") && !m.has("received_mbitps") {
            return Err(ParseError::with_raw(
                "the JSON report has no end.sum_sent / end.sum_received",
                &text,
            ));
        }
        for iv in doc["intervals"].as_array().into_iter().flatten() {
            let s = &iv["sum"];
            if let (Some(t), Some(v)) = (s["end"].as_f64(), mbit(s)) {
                m.result.series.push(SeriesPoint {
                    t_s: t,
                    name: "mbitps".into(),
                    value: v,
                });
            }
        }
        Ok(m.result)
    }
}
