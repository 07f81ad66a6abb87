//! `perflab http` options, shared by the command line and plans (`[workload] type = "http"`), and
//! their validation into what the engine needs: the address, the request bytes, the schedule.

use crate::error::usage;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

crate::workload::registry::spec::settings! {
    /// The http workload's settings: a plan's `[workload]` keys (`type = "http"`) and the options
    /// of `perflab http` (`--max-inflight` for `max_inflight`; `-H "Name: value"` for `headers`,
    /// `--no-keepalive` for `keepalive = false`).
    #[derive(Clone, Debug, serde::Serialize)]
    #[serde(deny_unknown_fields)]
    pub struct HttpConfig {
        /// the URL to load: `http://` or `https://`
        #[key("string", "required")]
        #[arg(value_name = "URL")]
        pub url: String,
        /// concurrent connections (the closed model's concurrency)
        #[key("integer ≥ 1", "`10`")]
        #[serde(default = "default_connections")]
        #[arg(short = 'c', long, default_value_t = default_connections())]
        pub connections: u64,
        /// stop after this many responses (the load phase still bounds the run)
        #[key("integer ≥ 1", "none")]
        #[serde(default)]
        #[arg(short = 'n', long)]
        pub requests: Option<u64>,
        /// with `requests`: stop after this long at most (never longer than the load phase)
        #[key("duration string", "the load phase")]
        #[serde(default)]
        #[arg(short = 'd', long)]
        pub duration: Option<String>,
        /// open model: requests per second, latency measured from each request's intended send time
        #[key("number > 0", "none (closed model)")]
        #[serde(default)]
        #[arg(short = 'r', long)]
        pub rate: Option<f64>,
        /// open model: how sends are spaced (needs `rate`)
        #[key("`\"constant\"` or `\"poisson\"`", "`\"constant\"`")]
        #[serde(default)]
        #[arg(long)]
        pub arrival: Option<String>,
        /// the seed of Poisson arrivals
        #[key("integer ≥ 0", "`1`")]
        #[serde(default)]
        #[arg(long)]
        pub seed: Option<u64>,
        /// open model: most requests outstanding at once
        #[key("integer ≥ 1", "connections × streams")]
        #[serde(default)]
        #[arg(long)]
        pub max_inflight: Option<u64>,
        /// the upper-case HTTP method
        #[key("string", "`GET` (`POST` with a body)")]
        #[serde(default)]
        #[arg(short = 'm', long)]
        pub method: Option<String>,
        /// extra request headers (Authorization and Cookie values are never stored)
        #[key("table of strings", "none")]
        #[serde(default, deserialize_with = "header_table", serialize_with = "header_map")]
        #[arg(short = 'H', long = "header", value_name = "NAME: VALUE", value_parser = header_arg)]
        pub headers: Vec<(String, String)>,
        /// the request body
        #[key("string", "none")]
        #[serde(default)]
        #[arg(short = 'b', long)]
        pub body: Option<String>,
        /// read the request body from this file
        #[key("string (a path)", "none")]
        #[serde(default)]
        #[arg(long, value_name = "FILE")]
        pub body_file: Option<String>,
        /// reuse connections (keep-alive); `false` (`--no-keepalive`) sends `Connection: close`: a new connection for each request, as ab without -k (HTTP/1.1 only)
        #[key("bool", "`true`")]
        #[serde(default = "yes")]
        #[arg(long = "no-keepalive", action = clap::ArgAction::SetFalse)]
        pub keepalive: bool,
        /// HTTP/2: h2 over TLS (ALPN) for `https://`, h2c for `http://`
        #[key("bool", "`false`")]
        #[serde(default)]
        #[arg(long)]
        pub http2: bool,
        /// HTTP/2: concurrent streams per connection
        #[key("integer ≥ 1", "`1`")]
        #[serde(default)]
        #[arg(long)]
        pub streams: Option<u64>,
        /// `https://`: accept any certificate
        #[key("bool", "`false`")]
        #[serde(default)]
        #[arg(long)]
        pub insecure: bool,
        /// `https://`: trust this PEM CA certificate
        #[key("string (a path)", "the system's roots")]
        #[serde(default)]
        #[arg(long, value_name = "FILE")]
        pub cacert: Option<String>,
        /// per request (connect and response)
        #[key("duration string", "`\"30s\"`")]
        #[serde(default)]
        #[arg(long)]
        pub timeout: Option<String>,
        /// worker threads, at most one per connection
        #[key("integer ≥ 1", "one per CPU (half of them against loopback with keep-alive)")]
        #[serde(default)]
        #[arg(short = 't', long)]
        pub threads: Option<u64>,
        /// wait for responses by polling (plain HTTP/1.1): no thread wake-up in the latencies, one busy core per thread
        #[key("bool", "`false`")]
        #[serde(default)]
        #[arg(long)]
        pub busy_poll: bool,
    }
}

