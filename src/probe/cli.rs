//! The `perflab probe` command line: one probe, a live line per sample (as ping prints), then a
//! summary; Ctrl-C ends it with the summary.
//!
//! Exit codes, checked in this order (as `perflab http`'s):
//! - 2: bad input (the kind, the target, an option; an icmp probe without the privilege it needs):
//!   one line on stderr, nothing sent;
//! - 130: interrupted by SIGINT or SIGTERM; the summary of what was measured is still printed;
//! - 1: at least one probe was lost (timeout, error) or failed (non-zero exit, HTTP status >= 400),
//!   or no probe was answered;
//! - 0: otherwise.

use super::{Kind, Outcome, PhaseTag, ProbeResult, ProbeSet, ProbeSpec, Sample, Stats, Summary, Target};
use crate::error::usage;
use crate::util::duration;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct ProbeArgs {
    /// icmp, tcp, http, udp or command
    pub kind: String,
    /// icmp: HOST; tcp, udp: HOST:PORT; http: URL; command: one shell line, or a program and its
    /// arguments after `--`
    #[arg(required = true, num_args = 1..)]
    pub target: Vec<String>,
    /// Time between probes
    #[arg(short, long, default_value = "200ms")]
    pub interval: String,
    /// Stop after N probes (default: until Ctrl-C)
    #[arg(short, long)]
    pub count: Option<u64>,
    /// Stop after this long (e.g. 30s)
    #[arg(short, long)]
    pub duration: Option<String>,
    /// How long a probe waits for its answer; no answer by then is a loss
    #[arg(short = 'W', long, default_value = "1s")]
    pub timeout: String,
    /// icmp, udp: payload bytes per probe (default 56 for icmp, 64 for udp)
    #[arg(short, long)]
    pub size: Option<usize>,
    /// icmp: auto (raw if allowed, else datagram), raw or datagram
    #[arg(long, default_value = "auto")]
    pub icmp_socket: String,
    /// http (https://): accept any server certificate
    #[arg(long)]
    pub insecure: bool,
    /// http (https://): trust the CA certificates of this PEM file
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<String>,
    /// Print the result as JSON (schema perflab.probe/1) and no live lines
    #[arg(long)]
    pub json: bool,
    /// No live lines, only the summary
    #[arg(short, long)]
    pub quiet: bool,
}

fn spec_of(a: &ProbeArgs) -> anyhow::Result<ProbeSpec> {
    let kind = Kind::parse(&a.kind)?;
    let mut spec = match kind {
        Kind::Command if a.target.len() > 1 => ProbeSpec::argv(a.target.clone()),
        Kind::Command => ProbeSpec::shell(a.target[0].clone()),
        _ if a.target.len() > 1 => {
            return Err(usage(format!(
                "a {} probe takes one target, got {}: {}",
                kind.name(),
                a.target.len(),
                a.target.join(" ")
            )))
        }
        _ => ProbeSpec::new(kind, a.target[0].clone()),
    };
    let dur = |s: &str, flag: &str| duration::parse(s).map_err(|e| usage(format!("{flag}: {e}")));
    spec.interval = dur(&a.interval, "--interval")?;
    spec.timeout = dur(&a.timeout, "--timeout")?;
    spec.duration = a.duration.as_deref().map(|d| dur(d, "--duration")).transpose()?;
    spec.count = a.count;
    spec.size = a.size;
    spec.icmp_socket = super::IcmpSocket::parse(&a.icmp_socket)?;
    spec.insecure = a.insecure;
    spec.cacert = a.cacert.clone();
    Ok(spec)
}

pub fn run(a: ProbeArgs) -> anyhow::Result<i32> {
    let spec = spec_of(&a)?;
    let live = !a.quiet && !a.json;
    let cancel = crate::util::Cancel::on_signals()?;
    let tag = PhaseTag::new("probe");
    let observer: Option<super::Observer> = live.then(|| {
        let parts: &'static [&'static str] = if spec.kind == Kind::Http { super::http::PARTS } else { &[] };
        Arc::new(move |_: usize, s: &Sample| {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", line(s, parts));
            let _ = out.flush();
        }) as super::Observer
    });
    let set = ProbeSet::open(vec![spec.clone()])?;
    if live {
        let bound = match (spec.count, spec.duration) {
            (Some(n), Some(d)) => format!(", {n} probes or {}", duration::format(d)),
            (Some(n), None) => format!(", {n} probes"),
            (None, Some(d)) => format!(", for {}", duration::format(d)),
            (None, None) => ", until Ctrl-C".into(),
        };
        println!(
            "PROBE {} ({}): every {}, timeout {}{bound}",
            spec.label(),
            set.detail(0),
            show_duration(spec.interval),
            show_duration(spec.timeout)
        );
    }
    // A thread that sleeps until Ctrl-C (or SIGTERM) and then wakes this one, which otherwise
    // sleeps until the probe ends: no wake-up every few milliseconds to look at the flag.
    let mut signals = signal_hook::iterator::Signals::new([signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM])?;
    let signals_handle = signals.handle();
    let running = set.run(Arc::new(move || tag.clone()), observer)?;
    let (bell, flag) = (running.bell(), cancel.clone());
    let watcher = std::thread::Builder::new().name("probe-signals".into()).spawn(move || {
        if signals.forever().next().is_some() {
            flag.cancel();
            bell.ring();
        }
    })?;
    while !running.wait_finished(Duration::from_secs(3600)) {
        if cancel.is_cancelled() {
            break;
        }
    }
    signals_handle.close();
    let _ = watcher.join();
    // Interrupted: the probe in flight (a command, a connect, a GET, a datagram awaiting its reply)
    // is ended, not waited for, and is not a sample.
    let results = if cancel.is_cancelled() { running.abort() } else { running.stop() };
    let result = results
        .into_iter()
        .next()
        .ok_or_else(|| anyhow::anyhow!("the probe gave no result"))?;
    let interrupted = cancel.is_cancelled();
    let summary = result.summary();
    if a.json {
        println!("{}", result.json(interrupted));
    } else {
        print!("{}", summary_text(&result, &summary));
        if interrupted {
            println!("interrupted (a probe in flight is not counted)");
        }
    }
    if let Some(f) = &result.failure {
        eprintln!("perflab: error: {} probe: {f}", spec.kind.name());
    }
    Ok(if interrupted {
        130
    } else if summary.timeouts + summary.errors + summary.failed > 0 || summary.replies == 0 || result.failure.is_some() {
        1
    } else {
        0
    })
}

