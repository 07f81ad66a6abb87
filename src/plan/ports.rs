//! The ready ports of a plan: one that something on loopback already listens on would make perflab
//! measure the wrong server, so it is refused before anything starts.

use super::source::Source;
use super::target::Ready;
use super::Point;
use std::ops::Range;

/// A ready port on loopback that something already listens on would make perflab measure the wrong
/// server: refuse before starting. Only listening sockets count: a client's connection whose local
/// (ephemeral) port happens to be the same number takes no connection meant for the target.
pub(super) fn check_ports(points: &[Point], src: &Source) -> anyhow::Result<()> {
    let mut seen = std::collections::HashSet::new();
    let mut listeners: Option<Vec<std::net::SocketAddr>> = None;
    for p in points {
        // A remote target's port is on its host, not here.
        let hp = match p.target.as_ref().filter(|t| t.host.is_none()).map(|t| &t.ready) {
            Some(Ready::Tcp { addr, .. }) => crate::util::url::host_port(addr).ok(),
            Some(Ready::Http { url, .. }) => crate::util::url::Url::parse(url).ok().map(|u| {
                let port = u.port_or(if u.scheme == "https" { 443 } else { 80 });
                (u.host, port)
            }),
            _ => None,
        };
        let Some((host, port)) = hp else {
            continue;
        };
        if !seen.insert((host.clone(), port)) {
            continue;
        }
        let wanted = loopback_addrs(&host, port);
        if wanted.is_empty() {
            continue;
        }
        let listening = listeners.get_or_insert_with(|| crate::util::listeners::all().into_iter().map(|l| l.addr).collect());
        let taken = wanted
            .iter()
            .any(|w| listening.iter().any(|l| crate::util::listeners::answers_for(l, w)));
        if taken {
            let span: Range<usize> = src.key_span(&["target", "ready"]);
            return Err(src.error(
                &span,
                format!("port {port} is already in use: another server would answer instead of the target"),
            ));
        }
    }
    Ok(())
}

/// The loopback (or wildcard) addresses `host` names with `port`: an address as written, or
/// `localhost` (127.0.0.1 and ::1); none for another host.
fn loopback_addrs(host: &str, port: u16) -> Vec<std::net::SocketAddr> {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
    let ips: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) if host.eq_ignore_ascii_case("localhost") => vec![Ipv4Addr::LOCALHOST.into(), Ipv6Addr::LOCALHOST.into()],
        Err(_) => vec![],
    };
    ips.into_iter()
        .filter(|ip| ip.is_loopback() || ip.is_unspecified())
        .map(|ip| SocketAddr::new(ip, port))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::loopback_addrs;

    #[test]
    fn ready_hosts_on_this_machine() {
        assert_eq!(loopback_addrs("127.0.0.1", 8080), vec!["127.0.0.1:8080".parse().expect("addr")]);
        assert_eq!(loopback_addrs("localhost", 80).len(), 2);
        assert_eq!(loopback_addrs("::1", 9), vec!["[::1]:9".parse().expect("addr")]);
        assert!(loopback_addrs("10.0.0.1", 80).is_empty());
        assert!(loopback_addrs("example.com", 80).is_empty());
    }
}
