//! sysbench 1.0 text report (cpu, memory, fileio, oltp_* and other Lua tests). Every test:
//! `total_time_s`, `events`, `events_per_s`, `latency_min_ms`, `latency_avg_ms`, `latency_max_ms`,
//! `latency_pNN_ms` (per `--percentile`, default 95). cpu: `events_per_s` as printed. memory:
//! `operations_per_s`, `transfer_mibps`. fileio: `reads_per_s`, `writes_per_s`, `fsyncs_per_s`,
//! `read_mibps`, `write_mibps`. OLTP: `transactions`, `transactions_per_s`, `queries`,
//! `queries_per_s`, `queries_read`, `queries_write`, `queries_other`, `ignored_errors`,
//! `ignored_errors_per_s`, `reconnects`, `reconnects_per_s`. `--report-interval` lines become the
//! series `tps`, `qps`, `latency_pNN_ms`, `errors_per_s`. A `FATAL:` line fails the trial; so does a
//! figure that is not a number and a report without its `General statistics` or complete
//! `Latency (ms)` block (output cut short).

use super::text::{block, number, Metrics, Report};
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
        // Declared once, with its key figures, in workload/figures.rs.
        crate::workload::figures::SYSBENCH.primary
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
        let rep = Report::new("sysbench", &text);
        let mut m = Metrics::default();
        test_figures(&rep, &mut m)?;
        sql_statistics(&rep, &mut m)?;
        general(&rep, &mut m)?;
        latency(&rep, &mut m)?;
        intervals(&rep, &mut m)?;
        Ok(m.result)
    }
}

/// The test's own block: memory's operations and transfer, fileio's rates.
fn test_figures(rep: &Report, m: &mut Metrics) -> Result<(), ParseError> {
    if let Some(v) = rep.field("Total operations:", "{} ({} per second)")? {
        m.push("operations_per_s", "ops/s", v[1], Better::Higher);
    }
    if let Some(line) = rep.text.lines().find(|l| l.contains(" MiB transferred (")) {
        let v = rep.read("MiB transferred", line, "{} MiB transferred ({} MiB/sec)")?;
        m.push("transfer_mibps", "MiB/s", v[1], Better::Higher);
    }
    for (label, name, unit) in [
        ("reads/s:", "reads_per_s", "ops/s"),
        ("writes/s:", "writes_per_s", "ops/s"),
        ("fsyncs/s:", "fsyncs_per_s", "ops/s"),
        ("read, MiB/s:", "read_mibps", "MiB/s"),
        ("written, MiB/s:", "write_mibps", "MiB/s"),
    ] {
        m.opt(name, unit, rep.num(label, "{}")?, Better::Higher);
    }
    Ok(())
}

/// OLTP's `SQL statistics` block: queries by kind, then counts with their rates.
fn sql_statistics(rep: &Report, m: &mut Metrics) -> Result<(), ParseError> {
    if let Some(b) = block(rep.text, "queries performed:") {
        let part = rep.part(b);
        for (label, name) in [("read:", "queries_read"), ("write:", "queries_write"), ("other:", "queries_other")] {
            m.push(name, "queries", part.need(label, "{}")?[0], Better::Neither);
        }
    }
    for (label, name, rate, better) in [
        ("transactions:", "transactions", "trx/s", Better::Higher),
        ("queries:", "queries", "queries/s", Better::Higher),
        ("ignored errors:", "ignored_errors", "errors/s", Better::Lower),
        ("reconnects:", "reconnects", "reconnects/s", Better::Lower),
    ] {
        let Some(v) = rep.field(label, "{} ({} per sec.)")? else { continue };
        m.push(name, "", v[0], Better::Neither);
        m.push(format!("{name}_per_s"), rate, v[1], better);
        if name == "ignored_errors" && v[0] > 0.0 {
            m.result.errors.push(("ignored_errors".into(), v[0] as u64));
        }
    }
    Ok(())
}