/// `250ms`, `1s`, `1.5ms`, `500us`.
fn show_duration(d: Duration) -> String {
    if d < Duration::from_millis(1) {
        format!("{}us", d.as_micros())
    } else if d < Duration::from_secs(1) && !d.subsec_micros().is_multiple_of(1000) {
        format!("{:.3}ms", d.as_secs_f64() * 1e3)
    } else {
        duration::format(d)
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

/// The live line of one sample, as ping prints its replies.
pub fn line(s: &Sample, parts: &[&str]) -> String {
    let parts = if s.parts.is_empty() {
        String::new()
    } else {
        let p: Vec<String> = parts.iter().zip(s.parts.iter()).map(|(n, d)| format!("{n} {}", ms(d))).collect();
        format!(" ({})", p.join(", "))
    };
    match &s.outcome {
        Outcome::Reply { rtt } => format!("seq={} time={} ms{parts}", s.seq, ms(*rtt)),
        Outcome::Failed { rtt, status } => format!("seq={} FAILED status={status} time={} ms{parts}", s.seq, ms(*rtt)),
        Outcome::Timeout => format!("seq={} timeout", s.seq),
        Outcome::Error(e) => format!("seq={} error: {e}", s.seq),
    }
}

fn stat(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.3}"))
}

fn stats_line(name: &str, s: &Stats) -> String {
    format!(
        "{name:<10} min {}  median {}  mean {}  p90 {}  p99 {}  max {}  sd {}",
        stat(s.min_ms),
        stat(s.median_ms),
        stat(s.mean_ms),
        stat(s.p90_ms),
        stat(s.p99_ms),
        stat(s.max_ms),
        stat(s.sd_ms)
    )
}

/// The summary printed at the end.
pub fn summary_text(r: &ProbeResult, s: &Summary) -> String {
    let mut out = format!("--- {} ---\n", r.spec.label());
    out += &format!(
        "{} probes, {} replies, {} loss ({} timeouts, {} errors), {} failed, in {:.1} s\n",
        s.n,
        s.replies,
        s.loss_pct.map_or("-".into(), |l| format!("{l:.1} %")),
        s.timeouts,
        s.errors,
        s.failed,
        r.elapsed.as_secs_f64()
    );
    let extra: Vec<String> = [
        ("skipped", r.skipped),
        ("late", r.late),
        ("duplicates", r.duplicates),
        ("reordered", s.reordered),
    ]
    .iter()
    .filter(|(_, n)| *n > 0)
    .map(|(what, n)| format!("{n} {what}"))
    .collect();
    if !extra.is_empty() {
        out += &format!("{}\n", extra.join(", "));
    }
    let mut why: Vec<(String, u64)> = Vec::new();
    for x in &r.samples {
        let w = match &x.outcome {
            Outcome::Failed { status, .. } => format!("failed with status {status}"),
            Outcome::Error(e) => e.clone(),
            _ => continue,
        };
        if let Some(i) = why.iter().position(|(k, _)| *k == w) {
            why[i].1 += 1;
        } else if why.len() < 5 {
            why.push((w, 1));
        }
    }
    for (w, n) in why {
        out += &format!("{n} × {w}\n");
    }
    out += &format!("{} (ms, {} replies)\n", stats_line("rtt", &s.rtt), s.rtt.count);
    for p in s.parts.iter().filter(|_| s.rtt.count > 0) {
        out += &format!("{}\n", stats_line(&format!("  {}", p.name), &p.stats));
    }
    if let Some(j) = s.jitter_ms {
        out += &format!("jitter     {j:.3} ms (RFC 3550)\n");
    }
    if !matches!(r.spec.target, Target::Command(_)) {
        out += &format!(
            "traffic    {:.1} packets/s, {:.0} bytes/s ({} packets and {} bytes out, {} and {} in)\n",
            s.packets_per_s, s.bytes_per_s, s.traffic.packets_out, s.traffic.bytes_out, s.traffic.packets_in, s.traffic.bytes_in
        );
    }
    out
}
