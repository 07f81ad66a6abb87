//! Keeping credentials out of everything perflab writes: `headers` replaces the values of
//! `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` wherever they appear as text,
//! and a [`Redactor`] also replaces the exact secrets a plan holds (found on the parsed plan by
//! `plan::Secrets`) in any text: errors, outputs, notes, terminal lines.

use std::sync::OnceLock;

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Free text is searched only for secrets at least this long: shorter ones (a matrix value `1`
/// that feeds a cookie) would match everywhere. Such values are still redacted wherever the plan
/// puts them (plan copy, labels, parameters).
pub const MIN_SCRUBBED_LEN: usize = 4;

/// Replace the values of credential headers in text: `Name: value` lines, a shell word
/// (`-H 'Cookie: a=1'`), or a JSON / TOML rendering (`"Authorization": "…"`, `Authorization = "…"`).
/// A value already `[redacted]` is left alone, so applying it twice changes nothing.
pub fn headers(text: &str) -> String {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r#"(?i)((?:proxy-)?authorization|cookie|set-cookie)(["']?\s*[:=]\s*["']?)([^"'\r\n,\]]*)"#).expect("static regex")
    });
    re.replace_all(text, |c: &regex::Captures<'_>| {
        let value = c.get(3).map_or(0..0, |m| m.range());
        if &text[value.clone()] == "[redacted" && text[value.end..].starts_with(']') {
            c[0].to_string()
        } else {
            format!("{}{}{REDACTED}", &c[1], &c[2])
        }
    })
    .into_owned()
}

/// The secrets of one plan, replaced by `[redacted]` in any text (longest first), then `headers`.
/// Its `Debug` output shows how many secrets it knows, not them.
#[derive(Clone, Default, PartialEq)]
pub struct Redactor {
    texts: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor").field("secrets", &self.texts.len()).finish()
    }
}

impl Redactor {
    /// A redactor for these secrets (and their JSON- and TOML-escaped forms); the ones shorter than
    /// [`MIN_SCRUBBED_LEN`] are left out.
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Redactor {
        let mut texts: Vec<String> = Vec::new();
        for s in secrets {
            let json = serde_json::to_string(&s).unwrap_or_default();
            let toml = toml::Value::String(s.clone()).to_string();
            for form in [s, trim_quotes(&json), trim_quotes(&toml)] {
                if form.chars().count() >= MIN_SCRUBBED_LEN && !texts.contains(&form) {
                    texts.push(form);
                }
            }
        }
        texts.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        Redactor { texts }
    }

    /// Whether it knows no secret of its own (it still applies `headers`).
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    /// `text` with every secret replaced by `[redacted]`.
    pub fn apply(&self, text: &str) -> String {
        let mut out = text.to_string();
        for t in &self.texts {
            if out.contains(t.as_str()) {
                out = out.replace(t.as_str(), REDACTED);
            }
        }
        headers(&out)
    }

    /// The same error with its message redacted (still a bad-input or damaged-store error if it was
    /// one, so its exit code stays). An error
    /// whose message holds no secret is returned as it is.
    pub fn error(&self, err: anyhow::Error) -> anyhow::Error {
        let text = format!("{err:#}");
        let clean = self.apply(&text);
        if clean == text {
            return err;
        }
        match crate::error::exit_code(&err) {
            2 => crate::error::usage(clean),
            crate::error::EXIT_DAMAGED => crate::error::damaged(clean),
            _ => anyhow::anyhow!(clean),
        }
    }
}

/// A connection URL without its password: `postgres://user:secret@host/db` becomes
/// `postgres://user:[redacted]@host/db`, and a `password=`/`pass=` parameter likewise, in a URL's
/// query (up to the next `&`) or in libpq's `key=value` form (up to the next space, or the closing
/// quote of a quoted value: `host=h password='a b' dbname=x`). This is the one URL redaction:
/// the plan's secrets, the oltp workload's descriptions and its errors all use it.
pub fn redact_url(url: &str) -> String {
    match password_span(url) {
        Some((a, b)) => {
            let mut out = url.to_string();
            out.replace_range(a..b, REDACTED);
            // A second place (a URL with both) is redacted too.
            match password_span(&out) {
                Some((c, d)) if &out[c..d] != REDACTED => {
                    out.replace_range(c..d, REDACTED);
                    out
                }
                _ => out,
            }
        }
        None => url.to_string(),
    }
}

/// The password of a connection URL (see [`redact_url`]), if it has a non-empty one: a secret to
/// keep out of every output.
pub fn url_password(url: &str) -> Option<String> {
    let (a, b) = password_span(url)?;
    let p = &url[a..b];
    let p = p.strip_prefix('\'').and_then(|q| q.strip_suffix('\'')).unwrap_or(p);
    (!p.is_empty() && p != REDACTED).then(|| p.to_string())
}

