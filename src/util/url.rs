//! The one parser of the addresses perflab takes: URLs (`http://`, `https://`, and the database
//! URLs `postgres://`, `mysql://`) and `HOST:PORT` pairs. A URL is split as RFC 3986 splits it
//! (the authority ends at the first `/`, `?` or `#`; the userinfo is what comes before the
//! authority's last `@`), its host and path are checked by the `http` crate's `Uri` (the
//! characters a URL may carry), its port is a number from 1 to 65535, and its user and password
//! are percent-decoded. They are never part of the host: they never reach the resolver, and the
//! messages here never show the password.
//!
//! Errors are short reasons in the user's terms, without the value (the caller names it, through
//! [`shown`], which leaves the password out).

use std::net::{SocketAddr, ToSocketAddrs};

/// A parsed URL.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Url {
    /// Lower case.
    pub scheme: String,
    /// Percent-decoded; None without a userinfo or with an empty user.
    pub user: Option<String>,
    /// Percent-decoded; None without a `:` in the userinfo.
    pub password: Option<Vec<u8>>,
    /// Without the brackets of an IPv6 address; empty when the URL names none
    /// (`postgres:///db`, `mysql://u@/db?socket=...`).
    pub host: String,
    /// The port as written; None when none is given ([`Url::port_or`] gives the scheme's).
    pub port: Option<u16>,
    /// From the `/` that ends the authority, without the query; empty when there is none.
    pub path: String,
    /// After the `?`, without the fragment.
    pub query: Option<String>,
}

/// The URL as messages show it: the password replaced by `[redacted]`, control characters escaped,
/// long values cut.
pub fn shown(url: &str) -> String {
    crate::util::text::clip(&crate::util::redact::redact_url(url))
}

impl Url {
    /// Parse `s`: `scheme://[user[:password]@]host[:port][/path][?query][#fragment]`.
    pub fn parse(s: &str) -> Result<Url, String> {
        if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("a URL holds no spaces or control characters (write a space as %20)".into());
        }
        let (scheme, rest) = s.split_once("://").ok_or("no scheme:// (write it as http://HOST:PORT/PATH)")?;
        let scheme_ok =
            scheme.starts_with(|c: char| c.is_ascii_alphabetic()) && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
        if !scheme_ok {
            return Err(format!("`{}` is not a URL scheme", crate::util::text::clip(scheme)));
        }
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (host, port) = split_host_port(hostport)?;
        let tail = tail.split('#').next().unwrap_or("");
        let (path, query) = match tail.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (tail, None),
        };
        // What a URL may carry, as the http crate checks it (the userinfo left out: it is checked
        // by its decoding).
        let check = match (host.is_empty(), tail.is_empty()) {
            (true, true) => Ok(()),
            (true, false) => tail.parse::<http::uri::PathAndQuery>().map(|_| ()),
            (false, _) => format!("{}://{hostport}{tail}", scheme.to_ascii_lowercase())
                .parse::<http::Uri>()
                .map(|_| ()),
        };
        check.map_err(|e| format!("not a valid URL ({e})"))?;
        let mut url = Url {
            scheme: scheme.to_ascii_lowercase(),
            host,
            port,
            path: path.to_string(),
            query: query.map(str::to_string),
            ..Url::default()
        };
        if let Some(info) = userinfo {
            let (user, password) = match info.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (info, None),
            };
            if !user.is_empty() {
                url.user = Some(String::from_utf8_lossy(&decode(user)?).into_owned());
            }
            url.password = password.map(decode).transpose()?;
        }
        Ok(url)
    }

    /// The port, or `default` when the URL gives none.
    pub fn port_or(&self, default: u16) -> u16 {
        self.port.unwrap_or(default)
    }

    /// `host[:port]` as a `Host` header carries it: an IPv6 address in brackets, no userinfo.
    pub fn authority(&self) -> String {
        let host = bracketed(&self.host);
        match self.port {
            Some(p) => format!("{host}:{p}"),
            None => host,
        }
    }

    /// The request target: the path (`/` when empty) and the query.
    pub fn target(&self) -> String {
        let path = if self.path.is_empty() { "/" } else { self.path.as_str() };
        match &self.query {
            Some(q) => format!("{path}?{q}"),
            None => path.to_string(),
        }
    }

    /// The userinfo as an `Authorization` header's value (`Basic base64(user:password)`, as curl
    /// sends it), when the URL has one.
    pub fn basic_auth(&self) -> Option<String> {
        use base64::Engine;
        if self.user.is_none() && self.password.is_none() {
            return None;
        }
        let mut cred = self.user.clone().unwrap_or_default().into_bytes();
        cred.push(b':');
        cred.extend_from_slice(self.password.as_deref().unwrap_or_default());
        Some(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(cred)))
    }
}

