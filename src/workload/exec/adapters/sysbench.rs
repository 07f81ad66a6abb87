//! sysbench 1.0 text report (cpu, memory, fileio, oltp_* and other Lua tests). Every test:
//! `total_time_s`, `events`, `events_per_s`, `latency_min_ms`, `latency_avg_ms`, `latency_max_ms`,
//! `latency_pNN_ms` (per `--percentile`, default 95). cpu: `events_per_s` as printed. memory:
//! `operations_per_s`, `transfer_mibps`. fileio: `reads_per_s`, `writes_per_s`, `fsyncs_per_s`,
//! `read_mibps`, `write_mibps`. OLTP: `transactions`, `transactions_per_s`, `queries`,
//! `queries_per_s`, `queries_read`, `queries_write`, `queries_other`, `ignored_errors`,
//! `ignored_errors_per_s`, `reconnects`, `reconnects_per_s`. `--report-interval` lines become the
//! series `tps`, `qps`, `latency_pNN_ms`, `errors_per_s`. A `FATAL:` line fails the trial.

use super::text::{after, first_number, numbers, Metrics};
use super::{Adapter, ParseError, ToolOutput};
use crate::workload::exec::process::Exit;
use crate::workload::{Better, Primary, SeriesPoint, WorkloadResult};

pub struct Sysbench;

impl Adapter for Sysbench {
    fn name(&self) -> &'static str {
        "sysbench"
    }
    fn programs(&self) -> &[&'static str] {
        &["sysbench"]
    }
    fn debian_package(&self) -> &'static str {
        "sysbench"
    }
    fn primary(&self) -> Primary {
        Primary {
            throughput: &["transactions_per_s", "events_per_s"],
            latency: &["latency_p99_ms", "latency_p95_ms", "latency_p90_ms", "latency_avg_ms"],
            latency_histogram: None,
        }
    }

    fn parse(&self, out: &ToolOutput) -> Result<WorkloadResult, ParseError> {
        let text = out.all_text();
        let fatal: Vec<&str> = text.lines().map(str::trim).filter(|l| l.starts_with("FATAL:")).collect();
        if !fatal.is_empty() {
            return Err(ParseError::with_raw(fatal.join("; "), &text));
        }
        if out.exit != Exit::Code(0) && !text.contains("General statistics:") {
            let msg = super::text::error_message(&text, &["error", "Error", "unknown", "invalid"]);
            return Err(ParseError::with_raw(format!("{}: {msg}", out.exit), &text));
        }
        let mut m = Metrics::default();
        // The test's own block.
        m.opt(
            "operations_per_s",
            "ops/s",
            after(&text, "Total operations:").and_then(|r| numbers(r).get(1).copied()),
            Better::Higher,
        );
        if let Some(line) = text.lines().find(|l| l.contains("MiB transferred (")) {
            m.opt("transfer_mibps", "MiB/s", numbers(line).get(1).copied(), Better::Higher);
        }
        for (label, name, unit) in [
            ("reads/s:", "reads_per_s", "ops/s"),
            ("writes/s:", "writes_per_s", "ops/s"),
            ("fsyncs/s:", "fsyncs_per_s", "ops/s"),
            ("read, MiB/s:", "read_mibps", "MiB/s"),
            ("written, MiB/s:", "write_mibps", "MiB/s"),
        ] {
            m.opt(name, unit, after(&text, label).and_then(first_number), Better::Higher);
        }
        if let Some(r) = after(&text, "read:").filter(|_| text.contains("queries performed:")) {
            m.opt("queries_read", "queries", first_number(r), Better::Neither);
            m.opt(
                "queries_write",
                "queries",
                after(&text, "write:").and_then(first_number),
                Better::Neither,
            );
            m.opt(
                "queries_other",
                "queries",
                after(&text, "other:").and_then(first_number),
                Better::Neither,
            );
        }
        for (label, name, better) in [
            ("transactions:", "transactions", Better::Higher),
            ("queries:", "queries", Better::Higher),
            ("ignored errors:", "ignored_errors", Better::Lower),
            ("reconnects:", "reconnects", Better::Lower),
        ] {
            if let Some(v) = after(&text, label).map(numbers) {
                m.opt(name, "", v.first().copied(), Better::Neither);
                m.opt(format!("{name}_per_s"), "1/s", v.get(1).copied(), better);
                if name == "ignored_errors" && v.first().is_some_and(|n| *n > 0.0) {
                    m.result.errors.push(("ignored_errors".into(), v[0] as u64));
                }
            }
        }
        // General statistics and latency, common to every test.
        let total = after(&text, "total time:").and_then(first_number);
        let events = after(&text, "total number of events:").and_then(first_number);
        m.opt("total_time_s", "s", total, Better::Neither);
        m.opt("events", "events", events, Better::Neither);
        let eps = after(&text, "events per second:").and_then(first_number).or(match (events, total) {
            (Some(e), Some(t)) if t > 0.0 => Some(e / t),
            _ => None,
        });
        m.opt("events_per_s", "events/s", eps, Better::Higher);
        if let Some(pos) = text.find("Latency (ms):") {
            let block = &text[pos..];
            m.opt("latency_min_ms", "ms", after(block, "min:").and_then(first_number), Better::Lower);
            m.opt("latency_avg_ms", "ms", after(block, "avg:").and_then(first_number), Better::Lower);
            m.opt("latency_max_ms", "ms", after(block, "max:").and_then(first_number), Better::Lower);
            if let Some(line) = block.lines().find(|l| l.contains("th percentile:")) {
                let v = numbers(line);
                if let (Some(p), Some(x)) = (v.first(), v.get(1)) {
                    m.push(format!("latency_p{}_ms", fmt_pct(*p)), "ms", *x, Better::Lower);
                }
            }
        }
        if !m.has("events") {
            return Err(ParseError::with_raw("no `General statistics` block in sysbench's output", &text));
        }
        intervals(&text, &mut m);
        Ok(m.result)
    }
}

fn fmt_pct(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{}", p as u64)
    } else {
        format!("{p}").replace('.', "_")
    }
}

/// `[ 1s ] thds: 4 tps: 120.00 qps: 2400.00 (r/w/o: ...) lat (ms,95%): 11.24 err/s: 0.00 reconn/s: 0.00`
fn intervals(text: &str, m: &mut Metrics) {
    for line in text.lines().filter(|l| l.starts_with('[') && l.contains("s ] thds:")) {
        let Some(t) = line
            .trim_start_matches('[')
            .trim()
            .split('s')
            .next()
            .and_then(|s| s.trim().parse::<f64>().ok())
        else {
            continue;
        };
        let mut push = |name: String, v: Option<f64>| {
            if let Some(value) = v {
                m.result.series.push(SeriesPoint { t_s: t, name, value });
            }
        };
        let field = |key: &str| line.split(key).nth(1).and_then(first_number);
        push("tps".into(), field("tps:"));
        push("qps".into(), field("qps:"));
        push("eps".into(), field("eps:"));
        push("errors_per_s".into(), field("err/s:"));
        if let Some(rest) = line.split("lat (ms,").nth(1) {
            let v = numbers(rest);
            if let (Some(p), Some(x)) = (v.first(), v.get(1)) {
                push(format!("latency_p{}_ms", fmt_pct(*p)), Some(*x));
            }
        }
    }
}
