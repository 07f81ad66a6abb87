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
use std::io::Write;

/// `perflab http`'s options: the http workload's settings (a plan's keys) and the options of the
/// command alone.
#[derive(clap::Args, Debug)]
pub struct HttpArgs {
    #[command(flatten)]
    pub settings: HttpConfig,
    /// Warm-up before measuring (e.g. 2s)
    #[arg(long)]
    pub warmup: Option<String>,
    /// Print the result as JSON (schema perflab.http/1)
    #[arg(long)]
    pub json: bool,
    /// Write an HdrHistogram interval log (1 s intervals, µs) to FILE
    #[arg(long, value_name = "FILE")]
    pub hdr_log: Option<String>,
    /// No live progress line
    #[arg(short, long)]
    pub quiet: bool,
    /// Run the load as a one-trial run of the runner and serve its live page, events and /metrics
    /// meanwhile (default 127.0.0.1 and a free port, printed at the start; another address than
    /// loopback needs the token printed then); the run is stored under --runs-dir. Needs -d; not
    /// with --json or --hdr-log
    #[arg(long, value_name = "ADDR:PORT", num_args = 0..=1, require_equals = true, default_missing_value = "127.0.0.1:0")]
    pub live: Option<String>,
    /// With --live: where the run directory is created
    #[arg(long, value_name = "DIR", default_value = "runs", requires = "live")]
    pub runs_dir: std::path::PathBuf,
    /// The plain-HTTP/1.1 engine: epoll (the default) or uring (io_uring; kept for comparison,
    /// bench/http_vs_peers.sh --uring)
    #[arg(long, hide = true, value_name = "NAME")]
    pub engine: Option<String>,
}

/// `--engine`: true for io_uring, which only plain HTTP/1.1 runs on and which this process must be
/// allowed to use.
fn engine(name: Option<&str>, p: &super::config::Prepared) -> anyhow::Result<bool> {
    match name {
        None | Some("epoll") => Ok(false),
        Some("uring") => {
            if p.tls.is_some() || p.protocol != super::config::Protocol::Http1 {
                return Err(crate::error::usage(
                    "--engine uring: only plain HTTP/1.1 runs on io_uring (not https:// or --http2)",
                ));
            }
            super::uring::probe().map_err(|e| anyhow::anyhow!("--engine uring: this process may not use io_uring ({e})"))?;
            Ok(true)
        }
        Some(e) => Err(crate::error::usage(format!("--engine must be epoll or uring, not {e:?}"))),
    }
}

pub fn run(a: HttpArgs) -> anyhow::Result<i32> {
    let cfg = &a.settings;
    if cfg.requests.is_none() && cfg.duration.is_none() {
        return Err(crate::error::usage("give -n REQUESTS or -d DURATION (or both)"));
    }
    let mut prepared = prepare(cfg)?;
    prepared.uring = engine(a.engine.as_deref(), &prepared)?;
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
