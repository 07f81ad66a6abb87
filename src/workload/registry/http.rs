//! `type = "http"`: perflab's own HTTP load generator (`perflab http`), in-process.

use super::spec::{decode, located, Key, Locator, WorkloadKind};
use crate::workload::http::{HttpConfig, HttpWorkload};
use crate::workload::Workload;

pub struct Kind;

const KEYS: &[Key] = &[
    Key {
        name: "url",
        ty: "string",
        default: "required",
        doc: "the URL to load: `http://` or `https://`",
    },
    Key {
        name: "connections",
        ty: "integer ≥ 1",
        default: "`10`",
        doc: "concurrent connections (the closed model's concurrency)",
    },
    Key {
        name: "requests",
        ty: "integer ≥ 1",
        default: "none",
        doc: "stop after this many responses (the load phase still bounds the run)",
    },
    Key {
        name: "duration",
        ty: "duration string",
        default: "the load phase",
        doc: "with `requests`: stop after this long at most (never longer than the load phase)",
    },
    Key {
        name: "rate",
        ty: "number > 0",
        default: "none (closed model)",
        doc: "open model: requests per second, latency measured from each request's intended send time",
    },
    Key {
        name: "arrival",
        ty: "`\"constant\"` or `\"poisson\"`",
        default: "`\"constant\"`",
        doc: "open model: how sends are spaced (needs `rate`)",
    },
    Key {
        name: "seed",
        ty: "integer ≥ 0",
        default: "`1`",
        doc: "the seed of Poisson arrivals",
    },
    Key {
        name: "max_inflight",
        ty: "integer ≥ 1",
        default: "connections × streams",
        doc: "open model: most requests outstanding at once",
    },
    Key {
        name: "method",
        ty: "string",
        default: "`GET` (`POST` with a body)",
        doc: "the upper-case HTTP method",
    },
    Key {
        name: "headers",
        ty: "table of strings",
        default: "none",
        doc: "extra request headers (Authorization and Cookie values are never stored)",
    },
    Key {
        name: "body",
        ty: "string",
        default: "none",
        doc: "the request body",
    },
    Key {
        name: "body_file",
        ty: "string (a path)",
        default: "none",
        doc: "read the request body from this file",
    },
    Key {
        name: "keepalive",
        ty: "bool",
        default: "`true`",
        doc: "reuse connections; `false` sends `Connection: close` (HTTP/1.1 only)",
    },
    Key {
        name: "http2",
        ty: "bool",
        default: "`false`",
        doc: "HTTP/2: h2 over TLS (ALPN) for `https://`, h2c for `http://`",
    },
    Key {
        name: "streams",
        ty: "integer ≥ 1",
        default: "`1`",
        doc: "HTTP/2: concurrent streams per connection",
    },
    Key {
        name: "insecure",
        ty: "bool",
        default: "`false`",
        doc: "`https://`: accept any certificate",
    },
    Key {
        name: "cacert",
        ty: "string (a path)",
        default: "the system's roots",
        doc: "`https://`: trust this PEM CA certificate",
    },
    Key {
        name: "timeout",
        ty: "duration string",
        default: "`\"30s\"`",
        doc: "per request (connect and response)",
    },
    Key {
        name: "threads",
        ty: "integer ≥ 1",
        default: "one per CPU (half of them against loopback with keep-alive)",
        doc: "worker threads, at most one per connection",
    },
    Key {
        name: "busy_poll",
        ty: "bool",
        default: "`false`",
        doc: "wait for responses by polling (plain HTTP/1.1): no thread wake-up in the latencies, one busy core per thread",
    },
];

impl WorkloadKind for Kind {
    fn name(&self) -> &'static str {
        "http"
    }

    fn summary(&self) -> &'static str {
        "perflab's HTTP/1.1 and HTTP/2 load generator, the options of `perflab http` in snake_case. Primary figures: `requests_per_s` and the p99 of the merged `latency` histogram (`latency_p99_ms`)."
    }

    fn keys(&self) -> &'static [Key] {
        KEYS
    }

    fn build(&self, table: toml::Table, loc: &dyn Locator) -> anyhow::Result<Box<dyn Workload>> {
        let cfg: HttpConfig = decode(table, KEYS, loc)?;
        let w = HttpWorkload::new(cfg).map_err(|e| {
            let msg = format!("{e:#}");
            located(loc, key_of(&msg), &msg)
        })?;
        Ok(Box::new(w))
    }
}

/// The key a message of `perflab http`'s checks is about, so that the plan's error points at it
/// (the messages name the option first: "connections must be ...", "header name ...").
fn key_of(msg: &str) -> Option<&'static str> {
    let first = msg.split([' ', ':', '`']).next().unwrap_or("");
    let aliases: &[(&str, &str)] = &[("header", "headers"), ("--insecure", "insecure"), ("--no-keepalive", "keepalive")];
    if let Some((_, key)) = aliases.iter().find(|(w, _)| *w == first) {
        return Some(key);
    }
    if let Some(k) = KEYS.iter().find(|k| k.name == first) {
        return Some(k.name);
    }
    let phrases: &[(&str, &str)] = &[
        ("connections need", "connections"),
        ("--cacert", "cacert"),
        ("body file", "body_file"),
        ("header", "headers"),
        ("busy", "busy_poll"),
        ("either body", "body"),
        ("URL", "url"),
        ("scheme", "url"),
        ("resolve", "url"),
        ("host", "url"),
    ];
    phrases.iter().find(|(p, _)| msg.contains(p)).map(|(_, k)| *k)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_declared_keys_are_what_the_config_decodes() {
        let mut declared: Vec<String> = super::KEYS.iter().map(|k| k.name.to_string()).collect();
        declared.sort();
        assert_eq!(declared, super::super::spec::serde_fields::<crate::workload::http::HttpConfig>());
    }
}