/// An IPv6 address in brackets, anything else as it is.
pub fn bracketed(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

/// `host:port`, `[v6]:port`, `host` or `[v6]` → (host without brackets, port if given). The port
/// is a number from 1 to 65535.
pub fn split_host_port(s: &str) -> Result<(String, Option<u16>), String> {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let end = rest.find(']').ok_or("an IPv6 address without its closing `]`")?;
        let after = &rest[end + 1..];
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return Err(format!("`{}` after the IPv6 address", crate::util::text::clip(after))),
        };
        let h = &rest[..end];
        if h.split('%').next().unwrap_or("").parse::<std::net::Ipv6Addr>().is_err() {
            return Err(format!("`[{}]` is not an IPv6 address", crate::util::text::clip(h)));
        }
        (h.to_string(), port)
    } else {
        if s.contains(['[', ']']) {
            return Err("a `[` or `]` outside an IPv6 address".into());
        }
        match s.split_once(':') {
            Some((_, p)) if p.contains(':') => return Err("an IPv6 address goes in brackets, with the port after them: [::1]:8080".into()),
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (s.to_string(), None),
        }
    };
    let port = match port {
        None | Some("") => None,
        Some(p) => Some(port_number(p)?),
    };
    Ok((host, port))
}

/// A port: a number from 1 to 65535.
fn port_number(p: &str) -> Result<u16, String> {
    match p.parse::<u16>() {
        Ok(n) if n > 0 && p.chars().all(|c| c.is_ascii_digit()) => Ok(n),
        _ => Err(format!("the port `{}` is not a number from 1 to 65535", crate::util::text::clip(p))),
    }
}

/// `HOST:PORT` (the port required) → (host without brackets, port).
pub fn host_port(s: &str) -> Result<(String, u16), String> {
    if s.trim().parse::<std::net::Ipv6Addr>().is_ok() {
        return Err("needs a port (an IPv6 address in brackets, then the port: [::1]:8080)".into());
    }
    let (host, port) = split_host_port(s.trim())?;
    if host.is_empty() {
        return Err("no host (write HOST:PORT, e.g. 127.0.0.1:8080)".into());
    }
    if host.chars().any(|c| c.is_whitespace() || c.is_control() || "/?#@".contains(c)) {
        return Err(format!("`{}` is not a host name or address", crate::util::text::clip(&host)));
    }
    let port = port.ok_or("needs a port (HOST:PORT, e.g. 127.0.0.1:8080)")?;
    Ok((host, port))
}

/// The first address `host` (a name, an IPv4 or a bare IPv6 address) resolves to, with `port`.
pub fn resolve(host: &str, port: u16) -> Result<SocketAddr, String> {
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {}: {e}", crate::util::text::clip(host)))?
        .next()
        .ok_or_else(|| format!("{} resolves to no address", crate::util::text::clip(host)))
}

