//! The `net` workload's settings, as a plan's `[workload]` table and `perflab load net` give them,
//! and their checks. Messages name the key first (`size must be ...`).

use crate::error::usage;
use serde::Deserialize;
use std::net::SocketAddr;

/// A number as written: a plain number or a text with a suffix (`"128K"`, `"1G"`).
#[derive(Clone, Debug, PartialEq, Deserialize, serde::Serialize)]
#[serde(untagged)]
pub enum Amount {
    Number(u64),
    Text(String),
}

impl Amount {
    /// An option's value: a plain number, or a text read as a plan's is.
    pub fn from_arg(text: &str) -> Result<Amount, String> {
        Ok(text
            .parse::<u64>()
            .map(Amount::Number)
            .unwrap_or_else(|_| Amount::Text(text.to_string())))
    }
}

crate::workload::registry::spec::settings! {
    /// The `net` workload's settings: a plan's `[workload]` keys and `perflab load net`'s options.
    #[derive(Clone, Debug, Default, serde::Serialize)]
    #[serde(deny_unknown_fields)]
    pub struct NetConfig {
        /// the server, `perflab serve --net PORT`: `"HOST:PORT"` (`"127.0.0.1:5201"`, `"[::1]:5201"`, `"server:5201"`)
        #[key("string", "required")]
        #[arg(value_name = "TARGET")]
        pub target: String,
        /// TCP bulk transfer, UDP at a rate, round trips on kept connections (TCP_RR), or a connection per round trip (TCP_CRR)
        #[key("`\"stream\"`, `\"udp\"`, `\"rr\"` or `\"crr\"`", "`\"stream\"`")]
        #[serde(default)]
        #[arg(short = 'm', long, default_value = "stream")]
        pub mode: Option<String>,
        /// connections (stream, rr, crr) or UDP senders
        #[key("integer from 1 to 256", "`1`")]
        #[serde(default)]
        #[arg(short = 'P', long)]
        pub streams: Option<u64>,
        /// stream: who sends (`both`: a connection each way per stream)
        #[key("`\"upload\"`, `\"download\"` or `\"both\"`", "`\"upload\"`")]
        #[serde(default)]
        #[arg(long)]
        pub direction: Option<String>,
        /// bytes per write, per datagram (32 to 65 507), or per request and response
        #[key("integer (bytes) or string (`\"128K\"`)", "stream `\"128K\"`, udp `1400`, rr/crr `1`")]
        #[serde(default)]
        #[arg(short = 'l', long, value_parser = Amount::from_arg)]
        pub size: Option<Amount>,
        /// udp: the send rate over all senders
        #[key("integer (bit/s) or string (`\"500M\"`, `\"1G\"`)", "`\"1M\"` (as iperf3)")]
        #[serde(default)]
        #[arg(short = 'b', long, value_parser = Amount::from_arg)]
        pub rate: Option<Amount>,
        /// stream: move exactly this many bytes over all streams, then stop (no warm-up)
        #[key("integer or string (`\"1G\"`)", "none (time-based)")]
        #[serde(default)]
        #[arg(short = 'n', long, value_parser = Amount::from_arg)]
        pub bytes: Option<Amount>,
        /// SO_SNDBUF and SO_RCVBUF of both ends, set before connecting (capped by `net.core.wmem_max`/`rmem_max`)
        #[key("integer or string (`\"4M\"`)", "the kernel's")]
        #[serde(default)]
        #[arg(short = 'w', long, value_parser = Amount::from_arg)]
        pub buffer: Option<Amount>,
        /// stream upload: send with MSG_ZEROCOPY (refused where the kernel lacks SO_ZEROCOPY)
        #[key("bool", "`false`")]
        #[serde(default)]
        #[arg(short = 'Z', long)]
        pub zerocopy: bool,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetMode {
    Stream,
    Udp,
    Rr,
    Crr,
}

impl NetMode {
    pub fn name(self) -> &'static str {
        match self {
            NetMode::Stream => "stream",
            NetMode::Udp => "udp",
            NetMode::Rr => "rr",
            NetMode::Crr => "crr",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Upload,
    Download,
    Both,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::Upload => "upload",
            Direction::Download => "download",
            Direction::Both => "both",
        }
    }
}

/// Checked settings.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub target: SocketAddr,
    pub mode: NetMode,
    pub streams: usize,
    pub direction: Direction,
    pub size: usize,
    /// udp, bit/s.
    pub rate: f64,
    pub bytes: Option<u64>,
    pub buffer: Option<u32>,
    pub zerocopy: bool,
}

