//! The `db` URLs of the PostgreSQL and MySQL backends, without a client library:
//! `scheme://[USER[:PASSWORD]@][HOST][:PORT][/DBNAME][?KEY=VALUE&...]` (user, password and
//! database percent-decoded, an IPv6 host in brackets) through the project's one URL parser
//! (`util::url`), and libpq's `key=value ...` form.
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
        Some(i) => parse_url(&url[..i], &url[i + 3..]),
        None if url.contains('=') => parse_key_values(url),
        None => Err("no scheme://".to_string()),
    }
}

/// A URL, through the project's one URL parser. A password may be written unencoded (`/`, `@` and
/// `:` in it): everything up to the last `@` before the query is the user information, encoded
/// here before the URL is parsed.
fn parse_url(scheme: &str, rest: &str) -> Result<DbUrl, String> {
    let before_query = rest.split('?').next().unwrap_or("");
    let rest = match before_query.rfind('@') {
        Some(at) => {
            let (user, password) = match rest[..at].split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (&rest[..at], None),
            };
            let enc = |s: &str| s.replace('/', "%2F").replace('@', "%40").replace(':', "%3A").replace('#', "%23");
            let info = match password {
                Some(p) => format!("{}:{}", enc(user), enc(p)),
                None => enc(user),
            };
            format!("{info}@{}", &rest[at + 1..])
        }
        None => rest.to_string(),
    };
    let u = crate::util::url::Url::parse(&format!("{scheme}://{rest}"))?;
    let mut out = DbUrl {
        user: u.user,
        password: u.password,
        host: u.host,
        port: u.port,
        ..DbUrl::default()
    };
    if let Some(db) = u.path.strip_prefix('/').filter(|p| !p.is_empty()) {
        out.database = Some(String::from_utf8_lossy(&crate::util::url::decode(db)?).into_owned());
    }
    for pair in u.query.as_deref().unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let v = String::from_utf8_lossy(&crate::util::url::decode(v)?).into_owned();
        out.set(k, v)?;
    }
    Ok(out)
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
        assert!(parse("postgres://h:notaport/x").expect_err("a bad port").contains("`notaport`"));
        let u = parse("postgres://[::1]:5433/x").expect("parses");
        assert_eq!((u.host.as_str(), u.port), ("::1", Some(5433)));
        assert!(parse("postgres://[::1/x").expect_err("no ]").contains("closing"));
        assert!(parse("postgres://h/x?a=1").expect("parses").only_params(&["b"]).is_err());
        assert!(parse("postgres://u:%zz@h/x").is_err());
    }
}