fn default_connections() -> u64 {
    10
}
fn yes() -> bool {
    true
}

/// A plan's `headers` table, in its keys' order (later duplicates of `-H` win when it is made a map).
fn header_table<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
    Ok(BTreeMap::<String, String>::deserialize(d)?.into_iter().collect())
}

/// `headers` as a plan's table (later duplicates of `-H` win).
fn header_map<S: serde::Serializer>(h: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(h.iter().map(|(k, v)| (k, v)).collect::<BTreeMap<_, _>>())
}

/// `-H "Name: value"`.
fn header_arg(h: &str) -> Result<(String, String), String> {
    let (k, v) = h
        .split_once(':')
        .ok_or_else(|| format!("header `{h}`: write it as \"Name: value\""))?;
    Ok((k.trim().to_string(), v.trim().to_string()))
}

impl HttpConfig {
    pub fn new(url: &str) -> HttpConfig {
        HttpConfig {
            url: url.to_string(),
            connections: default_connections(),
            requests: None,
            duration: None,
            rate: None,
            arrival: None,
            seed: None,
            max_inflight: None,
            method: None,
            headers: Vec::new(),
            body: None,
            body_file: None,
            keepalive: true,
            http2: false,
            streams: None,
            insecure: false,
            cacert: None,
            timeout: None,
            threads: None,
            busy_poll: false,
        }
    }
}

pub use crate::workload::driver::schedule::Arrival;

/// The wire protocol: HTTP/1.1 (plain on the mio fast path, or over TLS), h2 over TLS (ALPN) or h2c.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Http1,
    H2,
    H2c,
}

impl Protocol {
    /// The name in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Http1 => "http/1.1",
            Protocol::H2 => "h2",
            Protocol::H2c => "h2c",
        }
    }
}

/// A validated configuration.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub addr: SocketAddr,
    pub url: String,
    pub request: Vec<u8>,
    pub connections: usize,
    pub threads: usize,
    pub requests: Option<u64>,
    pub duration: Option<Duration>,
    pub rate: Option<f64>,
    pub arrival: Arrival,
    pub seed: u64,
    pub max_inflight: usize,
    pub keepalive: bool,
    pub timeout: Duration,
    /// For reports: the method and the path.
    pub method: String,
    pub protocol: Protocol,
    /// HTTPS: the client configuration and the name the certificate must carry.
    pub tls: Option<super::tls::Client>,
    /// HTTP/2: concurrent streams per connection (1 for HTTP/1.1).
    pub streams: usize,
    /// For HTTP/2, which builds its requests from parts: `scheme://authority`, the path, the headers,
    /// the body.
    pub origin: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: bytes::Bytes,
    /// Poll for responses instead of sleeping (the mio path only).
    pub busy_poll: bool,
    /// Plain HTTP/1.1 on the io_uring engine instead of epoll (`perflab http --engine uring`, a
    /// hidden option; never from a plan).
    pub uring: bool,
    /// The slice of the load this run sends (`perflab run --segment`; the whole load otherwise).
    pub segment: crate::model::Segment,
}

impl Prepared {
    /// Only `segment`'s slice: in the closed model its share of the connections (connection `j` is
    /// segment `j mod N`'s), in the open model its arrivals of the one global schedule (the rate
    /// stays the whole load's: the schedule takes the slice), and its share of `requests`.
    pub fn segmented(&self, segment: crate::model::Segment) -> Result<Prepared, String> {
        let mut p = self.clone();
        p.segment = segment;
        if p.rate.is_none() {
            let n = segment.share(self.connections as u64) as usize;
            if n == 0 {
                return Err(format!(
                    "{} connections cannot be split into {} segments: each segment needs at least one",
                    self.connections, segment.count
                ));
            }
            p.connections = n;
            p.threads = p.threads.min(n);
        }
        if let Some(total) = self.requests {
            let n = segment.share(total);
            if n == 0 {
                return Err(format!(
                    "{total} requests cannot be split into {} segments: each segment needs at least one",
                    segment.count
                ));
            }
            p.requests = Some(n);
        }
        Ok(p)
    }
}

/// The most connections: each needs a file descriptor, and the open-file limit is checked too.
pub const MAX_CONNECTIONS: u64 = 1_000_000;
/// The largest request body read from `body_file` (64 MiB).
pub const MAX_BODY_BYTES: u64 = 64 << 20;
/// The most worker threads.
pub const MAX_THREADS: u64 = 1024;
/// The most HTTP/2 streams per connection.
pub const MAX_STREAMS: u64 = 1000;
/// The open model's highest rate (requests per second): a gap of 100 ns between two sends.
pub const MAX_RATE: f64 = 10_000_000.0;
/// The open model's lowest rate: one request every 1000 s.
pub const MIN_RATE: f64 = 0.001;

