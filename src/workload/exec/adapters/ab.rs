//! ApacheBench (`ab`). The summary: `requests_per_s`, `time_per_request_ms` (mean per concurrent
//! user), `time_per_request_all_ms` (across all concurrent requests), `transfer_kib_per_s` (ab's
//! "Kbytes/sec" is 1024-based), `time_taken_s`, `complete_requests`, `failed_requests`,
//! `non_2xx_responses`, `write_errors`, `keep_alive_requests`, `total_transferred_bytes`,
//! `html_transferred_bytes`, `concurrency`. The Connection Times table: `connect_`, `processing_`,
//! `waiting_`, `total_` × `min_ms`, `mean_ms`, `sd_ms`, `median_ms`, `max_ms`. The percentile table:
//! `latency_p50_ms` ... `latency_p100_ms` (whole milliseconds, as ab prints them). Failed-request
//! kinds go to `errors` (`connect`, `receive`, `length`, `exceptions`, `non_2xx`). A figure that
//! is not a number, or output without the summary lines or the tables ab prints after them, fails
//! the trial.

use super::text::{block, snake, Metrics, Report};
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
        // Declared once, with its key figures, in workload/figures.rs.
        crate::workload::figures::AB.primary
    }
    fn parse(&self, out: &ToolOutput) -> Result<WorkloadResult, ParseError> {
        let text = &out.stdout;
        if out.exit != Exit::Code(0) {
            let why = match super::text::error_message(&out.stderr, &["apr_", "ab:", "error", "Invalid", "invalid"]) {
                msg if msg.is_empty() => "no `Requests per second:` line in ab's output".to_string(),
                msg => msg,
            };
            return Err(ParseError::with_raw(format!("{why} ({})", out.exit), &out.all_text()));
        }
        let rep = Report::new("ab", text);
        if !text.contains("Requests per second:") {
            let mut e = rep.cut("no `Requests per second` line");
            e.raw = super::tail_lines(&out.all_text(), usize::MAX);
            return Err(e);
        }
        known_lines(&rep)?;
        let mut m = Metrics::default();
        summary(&rep, &mut m)?;
        let num = |label: &str, shape: &str| rep.num(label, shape);
        m.opt("time_taken_s", "s", num("Time taken for tests:", "{} seconds")?, Better::Neither);
        m.opt("concurrency", "", num("Concurrency Level:", "{}")?, Better::Neither);
        // A setting echoed back, not a number of events.
        m.state("concurrency", MetricKind::Gauge);
        let complete = num("Complete requests:", "{}")?;
        m.opt("complete_requests", "requests", complete, Better::Neither);
        m.opt("failed_requests", "requests", num("Failed requests:", "{}")?, Better::Lower);
        // ab prints this line only when some responses were not 2xx.
        let non2xx = num("Non-2xx responses:", "{}")?;
        m.push("non_2xx_responses", "responses", non2xx.unwrap_or(0.0), Better::Lower);
        m.opt("write_errors", "errors", num("Write errors:", "{}")?, Better::Lower);
        m.opt(
            "keep_alive_requests",
            "requests",
            num("Keep-Alive requests:", "{}")?,
            Better::Neither,
        );
        m.opt(
            "total_transferred_bytes",
            "B",
            num("Total transferred:", "{} bytes")?,
            Better::Neither,
        );
        m.opt(
            "html_transferred_bytes",
            "B",
            num("HTML transferred:", "{} bytes")?,
            Better::Neither,
        );
        // "   (Connect: 0, Receive: 0, Length: 412, Exceptions: 0)" under "Failed requests:".
        if let Some(line) = text.lines().map(str::trim).find(|l| l.starts_with("(Connect:")) {
            let v = rep.read("Failed requests", line, "(Connect: {}, Receive: {}, Length: {}, Exceptions: {})")?;
            for (kind, n) in ["connect", "receive", "length", "exceptions"].into_iter().zip(v) {
                if n > 0.0 {
                    m.result.errors.push((kind.to_string(), n as u64));
                }
            }
        }
        if let Some(n) = non2xx.filter(|n| *n > 0.0) {
            m.result.errors.push(("non_2xx".into(), n as u64));
        }
        connection_times(&rep, &mut m)?;
        // ab prints the percentiles unless -d, when more than one request completed.
        let percentiles = !out.args.iter().any(|a| is_flag_d(a)) && complete.is_some_and(|n| n > 1.0);
        percentile_table(&rep, &mut m, percentiles)?;
        Ok(m.result)
    }
}

