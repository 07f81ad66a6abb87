//! The `perflab serve` command line.

use super::{start, Delay, Model, ServeConfig, Stall};
use crate::error::usage;
use std::io::Write;

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// Port (0 = pick a free one; the address is printed on stdout)
    #[arg(long, short, default_value_t = 8080)]
    pub port: u16,
    /// Concurrency model: event-loop (HTTP/1.1 + h2c), pool, thread-per-connection (HTTP/1.1 only)
    #[arg(long, default_value = "event-loop")]
    pub model: String,
    /// Worker threads of the pool model
    #[arg(long, default_value_t = 5)]
    pub workers: usize,
    /// Event-loop threads (0 = one per CPU)
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Body size of GET / in bytes (GET /bytes/N serves N bytes)
    #[arg(long, default_value_t = 37)]
    pub size: usize,
    /// Delay per request: 20ms, uniform:5ms-15ms or exp:10ms
    #[arg(long)]
    pub delay: Option<String>,
    /// Testing aid: close each connection after N responses
    #[arg(long, value_name = "N")]
    pub close_after: Option<u64>,
    /// Testing aid: a global pause this long after start (with --stall-for)
    #[arg(long, value_name = "D")]
    pub stall_at: Option<String>,
    /// Testing aid: how long the global pause lasts
    #[arg(long, value_name = "D")]
    pub stall_for: Option<String>,
    /// Testing aid: serve HTTPS (ALPN h2 and http/1.1) with this PEM certificate (with --tls-key;
    /// event-loop model)
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// Testing aid: the PEM private key of --tls-cert
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<std::path::PathBuf>,
    /// Testing aid: answer this fraction of requests (0..1) with 500
    #[arg(long, default_value_t = 0.0)]
    pub fail_rate: f64,
    /// Also echo UDP datagrams on this port (0 = a free one; the address is printed), the target of
    /// `perflab probe udp`
    #[arg(long, value_name = "PORT")]
    pub udp_echo: Option<u16>,
    /// Testing aid: the UDP echo drops every Nth datagram
    #[arg(long, value_name = "N")]
    pub udp_drop_every: Option<u64>,
    /// Testing aid: the UDP echo holds each reply MS milliseconds (or a duration: 15ms, 1s)
    #[arg(long, value_name = "MS")]
    pub udp_hold: Option<String>,
    /// Also serve `perflab load net` on this port, TCP and UDP (0 = a free one; the address is
    /// printed)
    #[arg(long, value_name = "PORT")]
    pub net: Option<u16>,
    /// Testing aid: the net server drops every Nth UDP datagram it receives
    #[arg(long, value_name = "N")]
    pub net_drop_every: Option<u64>,
}

/// The UDP echo's configuration, if asked for.
fn udp_config(a: &ServeArgs) -> anyhow::Result<Option<super::udp_echo::UdpEchoConfig>> {
    let Some(port) = a.udp_echo else {
        if a.udp_drop_every.is_some() || a.udp_hold.is_some() {
            return Err(usage("--udp-drop-every and --udp-hold need --udp-echo PORT"));
        }
        return Ok(None);
    };
    if a.udp_drop_every == Some(0) {
        return Err(usage("--udp-drop-every must be at least 1"));
    }
    let hold = match a.udp_hold.as_deref().map(str::trim) {
        None => std::time::Duration::ZERO,
        Some(ms) if !ms.is_empty() && ms.chars().all(|c| c.is_ascii_digit()) => {
            std::time::Duration::from_millis(ms.parse().map_err(|_| usage(format!("--udp-hold: `{ms}` is too large")))?)
        }
        Some(d) => crate::util::duration::parse(d).map_err(|e| usage(format!("--udp-hold: {e}")))?,
    };
    Ok(Some(super::udp_echo::UdpEchoConfig {
        host: a.host,
        port,
        drop_every: a.udp_drop_every,
        hold,
    }))
}

