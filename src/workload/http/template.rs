//! The request as HTTP/2 sends it (method, URI, headers), built and checked once, and the one
//! `prepare` that checks a configuration completely: the HTTP/1.1 checks of `config`, then, for
//! HTTP/2, that the request can be written as HTTP/2 headers.

use super::config::{self, HttpConfig, Prepared, Protocol};
use crate::error::usage;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Uri};

/// Check a configuration and prepare everything a run needs.
pub fn prepare(c: &HttpConfig) -> anyhow::Result<Prepared> {
    let prepared = config::prepare(c)?;
    if prepared.protocol != Protocol::Http1 {
        Template::new(&prepared).map_err(usage)?;
    }
    Ok(prepared)
}

/// The request, built once: method, URI and headers, cloned for each stream.
#[derive(Clone)]
pub struct Template {
    method: Method,
    uri: Uri,
    headers: HeaderMap,
}

/// Headers HTTP/2 forbids (RFC 9113 §8.2.2); `host` becomes the `:authority` of the URI.
const CONNECTION_SPECIFIC: [&str; 6] = [
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

impl Template {
    pub fn new(cfg: &Prepared) -> Result<Template, String> {
        let method = Method::from_bytes(cfg.method.as_bytes()).map_err(|e| format!("method `{}`: {e}", cfg.method))?;
        let uri: Uri = format!("{}{}", cfg.origin, cfg.path)
            .parse()
            .map_err(|e| format!("URL `{}`: {e}", cfg.url))?;
        let mut headers = HeaderMap::new();
        headers.insert(http::header::USER_AGENT, HeaderValue::from_static("perflab"));
        headers.insert(http::header::ACCEPT, HeaderValue::from_static("*/*"));
        for (k, v) in &cfg.headers {
            if CONNECTION_SPECIFIC.contains(&k.as_str()) {
                continue;
            }
            let name = HeaderName::from_bytes(k.as_bytes()).map_err(|e| format!("header `{k}`: {e}"))?;
            let value = HeaderValue::from_str(v).map_err(|e| format!("header `{k}`: {e}"))?;
            headers.insert(name, value);
        }
        if !cfg.body.is_empty() {
            headers.insert(http::header::CONTENT_LENGTH, HeaderValue::from(cfg.body.len()));
        }
        Ok(Template { method, uri, headers })
    }

    pub(super) fn request(&self) -> Request<()> {
        let mut r = Request::new(());
        *r.method_mut() = self.method.clone();
        *r.uri_mut() = self.uri.clone();
        *r.headers_mut() = self.headers.clone();
        r
    }
}
