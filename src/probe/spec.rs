//! What a probe is asked to do: its kind, its target, its schedule and its options, checked into
//! one clear line per problem before anything is sent.

use crate::error::usage;
use crate::util::command::CommandLine;
use std::net::SocketAddr;
use std::time::Duration;

/// A probe stops by itself after this many probes, whatever it was asked.
pub const MAX_PROBES: u64 = 1_000_000;
/// A probe stops by itself after this long, whatever it was asked.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);
/// The default time between two probes.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(200);
/// The default time a probe waits for its answer.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);

/// The kinds of probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// ICMP echo requests to a host.
    Icmp,
    /// The time to connect to host:port.
    Tcp,
    /// A GET with its parts timed apart (DNS, connect, TLS, wait, transfer).
    Http,
    /// Isochronous UDP echo: round trip, loss, reordering, jitter.
    Udp,
    /// Any command, timed to its exit.
    Command,
}

impl Kind {
    pub const ALL: [Kind; 5] = [Kind::Icmp, Kind::Tcp, Kind::Http, Kind::Udp, Kind::Command];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Icmp => "icmp",
            Kind::Tcp => "tcp",
            Kind::Http => "http",
            Kind::Udp => "udp",
            Kind::Command => "command",
        }
    }

    /// The kind of a name; the error names the known ones.
    pub fn parse(s: &str) -> anyhow::Result<Kind> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| usage(format!("unknown probe kind `{s}`: use icmp, tcp, http, udp or command")))
    }
}

/// What a probe is aimed at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `HOST` (icmp), `HOST:PORT` (tcp, udp) or a URL (http).
    Address(String),
    /// The command of a `command` probe: a line run by `sh -c`, or a program and its arguments.
    Command(CommandLine),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Address(a) | Target::Command(CommandLine::Shell(a)) => f.write_str(a),
            Target::Command(CommandLine::Argv(v)) => f.write_str(&v.join(" ")),
        }
    }
}

/// Which socket an icmp probe uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IcmpSocket {
    /// A raw socket where allowed (root or CAP_NET_RAW), else an ICMP datagram socket.
    #[default]
    Auto,
    /// Only a raw socket.
    Raw,
    /// Only an ICMP datagram socket (allowed by `net.ipv4.ping_group_range`).
    Datagram,
}

impl IcmpSocket {
    pub fn parse(s: &str) -> anyhow::Result<IcmpSocket> {
        match s {
            "auto" => Ok(IcmpSocket::Auto),
            "raw" => Ok(IcmpSocket::Raw),
            "datagram" | "dgram" => Ok(IcmpSocket::Datagram),
            o => Err(usage(format!("icmp socket `{o}`: use auto, raw or datagram"))),
        }
    }
}

/// One probe: what, where, how often, how long to wait, and when to stop.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeSpec {
    pub kind: Kind,
    pub target: Target,
    /// A label for reports; default `KIND TARGET`.
    pub name: Option<String>,
    /// Time between two sends (default 200 ms).
    pub interval: Duration,
    /// How long one probe waits for its answer (default 1 s); no answer by then is a loss.
    pub timeout: Duration,
    /// Stop after this many probes (always at most [`MAX_PROBES`]).
    pub count: Option<u64>,
    /// Stop sending after this long (always at most [`MAX_DURATION`]).
    pub duration: Option<Duration>,
    /// icmp and udp: payload bytes per probe (default 56 for icmp, as ping; 64 for udp).
    pub size: Option<usize>,
    /// icmp: raw or datagram socket.
    pub icmp_socket: IcmpSocket,
    /// http (https://): accept any server certificate.
    pub insecure: bool,
    /// http (https://): trust the CA certificates of this PEM file.
    pub cacert: Option<String>,
}

impl ProbeSpec {
    /// A probe of `kind` at an address (`HOST`, `HOST:PORT` or a URL) with the default schedule.
    pub fn new(kind: Kind, target: impl Into<String>) -> ProbeSpec {
        ProbeSpec::with_target(kind, Target::Address(target.into()))
    }

    /// A command probe running `line` with `sh -c`.
    pub fn shell(line: impl Into<String>) -> ProbeSpec {
        ProbeSpec::with_target(Kind::Command, Target::Command(CommandLine::Shell(line.into())))
    }

    /// A command probe running a program with its arguments, without a shell.
    pub fn argv(argv: Vec<String>) -> ProbeSpec {
        ProbeSpec::with_target(Kind::Command, Target::Command(CommandLine::Argv(argv)))
    }