/// A header name is an HTTP token: letters, digits and ``!#$%&'*+-.^_`|~``.
fn header_name_ok(k: &str) -> bool {
    !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
}

/// How many files this process may have open (the soft limit), if known.
fn open_file_limit() -> Option<u64> {
    let mut l = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the valid, properly aligned `rlimit` it is given and reads
    // nothing else.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) } == 0;
    (ok && l.rlim_cur != libc::RLIM_INFINITY).then_some(l.rlim_cur)
}

fn dur(s: &Option<String>, what: &str) -> anyhow::Result<Option<Duration>> {
    s.as_deref()
        .map(crate::util::duration::parse)
        .transpose()
        .map_err(|e| usage(format!("{what}: {e}")))
}

/// The parts of the URL a run needs.
struct Target {
    https: bool,
    protocol: Protocol,
    url: crate::util::url::Url,
}

/// The URL parsed, with the checks that depend on its scheme. Its password is never shown.
fn split_url(c: &HttpConfig) -> anyhow::Result<Target> {
    let shown = crate::util::url::shown(&c.url);
    let url = crate::util::url::Url::parse(&c.url).map_err(|why| usage(format!("the URL `{shown}`: {why}")))?;
    let (https, protocol) = match (url.scheme.as_str(), c.http2) {
        ("http", false) => (false, Protocol::Http1),
        ("http", true) => (false, Protocol::H2c),
        ("https", false) => (true, Protocol::Http1),
        ("https", true) => (true, Protocol::H2),
        (other, _) => {
            return Err(usage(format!(
                "unsupported scheme `{}` (use http:// or https://)",
                crate::util::text::clip(other)
            )))
        }
    };
    if url.host.is_empty() {
        return Err(usage(format!("the URL `{shown}` has no host")));
    }
    if c.streams.is_some() && !c.http2 {
        return Err(usage("streams needs HTTP/2 (--http2)"));
    }
    if c.streams == Some(0) || c.streams.is_some_and(|n| n > MAX_STREAMS) {
        return Err(usage(format!("streams must be from 1 to {MAX_STREAMS}")));
    }
    if c.http2 && !c.keepalive {
        return Err(usage("--no-keepalive applies to HTTP/1.1 only (HTTP/2 multiplexes one connection)"));
    }
    if !https && (c.insecure || c.cacert.is_some()) {
        return Err(usage("--insecure and --cacert apply to https:// URLs only"));
    }
    Ok(Target { https, protocol, url })
}

/// The headers the request carries besides perflab's own: the given ones, and the URL's userinfo
/// as Basic authorization (as curl sends it) unless an `Authorization` header is given.
fn request_headers(c: &HttpConfig, url: &crate::util::url::Url) -> BTreeMap<String, String> {
    let mut headers: BTreeMap<String, String> = c.headers.iter().cloned().collect();
    if let Some(auth) = url.basic_auth() {
        if !headers.keys().any(|k| k.eq_ignore_ascii_case("authorization")) {
            headers.insert("Authorization".into(), auth);
        }
    }
    headers
}

