//! ApacheBench (`ab`). The summary: `requests_per_s`, `time_per_request_ms` (mean per concurrent
//! user), `time_per_request_all_ms` (across all concurrent requests), `transfer_kib_per_s` (ab's
//! "Kbytes/sec" is 1024-based), `time_taken_s`, `complete_requests`, `failed_requests`,
//! `non_2xx_responses`, `write_errors`, `keep_alive_requests`, `total_transferred_bytes`,
//! `html_transferred_bytes`, `concurrency`. The Connection Times table: `connect_`, `processing_`,
//! `waiting_`, `total_` × `min_ms`, `mean_ms`, `sd_ms`, `median_ms`, `max_ms`. The percentile table:
//! `latency_p50_ms` ... `latency_p100_ms` (whole milliseconds, as ab prints them). Failed-request
//! kinds go to `errors` (`connect`, `receive`, `length`, `exceptions`, `non_2xx`).

use super::text::{after, first_number, numbers, snake, Metrics};
use super::{Adapter, ParseError, ToolOutput};
use crate::workload::exec::process::Exit;
use crate::workload::{Better, MetricKind, Primary, WorkloadResult};

pub struct Ab;

impl Adapter for Ab {
    fn name(&self) -> &'static str {
        "ab"
    }
    fn programs(&self) -> &[&'static str] {
        &["ab", "ab2"]
    }
    fn debian_package(&self) -> &'static str {
        "apache2-utils"
    }
    fn primary(&self) -> Primary {
        Primary {
            throughput: &["requests_per_s"],
            latency: &["latency_p99_ms", "total_mean_ms"],
            latency_histogram: None,
        }
    }

    fn parse(&self, out: &ToolOutput) -> Result<WorkloadResult, ParseError> {
        let text = &out.stdout;
        if out.exit != Exit::Code(0) || !text.contains("Requests per second:") {
            let why = match super::text::error_message(&out.stderr, &["apr_", "ab:", "error", "Invalid", "invalid"]) {
                msg if msg.is_empty() => "no `Requests per second:` line in ab's output".to_string(),
                msg => msg,
            };
            return Err(ParseError::with_raw(format!("{why} ({})", out.exit), &out.all_text()));
        }
        let mut m = Metrics::default();
        let num = |label: &str| after(text, label).and_then(first_number);
        m.opt("requests_per_s", "req/s", num("Requests per second:"), Better::Higher);
        for line in text.lines().filter(|l| l.starts_with("Time per request:")) {
            let name = if line.contains("across all") {
                "time_per_request_all_ms"
            } else {
                "time_per_request_ms"
            };
            m.opt(name, "ms", first_number(line), Better::Lower);
        }
        m.opt("transfer_kib_per_s", "KiB/s", num("Transfer rate:"), Better::Higher);
        m.opt("time_taken_s", "s", num("Time taken for tests:"), Better::Neither);
        m.opt("concurrency", "", num("Concurrency Level:"), Better::Neither);
        // A setting echoed back, not a number of events.
        m.state("concurrency", MetricKind::Gauge);
        m.opt("complete_requests", "requests", num("Complete requests:"), Better::Neither);
        let failed = num("Failed requests:");
        m.opt("failed_requests", "requests", failed, Better::Lower);
        let non2xx = num("Non-2xx responses:");
        m.push("non_2xx_responses", "responses", non2xx.unwrap_or(0.0), Better::Lower);
        m.opt("write_errors", "errors", num("Write errors:"), Better::Lower);
        m.opt("keep_alive_requests", "requests", num("Keep-Alive requests:"), Better::Neither);
        m.opt("total_transferred_bytes", "B", num("Total transferred:"), Better::Neither);
        m.opt("html_transferred_bytes", "B", num("HTML transferred:"), Better::Neither);
        // "   (Connect: 0, Receive: 0, Length: 412, Exceptions: 0)" under "Failed requests:".
        if let Some(line) = text.lines().find(|l| l.trim_start().starts_with("(Connect:")) {
            for part in line.trim().trim_matches(['(', ')']).split(',') {
                if let Some((k, v)) = part.split_once(':') {
                    if let Ok(n) = v.trim().parse::<u64>() {
                        if n > 0 {
                            m.result.errors.push((snake(k), n));
                        }
                    }
                }
            }
        }
        if let Some(n) = non2xx.filter(|n| *n > 0.0) {
            m.result.errors.push(("non_2xx".into(), n as u64));
        }
        // Connection Times (ms): rows Connect/Processing/Waiting/Total, columns min mean sd median max.
        for row in ["Connect:", "Processing:", "Waiting:", "Total:"] {
            let Some(line) = text.lines().find(|l| l.starts_with(row)) else {
                continue;
            };
            let v = numbers(line);
            let base = snake(row);
            for (i, col) in ["min", "mean", "sd", "median", "max"].iter().enumerate() {
                m.opt(format!("{base}_{col}_ms"), "ms", v.get(i).copied(), Better::Lower);
            }
        }
        // Percentage of the requests served within a certain time (ms): "  50%      0".
        if let Some(pos) = text.find("Percentage of the requests served") {
            for line in text[pos..].lines().skip(1) {
                let l = line.trim();
                let Some((p, rest)) = l.split_once('%') else {
                    break;
                };
                let (Ok(p), Some(v)) = (p.trim().parse::<u32>(), first_number(rest)) else {
                    break;
                };
                m.push(format!("latency_p{p}_ms"), "ms", v, Better::Lower);
            }
        }
        if !m.has("requests_per_s") {
            return Err(ParseError::with_raw("cannot read `Requests per second:`", text));
        }
        Ok(m.result)
    }
}