/// Percent-decoding (`%40` → `@`).
pub fn decode(s: &str) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
            out.push(hex.ok_or("a `%` not followed by two hex digits")?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_their_parts() {
        let u = Url::parse("http://u:p%40ss@127.0.0.1:8080/x/y?a=1#frag").expect("parses");
        assert_eq!(u.scheme, "http");
        assert_eq!(u.user.as_deref(), Some("u"));
        assert_eq!(u.password.as_deref(), Some(&b"p@ss"[..]));
        assert_eq!((u.host.as_str(), u.port), ("127.0.0.1", Some(8080)));
        assert_eq!((u.authority().as_str(), u.target().as_str()), ("127.0.0.1:8080", "/x/y?a=1"));
        let u = Url::parse("HTTP://[::1]").expect("parses");
        assert_eq!((u.scheme.as_str(), u.host.as_str(), u.port), ("http", "::1", None));
        assert_eq!((u.authority().as_str(), u.target().as_str(), u.port_or(80)), ("[::1]", "/", 80));
        let u = Url::parse("https://example.com/users/@me").expect("an @ in the path is the path's");
        assert_eq!(
            (u.host.as_str(), u.path.as_str(), u.user.clone()),
            ("example.com", "/users/@me", None)
        );
        let u = Url::parse("mysql://sb@/db?socket=/tmp/my.sock").expect("no host");
        assert_eq!((u.host.as_str(), u.user.as_deref(), u.path.as_str()), ("", Some("sb"), "/db"));
        assert_eq!(Url::parse("postgres:///db").expect("parses").path, "/db");
    }

    #[test]
    fn bad_urls_say_what_is_wrong_without_the_password() {
        let why = |s: &str| Url::parse(s).expect_err(s);
        assert!(why("http://[::1").contains("closing `]`"));
        assert!(why("http://127.0.0.1:99999/").contains("from 1 to 65535"));
        assert!(why("http://127.0.0.1:0/").contains("from 1 to 65535"));
        assert!(why("http://h:abc/").contains("`abc`"));
        assert!(why("http://h/a b").contains("space"));
        assert!(why("127.0.0.1:8080").contains("scheme"));
        assert!(why("http://::1:80/").contains("brackets"));
        assert!(why("http://[zz]/").contains("not an IPv6"));
        assert!(why("http://\u{fc}/").contains("not a valid URL"));
        assert!(!why("http://u:s3cret@h:0/").contains("s3cret"));
        assert_eq!(shown("http://u:s3cret@h/"), "http://u:[redacted]@h/");
    }

    #[test]
    fn userinfo_becomes_basic_authorization() {
        // curl -u Aladdin:'open sesame' sends this (RFC 7617's example).
        let u = Url::parse("http://Aladdin:open%20sesame@h/").expect("parses");
        assert_eq!(u.basic_auth().as_deref(), Some("Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="));
        assert_eq!(Url::parse("http://h/").expect("parses").basic_auth(), None);
        assert_eq!(
            Url::parse("http://u@h/").expect("parses").basic_auth().as_deref(),
            Some("Basic dTo=")
        );
    }

    #[test]
    fn host_port_pairs() {
        assert_eq!(host_port("127.0.0.1:8080"), Ok(("127.0.0.1".into(), 8080)));
        assert_eq!(host_port("[::1]:9000"), Ok(("::1".into(), 9000)));
        assert_eq!(host_port("localhost:1"), Ok(("localhost".into(), 1)));
        assert!(host_port("127.0.0.1").expect_err("no port").contains("needs a port"));
        assert!(host_port("::1").expect_err("no port").contains("needs a port"));
        assert!(host_port(":80").expect_err("no host").contains("no host"));
        assert!(host_port("::1:80").expect_err("v6").contains("brackets"));
        assert!(host_port("h:0").is_err());
        assert!(host_port("a/b:80").expect_err("a path").contains("not a host"));
        assert_eq!(resolve("::1", 5).expect("literal"), "[::1]:5".parse().expect("addr"));
    }
}
