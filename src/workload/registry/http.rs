//! `type = "http"`: perflab's own HTTP load generator (`perflab http`), in-process.

use super::spec::{decode, located, Key, Locator, Settings, WorkloadKind};
use crate::workload::http::{HttpConfig, HttpWorkload};
use crate::workload::Workload;

pub struct Kind;

/// The keys, from the settings `perflab http`'s options come from too.
const KEYS: &[Key] = <HttpConfig as Settings>::KEYS;

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
    fn every_key_is_an_option_of_perflab_http() {
        crate::workload::registry::spec::assert_keys_are_options::<crate::workload::http::HttpConfig>(&[]);
    }
}
