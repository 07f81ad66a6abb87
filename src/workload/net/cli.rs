//! `perflab load net`.

use super::config::{prepare, Amount, NetConfig, NetMode};
use crate::workload::driver::coordinator::Hooks;
use crate::workload::driver::interval::Tick;
use hdrhistogram::Histogram;
use std::io::Write;

#[derive(clap::Args, Debug)]
pub struct NetArgs {
    /// The server, `perflab serve --net PORT`: `127.0.0.1:PORT` or `[::1]:PORT`
    pub target: String,
    /// stream (TCP bulk), udp, rr (round trips) or crr (a connection per round trip)
    #[arg(short = 'm', long, default_value = "stream")]
    pub mode: String,
    /// Connections (stream, rr, crr) or senders (udp)
    #[arg(short = 'P', long)]
    pub streams: Option<u64>,
    /// stream: upload, download or both
    #[arg(long)]
    pub direction: Option<String>,
    /// Bytes per write (stream: 128K), per datagram (udp: 1400), per request and response (rr: 1)
    #[arg(short = 'l', long)]
    pub size: Option<String>,
    /// udp: send rate in bit/s over all senders (e.g. 1G, 500M; default 1M)
    #[arg(short = 'b', long)]
    pub rate: Option<String>,
    /// stream: move exactly this many bytes, then stop (no warm-up)
    #[arg(short = 'n', long)]
    pub bytes: Option<String>,
    /// Socket send and receive buffers of both ends (e.g. 4M)
    #[arg(short = 'w', long)]
    pub buffer: Option<String>,
    /// stream upload: send with MSG_ZEROCOPY
    #[arg(short = 'Z', long)]
    pub zerocopy: bool,
    /// How long to measure (e.g. 10s)
    #[arg(short = 'd', long, default_value = "10s")]
    pub duration: String,
    /// Warm-up before measuring (e.g. 1s)
    #[arg(long)]
    pub warmup: Option<String>,
    /// Print the result as JSON (schema perflab.load.net/1)
    #[arg(long)]
    pub json: bool,
    /// No live progress line
    #[arg(short, long)]
    pub quiet: bool,
}

fn amount(v: &Option<String>) -> Option<Amount> {
    v.as_ref()
        .map(|s| s.parse::<u64>().map(Amount::Number).unwrap_or_else(|_| Amount::Text(s.clone())))
}

/// The live line: `[   3s]   14.21 Gbit/s` (stream, udp) or transactions/s and p99 (rr, crr).
fn live(mode: NetMode, t: &Tick) {
    match mode {
        NetMode::Rr | NetMode::Crr => crate::workload::driver::live::print(t, "transactions"),
        NetMode::Stream | NetMode::Udp => {
            eprint!(
                "\r[{:>4.0}s] {:>10.3} Gbit/s  errors {:<6}",
                t.t_s + 1.0,
                t.requests_per_s * 8.0 / 1e9,
                t.errors
            );
            let _ = std::io::stderr().flush();
        }
    }
}

pub fn run(a: NetArgs) -> anyhow::Result<i32> {
    let cfg = NetConfig {
        target: a.target.clone(),
        mode: Some(a.mode.clone()),
        streams: a.streams,
        direction: a.direction.clone(),
        size: amount(&a.size),
        rate: amount(&a.rate),
        bytes: amount(&a.bytes),
        buffer: amount(&a.buffer),
        zerocopy: a.zerocopy,
    };
    let p = prepare(&cfg)?;
    let (duration, warmup) = crate::workload::driver::live::durations(&a.duration, a.warmup.as_deref())?;
    let cancel = crate::util::Cancel::on_signals()?;
    let show = !a.quiet && !a.json;
    let mut on_tick = |t: &Tick, _: &Histogram<u64>| {
        if show {
            live(p.mode, t);
        }
    };
    let hooks = Hooks {
        on_load_start: &mut || {},
        on_tick: &mut on_tick,
    };
    let report = super::engine::run(&p, warmup, duration, &cancel, hooks)?;
    if show {
        eprintln!();
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report.json())?);
    } else {
        print!("{}", report.summary());
    }
    let failure = report.failure();
    if let (Some(f), false) = (&failure, cancel.is_cancelled()) {
        eprintln!("{f}");
    }
    Ok(if cancel.is_cancelled() {
        130
    } else if failure.is_some() || report.measured.is_zero() {
        1
    } else {
        0
    })
}
