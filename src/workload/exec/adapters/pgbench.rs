//! pgbench (PostgreSQL 13+ text report). `transactions_per_s` (without initial connection time),
//! `transactions_incl_connect_per_s` (older versions' "including connections establishing", or
//! `-C`'s "including reconnection times"), `transactions`, `failed_transactions`,
//! `failed_transactions_pct`, `latency_avg_ms` and `latency_stddev_ms` when measured (`-P`, `-R`,
//! `-L`); without them pgbench derives the average from Little's law and it is reported as
//! `latency_avg_derived_ms`. `initial_connection_time_ms`; `-P` progress lines become the series
//! `tps` and `latency_avg_ms`. pgbench prints no percentiles (they need `-l` logs).

use super::text::{after, first_number, numbers, Metrics};
use super::{Adapter, ParseError, ToolOutput};
use crate::workload::exec::process::Exit;
use crate::workload::{Better, Primary, SeriesPoint, WorkloadResult};

pub struct Pgbench;

impl Adapter for Pgbench {
    fn name(&self) -> &'static str {
        "pgbench"
    }
    fn programs(&self) -> &[&'static str] {
        &["pgbench"]
    }
    fn debian_package(&self) -> &'static str {
        "postgresql"
    }
    fn primary(&self) -> Primary {
        Primary {
            throughput: &["transactions_per_s", "transactions_incl_connect_per_s"],
            latency: &["latency_avg_ms", "latency_avg_derived_ms"],
            latency_histogram: None,
        }
    }

    fn parse(&self, out: &ToolOutput) -> Result<WorkloadResult, ParseError> {
        let text = out.all_text();
        let errors: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("pgbench: error:") || l.starts_with("pgbench: fatal:"))
            .collect();
        let mut m = Metrics::default();
        for line in text.lines().filter(|l| l.trim_start().starts_with("tps =")) {
            let v = first_number(line);
            if line.contains("without initial connection time") || line.contains("excluding connections establishing") {
                m.opt("transactions_per_s", "tps", v, Better::Higher);
            } else if line.contains("including") {
                m.opt("transactions_incl_connect_per_s", "tps", v, Better::Higher);
            }
        }
        if !m.has("transactions_per_s") && !m.has("transactions_incl_connect_per_s") {
            let why = if errors.is_empty() {
                match out.exit {
                    Exit::Code(0) => "no `tps =` line in pgbench's output".to_string(),
                    e => format!("{e}: {}", super::text::error_message(&text, &["error", "FATAL"])),
                }
            } else {
                errors.join("; ")
            };
            return Err(ParseError::with_raw(why, &text));
        }
        // "number of transactions actually processed: 1263" or "1000/1000" with -t.
        m.opt(
            "transactions",
            "transactions",
            after(&text, "number of transactions actually processed:").and_then(first_number),
            Better::Neither,
        );
        if let Some(v) = after(&text, "number of failed transactions:").map(numbers) {
            m.opt("failed_transactions", "transactions", v.first().copied(), Better::Lower);
            m.opt("failed_transactions_pct", "%", v.get(1).copied(), Better::Lower);
            if v.first().is_some_and(|n| *n > 0.0) {
                m.result.errors.push(("failed_transactions".into(), v[0] as u64));
            }
        }
        let avg = after(&text, "latency average =").and_then(first_number);
        if text.contains("latency stddev =") {
            m.opt("latency_avg_ms", "ms", avg, Better::Lower);
            m.opt(
                "latency_stddev_ms",
                "ms",
                after(&text, "latency stddev =").and_then(first_number),
                Better::Lower,
            );
        } else {
            m.opt("latency_avg_derived_ms", "ms", avg, Better::Lower);
        }
        m.opt(
            "initial_connection_time_ms",
            "ms",
            after(&text, "initial connection time =").and_then(first_number),
            Better::Lower,
        );
        // progress: 5.0 s, 1494.4 tps, lat 5.213 ms stddev 2.549, 0 failed
        for line in text.lines().filter(|l| l.starts_with("progress:")) {
            let v = numbers(line);
            if let (Some(t), Some(tps)) = (v.first(), v.get(1)) {
                m.result.series.push(SeriesPoint {
                    t_s: *t,
                    name: "tps".into(),
                    value: *tps,
                });
                if let Some(lat) = line.split("lat ").nth(1).and_then(first_number) {
                    m.result.series.push(SeriesPoint {
                        t_s: *t,
                        name: "latency_avg_ms".into(),
                        value: lat,
                    });
                }
            }
        }
        let mut r = m.result;
        if !errors.is_empty() {
            r.failure = Some(format!("pgbench: {}", errors.join("; ")));
        }
        Ok(r)
    }
}