/// The HTTP/1.1 request, written once: request line, headers, body.
fn request_bytes(
    c: &HttpConfig,
    headers: &BTreeMap<String, String>,
    method: &str,
    path: &str,
    authority: &str,
    body: &[u8],
) -> anyhow::Result<Vec<u8>> {
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: perflab\r\nAccept: */*\r\n");
    for (k, v) in headers {
        if !header_name_ok(k) {
            return Err(usage(format!(
                "header name \"{}\" is not a valid name (letters, digits and - only, no spaces or colons)",
                crate::util::text::clip(k)
            )));
        }
        if v.chars().any(|ch| ch.is_control() && ch != '\t') {
            return Err(usage(format!(
                "the value of header {k} holds a line break or another control character"
            )));
        }
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if !c.keepalive {
        req.push_str("Connection: close\r\n");
    }
    if !body.is_empty() {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    let mut request = req.into_bytes();
    request.extend_from_slice(body);
    Ok(request)
}

pub fn prepare(c: &HttpConfig) -> anyhow::Result<Prepared> {
    let Target { https, protocol, url } = split_url(c)?;
    let authority = url.authority();
    let path = url.target();
    if c.connections == 0 || c.connections > MAX_CONNECTIONS {
        return Err(usage(format!("connections must be from 1 to {MAX_CONNECTIONS}")));
    }
    if let Some(limit) = open_file_limit().filter(|l| c.connections.saturating_add(64) > *l) {
        return Err(usage(format!(
            "{} connections need more open files than this process may have ({limit}): raise the limit (ulimit -n) or use fewer connections",
            c.connections
        )));
    }
    if c.threads == Some(0) || c.threads.is_some_and(|t| t > MAX_THREADS) {
        return Err(usage(format!("threads must be from 1 to {MAX_THREADS}")));
    }
    if c.requests == Some(0) {
        return Err(usage("requests must be at least 1"));
    }
    let duration = c
        .duration
        .as_deref()
        .map(|d| crate::util::duration::measured(d, "duration"))
        .transpose()
        .map_err(usage)?;
    if c.max_inflight == Some(0) {
        return Err(usage("max_inflight must be at least 1 (--max-inflight)"));
    }
    if let Some(r) = c.rate {
        if !(MIN_RATE..=MAX_RATE).contains(&r) {
            return Err(usage(format!(
                "rate must be a number of requests per second from {MIN_RATE} to {MAX_RATE}"
            )));
        }
    }
    let arrival = match c.arrival.as_deref() {
        None | Some("constant") => Arrival::Constant,
        Some("poisson") => Arrival::Poisson,
        Some(o) => return Err(usage(format!("arrival `{o}`: use constant or poisson"))),
    };
    if c.arrival.is_some() && c.rate.is_none() {
        return Err(usage("arrival needs a rate (the open model)"));
    }
    let timeout = dur(&c.timeout, "timeout")?.unwrap_or(Duration::from_secs(30));
    if timeout.is_zero() {
        return Err(usage("timeout must be longer than 0s"));
    }
    let method = c.method.clone().unwrap_or_else(|| {
        if c.body.is_some() || c.body_file.is_some() {
            "POST".into()
        } else {
            "GET".into()
        }
    });
    if !method.chars().all(|ch| ch.is_ascii_uppercase()) || method.is_empty() {
        return Err(usage(format!(
            "method `{}`: use an upper-case HTTP method such as GET or POST",
            crate::util::text::clip(&method)
        )));
    }
    let body: Vec<u8> = match (&c.body, &c.body_file) {
        (Some(_), Some(_)) => return Err(usage("give either body or body_file, not both")),
        (Some(b), None) => b.as_bytes().to_vec(),
        (None, Some(f)) => crate::util::fs::read_bounded(std::path::Path::new(f), MAX_BODY_BYTES)
            .map_err(|e| usage(format!("cannot read body file {}: {e}", crate::util::text::clip(f))))?,
        (None, None) => Vec::new(),
    };
    let headers = request_headers(c, &url);
    let addr = crate::util::url::resolve(&url.host, url.port_or(if https { 443 } else { 80 })).map_err(usage)?;

    let request = request_bytes(c, &headers, &method, &path, &authority, &body)?;
    let connections = c.connections as usize;
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    // A target on this machine needs CPUs too: against loopback with keep-alive the client takes half
    // of them (at least one). On 2 CPUs against nginx that pushed ~30 % more requests at ~40 % less CPU
    // per request than one thread per CPU, while a connection per request (kernel connect/close work)
    // went ~10 % faster on one thread per CPU (bench/http_vs_peers.sh, the extra rows).
    let default_threads = if addr.ip().is_loopback() && c.keepalive {
        (cpus / 2).max(1)
    } else {
        cpus
    };
    let threads = (c.threads.map(|t| t as usize).unwrap_or(default_threads)).clamp(1, connections);
    let streams = if c.http2 { c.streams.unwrap_or(1) as usize } else { 1 };
    if c.busy_poll && (https || protocol != Protocol::Http1) {
        return Err(usage(
            "busy polling (--busy-poll; busy_poll in a plan) works with plain HTTP/1.1 only: an http:// URL without --http2",
        ));
    }
    let slots = connections.saturating_mul(streams);
    let max_inflight = c.max_inflight.map(|m| m as usize).unwrap_or(slots).clamp(1, slots);
    let tls = if https {
        Some(super::tls::Client::new(
            &url.host,
            c.insecure,
            c.cacert.as_deref(),
            protocol == Protocol::H2,
        )?)
    } else {
        None
    };
    let headers = headers.iter().map(|(k, v)| (k.to_ascii_lowercase(), v.clone())).collect();
    Ok(Prepared {
        addr,
        url: crate::util::redact::redact_url(&c.url),
        request,
        connections,
        threads,
        requests: c.requests,
        duration,
        rate: c.rate,
        arrival,
        seed: c.seed.unwrap_or(1),
        max_inflight,
        keepalive: c.keepalive,
        timeout,
        method,
        protocol,
        tls,
        streams,
        origin: format!("{}://{authority}", if https { "https" } else { "http" }),
        path,
        headers,
        body: body.into(),
        busy_poll: c.busy_poll,
        uring: false,
        segment: crate::model::Segment::WHOLE,
    })
}