/// Where the first password of `url` is: the userinfo's after `user:`, else a `password=` or
/// `pass=` parameter's value.
fn password_span(url: &str) -> Option<(usize, usize)> {
    if let Some(scheme_end) = url.find("://") {
        let start = scheme_end + 3;
        let rest = &url[start..];
        // A database URL's password may hold an unencoded `/` or `@` (`oltp::db_url` reads it up
        // to the last `@` before the query); an http URL's userinfo ends at its authority's end.
        let lenient = !matches!(url[..scheme_end].to_ascii_lowercase().as_str(), "http" | "https");
        let auth_end = if lenient {
            rest.find('?').unwrap_or(rest.len())
        } else {
            rest.find(['/', '?', '#']).unwrap_or(rest.len())
        };
        if let Some(at) = rest[..auth_end].rfind('@') {
            if let Some(colon) = rest[..at].find(':') {
                if &rest[colon + 1..at] != REDACTED {
                    return Some((start + colon + 1, start + at));
                }
            }
        }
    }
    let lower = url.to_ascii_lowercase();
    for key in ["password=", "pass="] {
        let mut from = 0;
        while let Some(i) = lower[from..].find(key).map(|i| from + i) {
            from = i + key.len();
            // A whole key only (`password=`, not `nopassword=`).
            let whole = i == 0 || matches!(url.as_bytes()[i - 1], b'?' | b'&' | b' ' | b'\t' | b';');
            if !whole {
                continue;
            }
            let start = i + key.len();
            let value = &url[start..];
            let len = if let Some(quoted) = value.strip_prefix('\'') {
                quoted.find('\'').map_or(value.len(), |q| q + 2)
            } else {
                value.find(['&', ' ', '\t']).unwrap_or(value.len())
            };
            if &url[start..start + len] != REDACTED {
                return Some((start, start + len));
            }
        }
    }
    None
}

fn trim_quotes(s: &str) -> String {
    let s = s.strip_prefix(['"', '\'']).unwrap_or(s);
    s.strip_suffix(['"', '\'']).unwrap_or(s).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_are_redacted_once() {
        assert_eq!(headers("Authorization: Bearer abc"), "Authorization: [redacted]");
        assert_eq!(
            headers(r#"headers = ["Cookie: a=1", "X-Y: z"]"#),
            r#"headers = ["Cookie: [redacted]", "X-Y: z"]"#
        );
        assert_eq!(headers("Accept: */*"), "Accept: */*");
        assert_eq!(
            headers(r#"{"Authorization": "Bearer abc", "x": 1}"#),
            r#"{"Authorization": "[redacted]", "x": 1}"#
        );
        assert_eq!(
            headers("curl -H 'Cookie: sid=abc' http://127.0.0.1/"),
            "curl -H 'Cookie: [redacted]' http://127.0.0.1/"
        );
        assert_eq!(
            headers(r#"headers = { authorization = "Basic dXNlcjpw" }"#),
            r#"headers = { authorization = "[redacted]" }"#
        );
        for once in [
            "Authorization: [redacted]",
            r#"{"Cookie":"[redacted]"}"#,
            r#"Cookie = "[redacted]""#,
        ] {
            assert_eq!(headers(once), once);
        }
    }

    #[test]
    fn a_redactor_replaces_its_secrets_longest_first_and_skips_short_ones() {
        let r = Redactor::new(["Bearer s3cret-token".to_string(), "s3cret-token".into(), "1".into()]);
        assert_eq!(
            r.apply("got Bearer s3cret-token then s3cret-token, exit 1"),
            "got [redacted] then [redacted], exit 1"
        );
        let q = Redactor::new([r#"a"quoted"b"#.to_string()]);
        assert_eq!(q.apply(r#"{"v":"a\"quoted\"b"}"#), r#"{"v":"[redacted]"}"#);
        let e = q.error(crate::error::usage(r#"bad a"quoted"b"#));
        assert_eq!(crate::error::exit_code(&e), 2);
        assert_eq!(e.to_string(), "bad [redacted]");
    }
    #[test]
    fn redact_url_drops_the_password_only() {
        assert_eq!(
            redact_url("postgres://bob:s3cr:et@127.0.0.1:5432/sb"),
            "postgres://bob:[redacted]@127.0.0.1:5432/sb"
        );
        assert_eq!(redact_url("mysql://root@localhost/sb"), "mysql://root@localhost/sb");
        assert_eq!(
            redact_url("mysql://h:3306/sb?password=x&pool_min=1"),
            "mysql://h:3306/sb?password=[redacted]&pool_min=1"
        );
        assert_eq!(redact_url("postgres://a:b@h"), "postgres://a:[redacted]@h");
        assert_eq!(redact_url("sqlite:/tmp/a.db"), "sqlite:/tmp/a.db");
        // An unencoded `/` and `@` in a database URL's password, as its parser reads it.
        assert_eq!(redact_url("mysql://root:p@ss/w@[::1]:9/db"), "mysql://root:[redacted]@[::1]:9/db");
        assert_eq!(url_password("mysql://root:p@ss/w@[::1]/db").as_deref(), Some("p@ss/w"));
        // An http URL's userinfo ends with its authority: an `@` in the path is the path's.
        assert_eq!(redact_url("http://u:pw@h:80/a@b"), "http://u:[redacted]@h:80/a@b");
        assert_eq!(redact_url("http://h:80/users/@me"), "http://h:80/users/@me");
    }

    #[test]
    fn libpq_key_value_passwords_are_found_whole() {
        let url = "host=127.0.0.1 user=sb password=hunter22 dbname=sb";
        assert_eq!(redact_url(url), "host=127.0.0.1 user=sb password=[redacted] dbname=sb");
        assert_eq!(
            url_password(url).as_deref(),
            Some("hunter22"),
            "the secret is the value, not the rest"
        );
        let quoted = "host=h password='a b' dbname=x";
        assert_eq!(redact_url(quoted), "host=h password=[redacted] dbname=x");
        assert_eq!(url_password(quoted).as_deref(), Some("a b"));
        assert_eq!(redact_url("host=h nopassword=1"), "host=h nopassword=1");
        assert_eq!(url_password("host=h user=u"), None);
        assert_eq!(url_password("postgres://bob:s3cr@t@h/db").as_deref(), Some("s3cr@t"));
        assert_eq!(url_password("postgres://bob:@h/db"), None);
        let both = "postgres://a:one@h/db?password=two";
        assert_eq!(redact_url(both), "postgres://a:[redacted]@h/db?password=[redacted]");
        assert_eq!(redact_url(&redact_url(both)), redact_url(both), "applying it twice changes nothing");
    }
}