fn config(a: &ServeArgs) -> anyhow::Result<ServeConfig> {
    if a.workers == 0 {
        return Err(usage("--workers must be at least 1"));
    }
    let model = match a.model.as_str() {
        "event-loop" | "event" | "async" => Model::EventLoop,
        "pool" => Model::Pool { workers: a.workers },
        "thread-per-connection" | "threads" => Model::ThreadPerConnection,
        other => return Err(usage(format!("--model {other}: use event-loop, pool or thread-per-connection"))),
    };
    let delay = match &a.delay {
        Some(d) => Delay::parse(d).map_err(|e| usage(format!("--delay: {e}")))?,
        None => Delay::None,
    };
    let dur = |s: &Option<String>, flag: &str| {
        s.as_deref()
            .map(crate::util::duration::parse)
            .transpose()
            .map_err(|e| usage(format!("{flag}: {e}")))
    };
    let stall = match (dur(&a.stall_at, "--stall-at")?, dur(&a.stall_for, "--stall-for")?) {
        (Some(at), Some(length)) => Some(Stall { at, length }),
        (None, None) => None,
        _ => return Err(usage("--stall-at and --stall-for go together")),
    };
    if !(0.0..=1.0).contains(&a.fail_rate) {
        return Err(usage("--fail-rate is a fraction between 0 and 1"));
    }
    if a.close_after == Some(0) {
        return Err(usage("--close-after must be at least 1"));
    }
    if a.size > super::content::MAX_BODY {
        return Err(usage(format!("--size is at most {} bytes", super::content::MAX_BODY)));
    }
    let tls = match (&a.tls_cert, &a.tls_key) {
        (Some(c), Some(k)) => Some((c.clone(), k.clone())),
        (None, None) => None,
        _ => return Err(usage("--tls-cert and --tls-key go together")),
    };
    if tls.is_some() && model != Model::EventLoop {
        return Err(usage("--tls-cert needs the event-loop model"));
    }
    Ok(ServeConfig {
        host: a.host,
        port: a.port,
        model,
        size: a.size,
        delay,
        close_after: a.close_after,
        stall,
        fail_rate: a.fail_rate,
        threads: a.threads,
        tls,
    })
}

pub fn run(a: ServeArgs) -> anyhow::Result<i32> {
    let cfg = config(&a)?;
    let udp = udp_config(&a)?;
    let net = super::net::config(a.host, a.net, a.net_drop_every)?;
    let cancel = crate::util::Cancel::on_signals()?;
    // The UDP echo is bound before the HTTP listener: a caller that waits for the TCP port (a
    // plan's `ready = { tcp = ... }`) may send its first datagram at once.
    let echo = udp.map(super::udp_echo::start).transpose()?;
    let server = start(cfg)?;
    let net = net.map(super::net::start).transpose()?;
    let mut out = std::io::stdout();
    let scheme = if a.tls_cert.is_some() { "https" } else { "http" };
    writeln!(out, "listening on {scheme}://{} (model {})", server.addr(), a.model)?;
    if let Some(e) = &echo {
        writeln!(out, "echoing udp on {}", e.addr())?;
    }
    if let Some(n) = &net {
        writeln!(out, "serving net on {}", n.addr())?;
    }
    out.flush()?;
    while !cancel.is_cancelled() {
        cancel.sleep(std::time::Duration::from_millis(200));
    }
    let served = server.shutdown()?;
    writeln!(out, "{served}")?;
    if let Some(e) = echo {
        let c = e.shutdown();
        writeln!(out, "echoed {} of {} udp datagrams ({} dropped)", c.echoed, c.received, c.dropped)?;
    }
    if let Some(n) = net {
        let c = n.shutdown();
        writeln!(
            out,
            "net: {} connections, {} bytes received, {} sent, {} datagrams ({} dropped)",
            c.connections, c.bytes_received, c.bytes_sent, c.datagrams, c.dropped
        )?;
    }
    Ok(0)
}