/// `General statistics`: total time and events (events per second from them unless printed).
fn general(rep: &Report, m: &mut Metrics) -> Result<(), ParseError> {
    let Some(b) = block(rep.text, "General statistics:") else {
        return Err(ParseError::with_raw("no `General statistics` block in sysbench's output", rep.text));
    };
    let part = rep.part(b);
    let total = part.need("total time:", "{}s")?[0];
    let events = part.need("total number of events:", "{}")?[0];
    m.push("total_time_s", "s", total, Better::Neither);
    m.push("events", "events", events, Better::Neither);
    let eps = match rep.num("events per second:", "{}")? {
        Some(v) => Some(v),
        None if total > 0.0 => Some(events / total),
        None => None,
    };
    m.opt("events_per_s", "events/s", eps, Better::Higher);
    Ok(())
}

/// The `Latency (ms)` block, complete to its `sum:` line.
fn latency(rep: &Report, m: &mut Metrics) -> Result<(), ParseError> {
    let Some(b) = block(rep.text, "Latency (ms):") else {
        return Err(rep.cut("no `Latency (ms)` block"));
    };
    let mut seen = Vec::new();
    for line in b.lines() {
        let Some((key, value)) = line.trim().split_once(':') else {
            return Err(rep.cut(&format!("`{}` in the latency block", super::text::excerpt(line))));
        };
        let name = match key {
            "min" | "avg" | "max" => format!("latency_{key}_ms"),
            "sum" => String::new(),
            "percentile stats" if value.trim() == "disabled" => continue,
            k => match k.strip_suffix("th percentile").map(str::trim).and_then(number) {
                Some(p) => format!("latency_p{}_ms", fmt_pct(p)),
                None => return Err(rep.bad(&format!("latency {k}"), value)),
            },
        };
        let v = rep.read(&format!("latency {key}"), value, "{}")?[0];
        seen.push(key);
        if !name.is_empty() {
            m.push(name, "ms", v, Better::Lower);
        }
    }
    for key in ["min", "avg", "max", "sum"] {
        if !seen.contains(&key) {
            return Err(rep.cut(&format!("no `{key}:` in the latency block")));
        }
    }
    Ok(())
}

fn fmt_pct(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{}", p as u64)
    } else {
        format!("{p}").replace('.', "_")
    }
}

/// The word after `key` in `line`.
fn word_after<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split(key).nth(1).map(|r| r.split_whitespace().next().unwrap_or(""))
}

/// `[ 1s ] thds: 4 tps: 120.00 qps: 2400.00 (r/w/o: ...) lat (ms,95%): 11.24 err/s: 0.00 reconn/s: 0.00`
fn intervals(rep: &Report, m: &mut Metrics) -> Result<(), ParseError> {
    for line in rep.text.lines().filter(|l| l.starts_with('[') && l.contains("s ] thds:")) {
        let stamp = line.split(" ] ").next().unwrap_or("");
        let t = rep.read("interval time", stamp, "[ {}s")?[0];
        let mut push = |name: String, v: f64| m.result.series.push(SeriesPoint { t_s: t, name, value: v });
        for (key, name) in [("tps:", "tps"), ("qps:", "qps"), ("eps:", "eps"), ("err/s:", "errors_per_s")] {
            if let Some(w) = word_after(line, key) {
                push(name.into(), rep.read(&format!("{key} at {t}s"), w, "{}")?[0]);
            }
        }
        if let Some(rest) = line.split("lat (ms,").nth(1) {
            let (p, v) = rest.split_once("%):").unwrap_or((rest, ""));
            let p = rep.read(&format!("lat (ms,...) at {t}s"), p, "{}")?[0];
            let w = v.split_whitespace().next().unwrap_or("");
            let v = rep.read(&format!("lat (ms,{p}%) at {t}s"), w, "{}")?[0];
            push(format!("latency_p{}_ms", fmt_pct(p)), v);
        }
    }
    Ok(())
}