/// `"128K"` → 131072 (binary multiples), for sizes.
pub fn size_of(key: &str, a: &Amount) -> anyhow::Result<u64> {
    amount(key, a, 1024.0, "bytes, or a number with K, M or G (\"128K\")")
}

/// `"1G"` → 1e9 (decimal multiples), for rates in bit/s.
pub fn rate_of(key: &str, a: &Amount) -> anyhow::Result<u64> {
    amount(key, a, 1000.0, "bit/s, or a number with K, M or G (\"500M\", \"1G\")")
}

fn amount(key: &str, a: &Amount, base: f64, what: &str) -> anyhow::Result<u64> {
    let t = match a {
        Amount::Number(n) => return Ok(*n),
        Amount::Text(t) => t.trim(),
    };
    let bad = || usage(format!("{key} \"{t}\": write {what}"));
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], base),
        Some('M') => (&t[..t.len() - 1], base * base),
        Some('G') => (&t[..t.len() - 1], base * base * base),
        _ => (t, 1.0),
    };
    let n: f64 = num.trim().parse().map_err(|_| bad())?;
    if !n.is_finite() || n < 0.0 || n * mult > 1e18 {
        return Err(bad());
    }
    Ok((n * mult).round() as u64)
}

/// The server's address: `HOST:PORT` (an IP address or a name, resolved here; the first address
/// it resolves to). The server may be on another machine, as a plan's remote target is.
pub fn target(t: &str) -> anyhow::Result<SocketAddr> {
    let shown = crate::util::text::clip(t);
    let (host, port) = crate::util::url::host_port(t).map_err(|why| {
        usage(format!(
            "target \"{shown}\": {why}; give the address `perflab serve --net PORT` listens on"
        ))
    })?;
    crate::util::url::resolve(&host, port).map_err(|e| usage(format!("target \"{shown}\": {e}")))
}

