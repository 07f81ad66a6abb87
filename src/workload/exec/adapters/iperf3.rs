//! iperf3 `-J` (client side). TCP: `sent_mbitps`, `received_mbitps` (goodput), `retransmits`, and
//! with one stream `rtt_mean_us`, `rtt_max_us`. UDP: `sent_mbitps`, `received_mbitps`,
//! `jitter_ms`, `lost_packets`, `lost_pct`, `packets`. Both: `client_cpu_pct`, `server_cpu_pct`
//! (iperf3's own CPU use, % of one core) and a per-interval series `mbitps`. 1 Mbit = 10^6 bits.
//! iperf3 3.12 exits 0 even when it could not connect: the JSON `error` field is what counts. A
//! JSON report cut short, or a figure in it that is not a number, fails the trial.

use super::json::Report;
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
        // Declared once, with its key figures, in workload/figures.rs.
        crate::workload::figures::IPERF3.primary
    }

    fn output_files(&self, args: &[String]) -> Vec<String> {
        super::option(args, "--logfile", None).into_iter().collect()
    }

    fn parse(&self, out: &ToolOutput) -> Result<WorkloadResult, ParseError> {
        let text = match out.option("--logfile", None) {
            Some(f) => out.read_file(&f)?,
            None => out.stdout.clone(),
        };
        let doc = match super::json::document(&text) {
            Ok(Some(doc)) => doc,
            Ok(None) => {
                let msg = super::text::error_message(&out.all_text(), &["iperf3: error", "error"]);
                return Err(ParseError::with_raw(
                    format!("no JSON report found (run iperf3 with -J): {msg}"),
                    &out.all_text(),
                ));
            }
            Err(e) => {
                return Err(ParseError::with_raw(
                    format!("iperf3: the JSON report is cut short or malformed: {e}"),
                    &out.all_text(),
                ))
            }
        };
        if let Some(e) = doc.get("error").and_then(Value::as_str) {
            return Err(ParseError::with_raw(e.to_string(), &text));
        }
        let rep = Report::new("iperf3", &text);
        let Some(end) = doc.get("end") else {
            return Err(rep.missing("end"));
        };
        let udp = doc["start"]["test_start"]["protocol"].as_str() == Some("UDP");
        let mut m = Metrics::default();
        for (key, name) in [("sum_sent", "sent_mbitps"), ("sum_received", "received_mbitps")] {
            if let Some(sum) = end.get(key) {
                let bps = rep.need(sum, "bits_per_second", &format!("end.{key}"))?;
                m.push(name, "Mbit/s", bps / 1e6, Better::Higher);
            }
        }
        if udp {
            let sum = &end["sum"];
            let num = |key: &str| rep.num(sum, key, "end.sum");
            m.opt("jitter_ms", "ms", num("jitter_ms")?, Better::Lower);
            m.opt("lost_packets", "packets", num("lost_packets")?, Better::Lower);
            m.opt("lost_pct", "%", num("lost_percent")?, Better::Lower);
            m.opt("packets", "packets", num("packets")?, Better::Neither);
        } else {
            let retransmits = rep.num(&end["sum_sent"], "retransmits", "end.sum_sent")?;
            m.opt("retransmits", "segments", retransmits, Better::Lower);
            if let Some([s]) = end["streams"].as_array().map(Vec::as_slice) {
                let path = "end.streams[0].sender";
                m.opt("rtt_mean_us", "us", rep.num(&s["sender"], "mean_rtt", path)?, Better::Lower);
                m.opt("rtt_max_us", "us", rep.num(&s["sender"], "max_rtt", path)?, Better::Lower);
            }
        }
        let cpu = &end["cpu_utilization_percent"];
        let path = "end.cpu_utilization_percent";
        m.opt("client_cpu_pct", "%", rep.num(cpu, "host_total", path)?, Better::Lower);
        m.opt("server_cpu_pct", "%", rep.num(cpu, "remote_total", path)?, Better::Lower);
        if !m.has("sent_mbitps") && !m.has("received_mbitps") {
            return Err(ParseError::with_raw(
                "the JSON report has no end.sum_sent / end.sum_received",
                &text,
            ));
        }
        for (i, iv) in doc["intervals"].as_array().into_iter().flatten().enumerate() {
            let path = format!("intervals[{i}].sum");
            let s = &iv["sum"];
            m.result.series.push(SeriesPoint {
                t_s: rep.need(s, "end", &path)?,
                name: "mbitps".into(),
                value: rep.need(s, "bits_per_second", &path)? / 1e6,
            });
        }
        Ok(m.result)
    }
}