/// The labels of ab's summary, from `Server Software:` to `Transfer rate:`.
const SUMMARY: &[&str] = &[
    "Server Software:",
    "Server Hostname:",
    "Server Port:",
    "SSL/TLS Protocol:",
    "Server Temp Key:",
    "TLS Server Name:",
    "Document Path:",
    "Document Length:",
    "Concurrency Level:",
    "Time taken for tests:",
    "Complete requests:",
    "Failed requests:",
    "Write errors:",
    "Non-2xx responses:",
    "Keep-Alive requests:",
    "Total transferred:",
    "Total body sent:",
    "HTML transferred:",
    "Requests per second:",
    "Time per request:",
    "Transfer rate:",
];

/// Every line of the summary is one ab prints: a label ab did not write means the output is not
/// ab's (a line missing from it would otherwise read as a count of 0).
fn known_lines(rep: &Report) -> Result<(), ParseError> {
    let summary = rep
        .text
        .lines()
        .skip_while(|l| !SUMMARY.iter().any(|s| l.starts_with(s)))
        .take_while(|l| !l.starts_with("Connection Times"));
    for line in summary {
        let l = line.trim();
        let known = l.is_empty()
            || SUMMARY.iter().any(|s| line.starts_with(s))
            || (line.starts_with(' ') && (l.starts_with("(Connect:") || l.ends_with("kb/s sent") || l.ends_with("kb/s total")));
        if !known {
            return Err(ParseError::with_raw(
                format!("ab: unexpected line in the summary: `{}`", super::text::excerpt(line)),
                rep.text,
            ));
        }
    }
    Ok(())
}

/// `Requests per second`, the two `Time per request` and `Transfer rate` lines.
fn summary(rep: &Report, m: &mut Metrics) -> Result<(), ParseError> {
    m.push(
        "requests_per_s",
        "req/s",
        rep.need("Requests per second:", "{} [#/sec] (mean)")?[0],
        Better::Higher,
    );
    let label = "Time per request:";
    let lines: Vec<&str> = rep.text.lines().filter_map(|l| l.strip_prefix(label)).collect();
    for (name, shape) in [
        ("time_per_request_ms", "{} [ms] (mean)"),
        ("time_per_request_all_ms", "{} [ms] (mean, across all concurrent requests)"),
    ] {
        let across = name.ends_with("all_ms");
        let Some(line) = lines.iter().find(|l| l.contains("across all") == across) else {
            return Err(rep.cut(&format!("no `{}` line", shape.trim_start_matches("{} "))));
        };
        m.push(name, "ms", rep.read(label, line, shape)?[0], Better::Lower);
    }
    let rate = rep.need("Transfer rate:", "{} [Kbytes/sec] received")?[0];
    m.push("transfer_kib_per_s", "KiB/s", rate, Better::Higher);
    Ok(())
}

/// `Connection Times (ms)`: rows Connect/Processing/Waiting/Total, columns min mean sd median max
/// (min avg max with -S).
fn connection_times(rep: &Report, m: &mut Metrics) -> Result<(), ParseError> {
    let Some(b) = block(rep.text, "Connection Times (ms)") else {
        return Err(rep.cut("no `Connection Times (ms)` table"));
    };
    let cols: &[&str] = if b.lines().next().is_some_and(|h| h.contains("median")) {
        &["min", "mean", "sd", "median", "max"]
    } else {
        &["min", "mean", "max"]
    };
    let row_shape = vec!["{}"; cols.len()].join(" ");
    for row in ["Connect:", "Processing:", "Waiting:", "Total:"] {
        let v = rep.part(b).need(row, &row_shape)?;
        let base = snake(row);
        for (col, x) in cols.iter().zip(v) {
            m.push(format!("{base}_{col}_ms"), "ms", x, Better::Lower);
        }
    }
    Ok(())
}

/// `Percentage of the requests served within a certain time (ms)`: `  50%      0` ... ` 100%  1
/// (longest request)`, which ends it.
fn percentile_table(rep: &Report, m: &mut Metrics, expected: bool) -> Result<(), ParseError> {
    let Some(b) = block(rep.text, "Percentage of the requests served") else {
        return if expected {
            Err(rep.cut("no `Percentage of the requests served` table"))
        } else {
            Ok(())
        };
    };
    for line in b.lines() {
        let longest = line.ends_with("(longest request)");
        let shape = if longest { "{}% {} (longest request)" } else { "{}% {}" };
        let v = rep.read("Percentage of the requests served", line, shape)?;
        m.push(format!("latency_p{}_ms", v[0]), "ms", v[1], Better::Lower);
        if longest {
            return Ok(());
        }
    }
    Err(rep.cut("the percentile table ends before `100%`"))
}

/// `-d` (do not print the percentile table), alone or among other flags without a value.
fn is_flag_d(arg: &str) -> bool {
    arg.len() > 1 && arg.starts_with('-') && arg[1..].chars().all(|c| "dSkVwihrql".contains(c)) && arg.contains('d')
}
