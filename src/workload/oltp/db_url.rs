//! The `db` URLs of the PostgreSQL and MySQL backends, parsed without a client library:
//! `scheme://[USER[:PASSWORD]@][HOST][:PORT][/DBNAME][?KEY=VALUE&...]` (user, password and
//! database percent-decoded, an IPv6 host in brackets), and libpq's `key=value ...` form.
//! Which keys a backend accepts is its own business ([`DbUrl::params`]).

/// A parsed database URL.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DbUrl {
    pub user: Option<String>,
    pub password: Option<Vec<u8>>,
    /// Empty when the URL names none.
    pub host: String,
    pub port: Option<u16>,
    pub database: Option<String>,
    /// The query string's (or the key=value form's) other keys, in order.
    pub params: Vec<(String, String)>,
}

/// Parse `url` (its scheme is not checked). The error is a short reason, without the password.
pub fn parse(url: &str) -> Result<DbUrl, String> {
    match url.find("://") {
        Some(i) => parse_url(&url[i + 3..]),
        None if url.contains('=') => parse_key_values(url),
        None => Err("no scheme://".to_string()),
    }
}

fn parse_url(rest: &str) -> Result<DbUrl, String> {
    let (before_query, query) = match rest.find('?') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    // A '/' in the user info (an unencoded password) is not the path: look after the last '@'.
    let at = before_query.rfind('@').map_or(0, |a| a + 1);
    let (authority, path) = match before_query[at..].find('/') {
        Some(j) => (&before_query[..at + j], Some(&before_query[at + j + 1..])),
        None => (before_query, None),
    };
    let mut out = DbUrl::default();
    let host_port = match authority.rfind('@') {
        Some(at) => {
            let info = &authority[..at];
            let (user, password) = match info.find(':') {
                Some(c) => (&info[..c], Some(&info[c + 1..])),
                None => (info, None),
            };
            if !user.is_empty() {
                out.user = Some(String::from_utf8_lossy(&decode(user)?).into_owned());
            }
            out.password = password.map(decode).transpose()?;
            &authority[at + 1..]
        }
        None => authority,
    };
    let (host, port) = split_host_port(host_port)?;
    out.host = host;
    out.port = port;
    if let Some(db) = path.filter(|p| !p.is_empty()) {
        out.database = Some(String::from_utf8_lossy(&decode(db)?).into_owned());
    }
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let v = String::from_utf8_lossy(&decode(v)?).into_owned();
        out.set(k, v)?;
    }
    Ok(out)
}

fn split_host_port(s: &str) -> Result<(String, Option<u16>), String> {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let end = rest.find(']').ok_or("an IPv6 host without its closing ']'")?;
        let after = &rest[end + 1..];
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return Err(format!("unexpected '{after}' after the host")),
        };
        (rest[..end].to_string(), port)
    } else {
        match s.rfind(':') {
            Some(c) => (s[..c].to_string(), Some(&s[c + 1..])),
            None => (s.to_string(), None),
        }
    };
    let port = match port {
        None | Some("") => None,
        Some(p) => Some(p.parse::<u16>().map_err(|_| format!("bad port '{p}'"))?),
    };
    Ok((host, port))
}

/// libpq's `host=127.0.0.1 port=5432 user=bob dbname=sb` (values may be 'quoted').
fn parse_key_values(s: &str) -> Result<DbUrl, String> {
    let mut out = DbUrl::default();
    let mut chars = s.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let key: String = std::iter::from_fn(|| chars.next_if(|c| *c != '=' && !c.is_whitespace())).collect();
        if key.is_empty() {
            break;
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(format!("'{key}' without '=value'"));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    None => return Err(format!("the value of '{key}' has no closing quote")),
                    Some('\\') => value.extend(chars.next()),
                    Some('\'') => break,
                    Some(c) => value.push(c),
                }
            }
        } else {
            value.extend(std::iter::from_fn(|| chars.next_if(|c| !c.is_whitespace())));
        }
        out.set(&key, value)?;
    }
    Ok(out)
}

impl DbUrl {
    fn set(&mut self, key: &str, value: String) -> Result<(), String> {
        match key {
            "user" => self.user = Some(value),
            "password" => self.password = Some(value.into_bytes()),
            "host" => self.host = value,
            "port" => self.port = Some(value.parse().map_err(|_| format!("bad port '{value}'"))?),
            "dbname" => self.database = Some(value),
            _ => self.params.push((key.to_string(), value)),
        }
        Ok(())
    }

    /// Check that every other key is one of `known`.
    pub fn only_params(&self, known: &[&str]) -> Result<(), String> {
        match self.params.iter().find(|(k, _)| !known.contains(&k.as_str())) {
            Some((k, _)) if known.is_empty() => Err(format!("unknown parameter '{k}' (none is accepted)")),
            Some((k, _)) => Err(format!("unknown parameter '{k}' (accepted: {})", known.join(", "))),
            None => Ok(()),
        }
    }

    /// The last value of a parameter.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// Percent-decoding (`%40` → `@`).
fn decode(s: &str) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
            out.push(hex.ok_or("a '%' not followed by two hex digits")?);
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
    fn urls_and_key_values_parse() {
        let u = parse("postgres://bob:s3cr%40t@127.0.0.1:5433/sb?connect_timeout=5").expect("parses");
        assert_eq!(u.user.as_deref(), Some("bob"));
        assert_eq!(u.password.as_deref(), Some(&b"s3cr@t"[..]));
        assert_eq!(
            (u.host.as_str(), u.port, u.database.as_deref()),
            ("127.0.0.1", Some(5433), Some("sb"))
        );
        assert_eq!(u.param("connect_timeout"), Some("5"));
        let u = parse("mysql://root:p@ss/w@[::1]/db").expect("parses");
        assert_eq!(u.password.as_deref(), Some(&b"p@ss/w"[..]));
        assert_eq!((u.host.as_str(), u.port, u.database.as_deref()), ("::1", None, Some("db")));
        let u = parse("mysql://sb@/db?socket=/tmp/my.sock").expect("parses");
        assert_eq!((u.host.as_str(), u.param("socket")), ("", Some("/tmp/my.sock")));
        let u = parse("host=h port=6000 user=bob password='a b\\'c' dbname=sb").expect("parses");
        assert_eq!((u.host.as_str(), u.port, u.user.as_deref()), ("h", Some(6000), Some("bob")));
        assert_eq!(u.password.as_deref(), Some(&b"a b'c"[..]));
        assert_eq!(parse("postgres://h:notaport/x").err().as_deref(), Some("bad port 'notaport'"));
        assert!(parse("postgres://h/x?a=1").expect("parses").only_params(&["b"]).is_err());
        assert!(parse("postgres://u:%zz@h/x").is_err());
    }
}
