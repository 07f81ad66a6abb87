//! wrk (4.x) text report. `requests_per_s`, `transfer_mibps` (wrk's MB is 2^20 bytes), `requests`,
//! `duration_s`, `read_bytes`, `latency_avg_ms`, `latency_stdev_ms`, `latency_max_ms`,
//! `latency_within_stdev_pct`, `thread_req_per_s_avg` / `_stdev` / `_max`, with `--latency`
//! `latency_p50_ms`, `_p75_`, `_p90_`, `_p99_ms` (wrk records latency from when it sent each request
//! on an open connection: closed-loop, coordinated omission not corrected); `socket_errors` with
//! the kinds (`connect`, `read`, `write`, `timeout`) in `errors`, `non_2xx_3xx_responses`. A figure
//! that is not a number (wrk prints `-nan` when a thread took no samples), or output without the
//! thread statistics, the `requests in` line or `Transfer/sec`, fails the trial.

use super::text::{count, duration_ms, number, size_bytes, Metrics, Report};
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
        // Declared once, with its key figures, in workload/figures.rs.
        crate::workload::figures::WRK.primary
    }
    fn parse(&self, out: &ToolOutput) -> Result<WorkloadResult, ParseError> {
        let text = &out.stdout;
        let rps = text.lines().find_map(|l| l.strip_prefix("Requests/sec:"));
        let Some(rps) = rps.filter(|_| out.exit == Exit::Code(0)) else {
            let msg = super::text::error_message(&out.all_text(), &["unable to", "error", "invalid", "Usage"]);
            return Err(ParseError::with_raw(format!("{msg} ({})", out.exit), &out.all_text()));
        };
        let rep = Report::new("wrk", text);
        let mut m = Metrics::default();
        m.push("requests_per_s", "req/s", rep.read("Requests/sec", rps, "{}")?[0], Better::Higher);
        let Some(t) = text.lines().find_map(|l| l.strip_prefix("Transfer/sec:")) else {
            return Err(rep.cut("no `Transfer/sec` line"));
        };
        let bytes = size_bytes(t).ok_or_else(|| rep.bad("Transfer/sec", t))?;
        m.push("transfer_mibps", "MiB/s", bytes / 1048576.0, Better::Higher);
        known_lines(&rep)?;
        totals(&rep, &mut m)?;
        thread_stats(&rep, &mut m)?;
        distribution(&rep, &mut m)?;
        // "  Socket errors: connect 0, read 12, write 0, timeout 3", printed only when one is not 0.
        let kinds = ["connect", "read", "write", "timeout"];
        let errors = rep.field("Socket errors:", "connect {}, read {}, write {}, timeout {}")?;
        let errors = errors.unwrap_or_else(|| vec![0.0; 4]);
        for (kind, n) in kinds.iter().zip(&errors) {
            if *n > 0.0 {
                m.result.errors.push((kind.to_string(), *n as u64));
            }
        }
        m.push("socket_errors", "errors", errors.iter().sum(), Better::Lower);
        // Printed only when some responses were not 2xx or 3xx.
        let non = rep.num("Non-2xx or 3xx responses:", "{}")?;
        m.push("non_2xx_3xx_responses", "responses", non.unwrap_or(0.0), Better::Lower);
        if let Some(n) = non.filter(|n| *n > 0.0) {
            m.result.errors.push(("non_2xx_3xx".into(), n as u64));
        }
        Ok(m.result)
    }
}

/// Every line from `Thread Stats` to `Requests/sec:` is one wrk prints: a label wrk did not write
/// means the output is not wrk's (a missing `Socket errors` line would otherwise read as no errors).
fn known_lines(rep: &Report) -> Result<(), ParseError> {
    let summary = rep
        .text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("Thread Stats"))
        .take_while(|l| !l.starts_with("Requests/sec:"));
    for line in summary {
        let l = line.trim();
        let known = ["Thread Stats", "Latency", "Req/Sec", "Socket errors:", "Non-2xx or 3xx responses:"]
            .iter()
            .any(|k| l.starts_with(k))
            || l.contains(" requests in ")
            || (l.starts_with(|c: char| c.is_ascii_digit()) && l.contains('%'));
        if !known {
            return Err(ParseError::with_raw(
                format!("wrk: unexpected line in the summary: `{}`", super::text::excerpt(line)),
                rep.text,
            ));
        }
    }
    Ok(())
}