    fn with_target(kind: Kind, target: Target) -> ProbeSpec {
        ProbeSpec {
            kind,
            target,
            name: None,
            interval: DEFAULT_INTERVAL,
            timeout: DEFAULT_TIMEOUT,
            count: None,
            duration: None,
            size: None,
            icmp_socket: IcmpSocket::Auto,
            insecure: false,
            cacert: None,
        }
    }

    /// The label of this probe in lines and reports.
    pub fn label(&self) -> String {
        self.name.clone().unwrap_or_else(|| format!("{} {}", self.kind.name(), self.target))
    }

    /// The number of probes to send at most.
    pub fn max_count(&self) -> u64 {
        self.count.unwrap_or(MAX_PROBES).min(MAX_PROBES)
    }

    /// How long to send at most.
    pub fn max_duration(&self) -> Duration {
        self.duration.unwrap_or(MAX_DURATION).min(MAX_DURATION)
    }

    /// The checks every kind shares; each kind checks its target when it opens.
    pub fn check(&self) -> anyhow::Result<()> {
        if self.interval < Duration::from_micros(100) {
            return Err(usage("interval must be at least 100us"));
        }
        if self.timeout.is_zero() {
            return Err(usage("timeout must be longer than 0s"));
        }
        if self.count == Some(0) {
            return Err(usage("count must be at least 1"));
        }
        if let Some(d) = self.duration.filter(|d| *d < crate::util::duration::MIN_MEASURED) {
            return Err(usage(format!(
                "duration must be at least {} (nothing is measured in less), not {}",
                crate::util::duration::format(crate::util::duration::MIN_MEASURED),
                crate::util::duration::format(d)
            )));
        }
        let command = self.kind == Kind::Command;
        match &self.target {
            Target::Address(a) if a.trim().is_empty() => return Err(usage(format!("{} probe: empty target", self.kind.name()))),
            Target::Address(_) if command => {}
            Target::Command(_) if !command => {
                return Err(usage(format!(
                    "{} probe: the target is an address, not a command",
                    self.kind.name()
                )))
            }
            Target::Command(CommandLine::Argv(v)) if v.is_empty() => return Err(usage("command probe: empty command")),
            Target::Command(CommandLine::Shell(s)) if s.trim().is_empty() => return Err(usage("command probe: empty command")),
            _ => {}
        }
        if self.size.is_some() && !matches!(self.kind, Kind::Icmp | Kind::Udp) {
            return Err(usage("size applies to icmp and udp probes only"));
        }
        if self.icmp_socket != IcmpSocket::Auto && self.kind != Kind::Icmp {
            return Err(usage("the icmp socket option applies to icmp probes only"));
        }
        if (self.insecure || self.cacert.is_some()) && self.kind != Kind::Http {
            return Err(usage("insecure and cacert apply to http probes only"));
        }
        Ok(())
    }
}

/// The first address of `host:port` (IPv6 as `[::1]:80`), or one line naming the problem.
pub fn resolve_host_port(target: &str, kind: Kind) -> anyhow::Result<SocketAddr> {
    let (host, port) = crate::util::url::host_port(target)
        .map_err(|why| usage(format!("{} probe: `{}`: {why}", kind.name(), crate::util::text::clip(target))))?;
    crate::util::url::resolve(&host, port).map_err(|e| usage(format!("{} probe: {e}", kind.name())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_name_the_problem() {
        let mut s = ProbeSpec::new(Kind::Tcp, "127.0.0.1:1");
        assert!(s.check().is_ok());
        s.count = Some(0);
        assert!(s.check().unwrap_err().to_string().contains("count"));
        let mut s = ProbeSpec::new(Kind::Tcp, "127.0.0.1:1");
        s.size = Some(10);
        assert!(s.check().unwrap_err().to_string().contains("size"));
        assert!(Kind::parse("smtp").unwrap_err().to_string().contains("icmp, tcp"));
    }

    #[test]
    fn host_port_needs_a_port() {
        assert!(resolve_host_port("127.0.0.1:80", Kind::Tcp).is_ok());
        assert!(resolve_host_port("[::1]:80", Kind::Tcp).is_ok());
        assert!(resolve_host_port("127.0.0.1", Kind::Tcp)
            .unwrap_err()
            .to_string()
            .contains("needs a port"));
        assert!(resolve_host_port("::1", Kind::Udp)
            .unwrap_err()
            .to_string()
            .contains("needs a port"));
    }
}
