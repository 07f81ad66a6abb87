//! The ready ports of a plan: one that something on loopback already listens on would make perflab
//! measure the wrong server, so it is refused before anything starts.

use super::source::Source;
use super::target::Ready;
use super::Point;
use std::ops::Range;

/// A ready port on loopback that something already listens on would make perflab measure the wrong
/// server: refuse before starting.
pub(super) fn check_ports(points: &[Point], src: &Source) -> anyhow::Result<()> {
    let mut seen = std::collections::HashSet::new();
    for p in points {
        // A remote target's port is on its host, not here.
        let addr = match p.target.as_ref().filter(|t| t.host.is_none()).map(|t| &t.ready) {
            Some(Ready::Tcp { addr, .. }) => addr.clone(),
            Some(Ready::Http { url, .. }) => match url_authority(url) {
                Some(a) => a,
                None => continue,
            },
            _ => continue,
        };
        if !seen.insert(addr.clone()) {
            continue;
        }
        let Some(sa) = socket_addr(&addr) else {
            continue;
        };
        if !sa.ip().is_loopback() && !sa.ip().is_unspecified() {
            continue;
        }
        if let Err(e) = std::net::TcpListener::bind(sa) {
            if e.kind() == std::io::ErrorKind::AddrInUse {
                let span: Range<usize> = src.key_span(&["target", "ready"]);
                return Err(src.error(
                    &span,
                    format!(
                        "port {} is already in use: another server would answer instead of the target",
                        sa.port()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// `http://127.0.0.1:8080/x` → `127.0.0.1:8080` (the scheme's port when none is given).
fn url_authority(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let auth = rest.split(['/', '?', '#']).next()?;
    let auth = auth.rsplit('@').next()?;
    let has_port = match auth.rfind(']') {
        Some(close) => auth[close..].contains(':'),
        None => auth.contains(':'),
    };
    if has_port {
        return Some(auth.to_string());
    }
    let port = match scheme {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    Some(format!("{auth}:{port}"))
}

/// A loopback socket address from `127.0.0.1:80`, `[::1]:80` or `localhost:80`.
fn socket_addr(addr: &str) -> Option<std::net::SocketAddr> {
    if let Ok(sa) = addr.parse::<std::net::SocketAddr>() {
        return Some(sa);
    }
    let port = addr.strip_prefix("localhost:")?.parse::<u16>().ok()?;
    Some(std::net::SocketAddr::from(([127, 0, 0, 1], port)))
}

#[cfg(test)]
mod tests {
    use super::url_authority;

    #[test]
    fn url_authorities_carry_a_port() {
        assert_eq!(url_authority("http://127.0.0.1:8080/x?y").as_deref(), Some("127.0.0.1:8080"));
        assert_eq!(url_authority("http://localhost/").as_deref(), Some("localhost:80"));
        assert_eq!(url_authority("http://[::1]:9/").as_deref(), Some("[::1]:9"));
        assert_eq!(url_authority("http://[::1]/").as_deref(), Some("[::1]:80"));
    }
}