/// "  269060 requests in 2.10s, 43.62MB read"
fn totals(rep: &Report, m: &mut Metrics) -> Result<(), ParseError> {
    let Some(line) = rep.text.lines().find(|l| l.contains(" requests in ")) else {
        return Err(rep.cut("no `requests in` line"));
    };
    let w: Vec<&str> = line.split_whitespace().collect();
    let bad = || rep.bad("requests in", line);
    if w.len() != 6 || w[1] != "requests" || w[2] != "in" || w[5] != "read" {
        return Err(bad());
    }
    let requests = number(w[0]).ok_or_else(bad)?;
    let duration = w[3].strip_suffix(',').and_then(duration_ms).ok_or_else(bad)?;
    let read = size_bytes(w[4]).ok_or_else(bad)?;
    m.push("requests", "requests", requests, Better::Neither);
    m.push("duration_s", "s", duration / 1e3, Better::Neither);
    m.push("read_bytes", "B", read, Better::Neither);
    Ok(())
}

/// "    Latency   231.81us  622.24us  10.70ms   92.10%" and "    Req/Sec    64.47k     7.06k   81.81k    78.57%"
fn thread_stats(rep: &Report, m: &mut Metrics) -> Result<(), ParseError> {
    let row = |label: &str| {
        let line = rep.text.lines().map(str::trim).find(|l| {
            l.strip_prefix(label)
                .is_some_and(|r| r.starts_with(char::is_whitespace) && !r.trim_start().starts_with("Distribution"))
        });
        let line = line.ok_or_else(|| rep.cut(&format!("no `{label}` line under `Thread Stats`")))?;
        let w: Vec<&str> = line.split_whitespace().skip(1).collect();
        let pct = w.get(3).and_then(|p| p.strip_suffix('%')).and_then(number);
        match (w.len(), pct) {
            (4, Some(p)) => Ok((w, p)),
            _ => Err(rep.bad(label, line)),
        }
    };
    let (w, pct) = row("Latency")?;
    let d: Vec<f64> = w[..3].iter().filter_map(|s| duration_ms(s)).collect();
    let [avg, stdev, max] = d[..] else {
        return Err(rep.bad("Latency", &w.join(" ")));
    };
    m.push("latency_avg_ms", "ms", avg, Better::Lower);
    m.push("latency_stdev_ms", "ms", stdev, Better::Lower);
    m.push("latency_max_ms", "ms", max, Better::Lower);
    m.push("latency_within_stdev_pct", "%", pct, Better::Neither);
    let (w, _) = row("Req/Sec")?;
    let c: Vec<f64> = w[..3].iter().filter_map(|s| count(s)).collect();
    let [avg, stdev, max] = c[..] else {
        return Err(rep.bad("Req/Sec", &w.join(" ")));
    };
    m.push("thread_req_per_s_avg", "req/s", avg, Better::Higher);
    m.push("thread_req_per_s_stdev", "req/s", stdev, Better::Neither);
    // The spread of the threads' rates, not a rate of events.
    m.state("thread_req_per_s_stdev", MetricKind::Gauge);
    m.push("thread_req_per_s_max", "req/s", max, Better::Neither);
    Ok(())
}

/// `--latency`: "  Latency Distribution" then "     50%   30.00us" for 50, 75, 90 and 99.
fn distribution(rep: &Report, m: &mut Metrics) -> Result<(), ParseError> {
    let mut lines = rep.text.lines().skip_while(|l| l.trim() != "Latency Distribution");
    if lines.next().is_none() {
        return Ok(());
    }
    let mut n = 0;
    for line in lines.take_while(|l| !l.contains(" requests in ")) {
        let (p, v) = line.trim().split_once('%').unwrap_or(("", ""));
        let (Some(p), Some(v)) = (number(p), duration_ms(v)) else {
            return Err(rep.bad("Latency Distribution", line));
        };
        let label = if p.fract() == 0.0 {
            format!("{}", p as u64)
        } else {
            format!("{p}").replace('.', "_")
        };
        m.push(format!("latency_p{label}_ms"), "ms", v, Better::Lower);
        n += 1;
    }
    if n < 4 {
        return Err(rep.cut("the `Latency Distribution` has fewer than 4 lines"));
    }
    Ok(())
}
