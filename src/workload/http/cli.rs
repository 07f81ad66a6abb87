//! The `perflab http` command line.
//!
//! Exit codes, checked in this order (README `## perflab http`):
//! - 2: bad input (an option, the URL, a body file, the --hdr-log path): one line on stderr, no load sent;
//! - 130: interrupted by SIGINT or SIGTERM; the summary of what was measured is still printed
//!   (a second signal exits at once with 130, without it);
//! - 1: at least one measured request ended in a transport error (connect refused or timed out,
//!   reset, closed before the response, read timeout, protocol, body short), or no response came at
//!   all, or the run could not go on (a worker failed, the hdr log could not be written);
//! - 0: otherwise. HTTP statuses >= 400 are responses: they count under "Failed requests" and in
//!   `error_rate_pct`, but do not change the exit code.

use super::config::HttpConfig;
use super::template::prepare;
use std::collections::BTreeMap;
use std::io::Write;

#[derive(clap::Args, Debug)]
pub struct HttpArgs {
    /// Target URL, e.g. http://127.0.0.1:8080/
    pub url: String,
    /// Concurrent connections
    #[arg(short = 'c', long, default_value_t = 10)]
    pub connections: u64,
    /// Stop after N requests
    #[arg(short = 'n', long)]
    pub requests: Option<u64>,
    /// Stop after this long (e.g. 10s); with -n, whichever comes first
    #[arg(short = 'd', long)]
    pub duration: Option<String>,
    /// Warm-up before measuring (e.g. 2s)
    #[arg(long)]
    pub warmup: Option<String>,
    /// Open model: requests per second
    #[arg(short = 'r', long)]
    pub rate: Option<f64>,
    /// Open-model arrivals: constant or poisson
    #[arg(long)]
    pub arrival: Option<String>,
    /// Seed for Poisson arrivals
    #[arg(long)]
    pub seed: Option<u64>,
    /// Cap on requests in flight (default: the number of connections)
    #[arg(long)]
    pub max_inflight: Option<u64>,
    /// HTTP method (default GET, or POST with a body)
    #[arg(short = 'm', long)]
    pub method: Option<String>,
    /// Extra header "Name: value" (repeatable)
    #[arg(short = 'H', long = "header")]
    pub headers: Vec<String>,
    /// Request body
    #[arg(short = 'b', long)]
    pub body: Option<String>,
    /// Request body from a file
    #[arg(long)]
    pub body_file: Option<String>,
    /// A new connection for each request (like ab without -k)
    #[arg(long)]
    pub no_keepalive: bool,
    /// HTTP/2: over TLS (ALPN h2) for https://, h2c with prior knowledge for http://
    #[arg(long)]
    pub http2: bool,
    /// HTTP/2: concurrent streams per connection (default 1)
    #[arg(long)]
    pub streams: Option<u64>,
    /// HTTPS: accept any server certificate
    #[arg(long)]
    pub insecure: bool,
    /// HTTPS: trust the CA certificates of this PEM file (default: the Mozilla roots)
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<String>,
    /// Per-request timeout (default 30s)
    #[arg(long)]
    pub timeout: Option<String>,
    /// Worker threads (default: one per CPU; half of them with keep-alive against a loopback target)
    #[arg(short = 't', long)]
    pub threads: Option<u64>,
    /// Wait for responses by polling, not sleeping: no thread wake-up delay in the latencies, one
    /// busy core per worker thread (plain HTTP/1.1)
    #[arg(long)]
    pub busy_poll: bool,
    /// Print the result as JSON (schema perflab.http/1)
    #[arg(long)]
    pub json: bool,
    /// Write an HdrHistogram interval log (1 s intervals, µs) to FILE
    #[arg(long, value_name = "FILE")]
    pub hdr_log: Option<String>,
    /// No live progress line
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(a: HttpArgs) -> anyhow::Result<i32> {
    let mut headers = BTreeMap::new();
    for h in &a.headers {
        let (k, v) = h
            .split_once(':')
            .ok_or_else(|| crate::error::usage(format!("header `{h}`: write it as \"Name: value\"")))?;
        headers.insert(k.trim().to_string(), v.trim().to_string());
    }
    if a.requests.is_none() && a.duration.is_none() {
        return Err(crate::error::usage("give -n REQUESTS or -d DURATION (or both)"));
    }
    let cfg = HttpConfig {
        url: a.url.clone(),
        connections: a.connections,
        requests: a.requests,
        duration: a.duration.clone(),
        rate: a.rate,
        arrival: a.arrival.clone(),
        seed: a.seed,
        max_inflight: a.max_inflight,
        method: a.method.clone(),
        headers,
        body: a.body.clone(),
        body_file: a.body_file.clone(),
        keepalive: !a.no_keepalive,
        http2: a.http2,
        streams: a.streams,
        insecure: a.insecure,
        cacert: a.cacert.clone(),
        timeout: a.timeout.clone(),
        threads: a.threads,
        busy_poll: a.busy_poll,
    };
    let prepared = prepare(&cfg)?;
    let warmup = a
        .warmup
        .as_deref()
        .map(crate::util::duration::parse)
        .transpose()
        .map_err(|e| crate::error::usage(format!("--warmup: {e}")))?
        .unwrap_or_default();
    let cancel = crate::util::Cancel::on_signals()?;
    let live = !a.quiet && !a.json;
    let mut log_file = a.hdr_log.as_deref().map(super::hdrlog::HdrLogFile::create).transpose()?;
    let measure_start = std::time::SystemTime::now() + warmup;
    let mut log = log_file.as_mut().map(|f| f.begin(measure_start, &prepared.url)).transpose()?;
    let mut log_error: Option<anyhow::Error> = None;
    let mut on_tick = |t: &super::Tick, h: &hdrhistogram::Histogram<u64>| {
        if let Some(w) = log.as_mut() {
            if let Err(e) = super::hdrlog::write(w, h, t.t_s, t.span_s) {
                log_error.get_or_insert(e);
            }
        }
        if live {
            let p99 = if t.p99_ms.is_finite() {
                format!("{:.2} ms", t.p99_ms)
            } else {
                "-".into()
            };
            eprint!(
                "\r[{:>4.0}s] {:>10.0} req/s  p99 {p99:>10}  errors {:<6}",
                t.t_s + 1.0,
                t.requests_per_s,
                t.errors
            );
            let _ = std::io::stderr().flush();
        }
    };
    let report = super::engine::run(&prepared, warmup, &cancel, &mut || {}, &mut on_tick)?;
    drop(log);
    if let Some(f) = log_file.as_mut() {
        super::hdrlog::finish(f)?;
    }
    if let Some(e) = log_error {
        return Err(e);
    }
    if live {
        eprintln!();
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report.json())?);
    } else {
        print!("{}", report.summary());
    }
    Ok(if cancel.is_cancelled() {
        130
    } else if report.errors() > 0 || report.stats.responses == 0 {
        1
    } else {
        0
    })
}