/// Check the settings.
pub fn prepare(c: &NetConfig) -> anyhow::Result<Prepared> {
    let target = target(&c.target)?;
    let mode = match c.mode.as_deref().unwrap_or("stream") {
        "stream" => NetMode::Stream,
        "udp" => NetMode::Udp,
        "rr" => NetMode::Rr,
        "crr" => NetMode::Crr,
        m => return Err(usage(format!("mode \"{m}\": use stream, udp, rr or crr"))),
    };
    let streams = match c.streams.unwrap_or(1) {
        0 => return Err(usage("streams must be at least 1")),
        n if n > 256 => return Err(usage(format!("streams must be at most 256, not {n}"))),
        n => n as usize,
    };
    let direction = match c.direction.as_deref() {
        None | Some("upload") => Direction::Upload,
        Some(_) if mode != NetMode::Stream => return Err(usage("direction is for mode = \"stream\"")),
        Some("download") => Direction::Download,
        Some("both") => Direction::Both,
        Some(d) => return Err(usage(format!("direction \"{d}\": use upload, download or both"))),
    };
    let default_size = match mode {
        NetMode::Stream => 128 << 10,
        NetMode::Udp => 1400,
        NetMode::Rr | NetMode::Crr => 1,
    };
    let size = c.size.as_ref().map(|s| size_of("size", s)).transpose()?.unwrap_or(default_size);
    let (lo, hi) = match mode {
        NetMode::Udp => (crate::util::netwire::DATAGRAM_MIN as u64, 65_507),
        _ => (1, 16 << 20),
    };
    if !(lo..=hi).contains(&size) {
        return Err(usage(format!(
            "size must be from {lo} to {hi} bytes for mode = \"{}\", not {size}",
            mode.name()
        )));
    }
    if c.rate.is_some() && mode != NetMode::Udp {
        return Err(usage("rate is for mode = \"udp\""));
    }
    let rate = c.rate.as_ref().map(|r| rate_of("rate", r)).transpose()?.unwrap_or(1_000_000);
    if mode == NetMode::Udp && !(1_000..=100_000_000_000).contains(&rate) {
        return Err(usage(format!("rate must be from 1K to 100G bit/s, not {rate}")));
    }
    let bytes = c.bytes.as_ref().map(|b| size_of("bytes", b)).transpose()?;
    if bytes.is_some() && mode != NetMode::Stream {
        return Err(usage("bytes is for mode = \"stream\""));
    }
    if bytes == Some(0) {
        return Err(usage("bytes must be at least 1"));
    }
    if bytes.is_some() && direction == Direction::Both {
        return Err(usage("bytes goes with direction upload or download, not both"));
    }
    let buffer = c.buffer.as_ref().map(|b| size_of("buffer", b)).transpose()?;
    if buffer.is_some_and(|b| !(4096..=(1 << 30)).contains(&b)) {
        return Err(usage("buffer must be from 4K to 1G bytes"));
    }
    if c.zerocopy && !(mode == NetMode::Stream && direction == Direction::Upload) {
        return Err(usage("zerocopy is for mode = \"stream\" with direction = \"upload\""));
    }
    Ok(Prepared {
        target,
        mode,
        streams,
        direction,
        size: size as usize,
        rate: rate as f64,
        bytes,
        buffer: buffer.map(|b| b as u32),
        zerocopy: c.zerocopy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> NetConfig {
        NetConfig {
            target: "127.0.0.1:5201".into(),
            ..Default::default()
        }
    }

    #[test]
    fn bad_settings_are_refused_with_the_key_first() {
        let bad = |c: NetConfig| format!("{:#}", prepare(&c).expect_err("refused"));
        assert!(bad(NetConfig {
            target: "localhost".into(),
            ..cfg()
        })
        .starts_with("target"));
        assert!(bad(NetConfig {
            mode: Some("tcp".into()),
            ..cfg()
        })
        .starts_with("mode"));
        assert!(bad(NetConfig { streams: Some(0), ..cfg() }).starts_with("streams"));
        assert!(bad(NetConfig {
            rate: Some(Amount::Text("1G".into())),
            ..cfg()
        })
        .starts_with("rate is for"));
        let udp = || NetConfig {
            mode: Some("udp".into()),
            ..cfg()
        };
        assert!(bad(NetConfig {
            rate: Some(Amount::Text("fast".into())),
            ..udp()
        })
        .starts_with("rate \"fast\""));
        assert!(bad(NetConfig {
            size: Some(Amount::Number(8)),
            ..udp()
        })
        .starts_with("size must be from 32"));
        assert!(bad(NetConfig {
            bytes: Some(Amount::Number(10)),
            ..udp()
        })
        .starts_with("bytes is for"));
        assert!(bad(NetConfig { zerocopy: true, ..udp() }).starts_with("zerocopy"));
        let p = prepare(&NetConfig {
            rate: Some(Amount::Text("1G".into())),
            ..udp()
        })
        .expect("udp");
        assert_eq!((p.rate, p.size), (1e9, 1400));
        let p = prepare(&NetConfig {
            size: Some(Amount::Text("64K".into())),
            bytes: Some(Amount::Text("1M".into())),
            ..cfg()
        })
        .expect("stream");
        assert_eq!((p.size, p.bytes, p.direction), (65536, Some(1 << 20), Direction::Upload));
    }
}
