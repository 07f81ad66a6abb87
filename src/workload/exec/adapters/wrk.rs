//! wrk (4.x) text report. `requests_per_s`, `transfer_mibps` (wrk's MB is 2^20 bytes), `requests`,
//! `duration_s`, `read_bytes`, `latency_avg_ms`, `latency_stdev_ms`, `latency_max_ms`,
//! `latency_within_stdev_pct`, `thread_req_per_s_avg` / `_stdev` / `_max`, with `--latency`
//! `latency_p50_ms`, `_p75_`, `_p90_`, `_p99_ms` (wrk records latency from when it sent each request
//! on an open connection: closed-loop, coordinated omission not corrected); `socket_errors` with
//! the kinds (`connect`, `read`, `write`, `timeout`) in `errors`, `non_2xx_3xx_responses`.

use super::text::{count, duration_ms, first_number, size_bytes, Metrics};
use super::{Adapter, ParseError, ToolOutput};
use crate::workload::exec::process::Exit;
use crate::workload::{Better, MetricKind, Primary, WorkloadResult};

pub struct Wrk;

impl Adapter for Wrk {
    fn name(&self) -> &'static str {
        "wrk"
    }
    fn programs(&self) -> &[&'static str] {
        &["wrk"]
    }
    fn debian_package(&self) -> &'static str {
        "wrk"
    }
    fn primary(&self) -> Primary {
        Primary {
            throughput: &["requests_per_s"],
            latency: &["latency_p99_ms", "latency_avg_ms"],
            latency_histogram: None,
        }
    }

    fn parse(&self, out: &ToolOutput) -> Result<WorkloadResult, ParseError> {
        let text = &out.stdout;
        let rps = text.lines().find_map(|l| l.strip_prefix("Requests/sec:")).and_then(first_number);
        let Some(rps) = rps.filter(|_| out.exit == Exit::Code(0)) else {
            let msg = super::text::error_message(&out.all_text(), &["unable to", "error", "invalid", "Usage"]);
            return Err(ParseError::with_raw(format!("{msg} ({})", out.exit), &out.all_text()));
        };
        let mut m = Metrics::default();
        m.push("requests_per_s", "req/s", rps, Better::Higher);
        if let Some(t) = text.lines().find_map(|l| l.strip_prefix("Transfer/sec:")) {
            m.opt("transfer_mibps", "MiB/s", size_bytes(t).map(|b| b / 1048576.0), Better::Higher);
        }
        // "  269060 requests in 2.10s, 43.62MB read"
        if let Some(line) = text.lines().find(|l| l.contains(" requests in ")) {
            let w: Vec<&str> = line.split_whitespace().collect();
            m.opt("requests", "requests", w.first().and_then(|s| s.parse().ok()), Better::Neither);
            m.opt(
                "duration_s",
                "s",
                w.get(3).map(|s| s.trim_end_matches(',')).and_then(duration_ms).map(|v| v / 1e3),
                Better::Neither,
            );
            m.opt("read_bytes", "B", w.get(4).and_then(|s| size_bytes(s)), Better::Neither);
        }
        // "    Latency   231.81us  622.24us  10.70ms   92.10%"
        if let Some(line) = text.lines().find(|l| l.trim_start().starts_with("Latency ") && l.contains('%')) {
            let w: Vec<&str> = line.split_whitespace().collect();
            m.opt("latency_avg_ms", "ms", w.get(1).and_then(|s| duration_ms(s)), Better::Lower);
            m.opt("latency_stdev_ms", "ms", w.get(2).and_then(|s| duration_ms(s)), Better::Lower);
            m.opt("latency_max_ms", "ms", w.get(3).and_then(|s| duration_ms(s)), Better::Lower);
            m.opt(
                "latency_within_stdev_pct",
                "%",
                w.get(4).and_then(|s| first_number(s)),
                Better::Neither,
            );
        }
        if let Some(line) = text.lines().find(|l| l.trim_start().starts_with("Req/Sec ")) {
            let w: Vec<&str> = line.split_whitespace().collect();
            m.opt("thread_req_per_s_avg", "req/s", w.get(1).and_then(|s| count(s)), Better::Higher);
            m.opt("thread_req_per_s_stdev", "req/s", w.get(2).and_then(|s| count(s)), Better::Neither);
            // The spread of the threads' rates, not a rate of events.
            m.state("thread_req_per_s_stdev", MetricKind::Gauge);
            m.opt("thread_req_per_s_max", "req/s", w.get(3).and_then(|s| count(s)), Better::Neither);
        }
        if let Some(pos) = text.find("Latency Distribution") {
            for line in text[pos..].lines().skip(1) {
                let l = line.trim();
                let Some((p, rest)) = l.split_once('%') else {
                    break;
                };
                let (Ok(p), Some(v)) = (p.trim().parse::<f64>(), duration_ms(rest)) else {
                    break;
                };
                let label = if p.fract() == 0.0 {
                    format!("{}", p as u64)
                } else {
                    format!("{p}").replace('.', "_")
                };
                m.push(format!("latency_p{label}_ms"), "ms", v, Better::Lower);
            }
        }
        // "  Socket errors: connect 0, read 12, write 0, timeout 3"
        let mut socket_errors = 0.0;
        if let Some(line) = text.lines().find_map(|l| l.trim_start().strip_prefix("Socket errors:")) {
            for part in line.split(',') {
                let mut w = part.split_whitespace();
                if let (Some(kind), Some(Ok(n))) = (w.next(), w.next().map(str::parse::<u64>)) {
                    socket_errors += n as f64;
                    if n > 0 {
                        m.result.errors.push((kind.to_string(), n));
                    }
                }
            }
        }
        m.push("socket_errors", "errors", socket_errors, Better::Lower);
        let non = text
            .lines()
            .find_map(|l| l.trim_start().strip_prefix("Non-2xx or 3xx responses:"))
            .and_then(first_number);
        m.push("non_2xx_3xx_responses", "responses", non.unwrap_or(0.0), Better::Lower);
        if let Some(n) = non.filter(|n| *n > 0.0) {
            m.result.errors.push(("non_2xx_3xx".into(), n as u64));
        }
        Ok(m.result)
    }
}
