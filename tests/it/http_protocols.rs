//! HTTPS, h2 over TLS (ALPN) and h2c: exact counts on both sides against `perflab serve` in-process on
//! loopback, TLS failures classified, bad input rejected. No timing asserts.

use assert_cmd::Command;
use perflab::serve::{start, ServeConfig, ServerHandle};
use perflab::util::Cancel;
use perflab::workload::http::{prepare, run, HttpConfig, HttpReport};
use std::path::PathBuf;
use std::time::Duration;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tls").join(name)
}

fn cert() -> String {
    fixture("localhost.crt").display().to_string()
}

fn server(tls: bool) -> ServerHandle {
    let cfg = ServeConfig {
        threads: 1,
        tls: tls.then(|| (fixture("localhost.crt"), fixture("localhost.key"))),
        ..ServeConfig::default()
    };
    start(cfg).expect("perflab serve starts")
}

/// A config for `url` that stops at `n` requests (and, as a bound, after 30 s).
fn config(url: String, n: u64, connections: u64) -> HttpConfig {
    let mut c = HttpConfig::new(&url);
    c.requests = Some(n);
    c.duration = Some("30s".into());
    c.connections = connections;
    c
}

fn load(c: &HttpConfig) -> HttpReport {
    let p = prepare(c).expect("valid config");
    run(&p, Duration::ZERO, &Cancel::new(), &mut || {}, &mut |_, _| {}).expect("the run completes")
}

fn errors_of(r: &HttpReport, class: &str) -> u64 {
    r.error_counts()
        .into_iter()
        .filter(|(c, _, _)| *c == class)
        .map(|(_, n, _)| n)
        .sum()
}

#[test]
fn https_with_cacert_counts_exactly_on_both_sides() {
    let srv = server(true);
    let mut c = config(format!("https://127.0.0.1:{}/", srv.addr().port()), 500, 4);
    c.cacert = Some(cert());
    let r = load(&c);
    assert_eq!(r.stats.responses, 500);
    assert_eq!(r.errors(), 0);
    assert_eq!(r.stats.status[200], 500);
    assert_eq!(r.protocol, "http/1.1");
    assert!(r.tls);
    // Keep-alive: one handshake per connection, each timed.
    assert_eq!(r.stats.connections_opened, 4);
    assert_eq!(r.stats.tls_handshake.len(), 4);
    assert_eq!(r.stats.body_bytes, 500 * 37);
    assert_eq!(srv.shutdown().unwrap().responses, 500);
}

#[test]
fn https_without_keepalive_shakes_hands_for_every_request() {
    let srv = server(true);
    let mut c = config(format!("https://localhost:{}/", srv.addr().port()), 100, 2);
    c.cacert = Some(cert());
    c.keepalive = false;
    let r = load(&c);
    assert_eq!(r.stats.responses, 100);
    assert_eq!(r.errors(), 0);
    // A connection per request, each with its handshake timed (a connection may open after the
    // last request, as on the HTTP/1.1 path, to find there is nothing left to send).
    assert!((100..=102).contains(&r.stats.connections_opened), "{}", r.stats.connections_opened);
    assert_eq!(r.stats.tls_handshake.len(), r.stats.connections_opened);
    assert_eq!(srv.shutdown().unwrap().responses, 100);
}

#[test]
fn h2c_with_streams_counts_exactly_on_both_sides() {
    let srv = server(false);
    let mut c = config(format!("http://127.0.0.1:{}/", srv.addr().port()), 1000, 2);
    c.http2 = true;
    c.streams = Some(10);
    let r = load(&c);
    assert_eq!(r.stats.responses, 1000);
    assert_eq!(r.errors(), 0);
    assert_eq!(r.protocol, "h2c");
    assert!(!r.tls);
    assert_eq!(r.json()["protocol"], "h2c");
    // Twenty streams at once on two connections, none reopened.
    assert_eq!(r.stats.connections_opened, 2);
    assert_eq!(r.stats.tls_handshake.len(), 0);
    assert_eq!(srv.shutdown().unwrap().responses, 1000);
}

#[test]
fn https_h2_by_alpn_counts_exactly_and_says_h2() {
    let srv = server(true);
    let mut c = config(format!("https://127.0.0.1:{}/", srv.addr().port()), 600, 2);
    c.cacert = Some(cert());
    c.http2 = true;
    c.streams = Some(5);
    let r = load(&c);
    assert_eq!(r.stats.responses, 600);
    assert_eq!(r.errors(), 0);
    assert_eq!(r.protocol, "h2");
    let j = r.json();
    assert_eq!(j["protocol"], "h2");
    assert_eq!(j["tls"], true);
    assert_eq!(j["tls_handshake_ms"]["count"], 2);
    assert!(r.summary().contains("Protocol:               h2 over TLS"));
    assert_eq!(srv.shutdown().unwrap().responses, 600);
}

#[test]
fn h2c_open_model_sends_every_scheduled_request() {
    let srv = server(false);
    let mut c = config(format!("http://127.0.0.1:{}/", srv.addr().port()), 100, 2);
    c.http2 = true;
    c.streams = Some(4);
    c.rate = Some(400.0);
    let r = load(&c);
    assert_eq!(r.stats.scheduled, 100);
    assert_eq!(r.stats.responses, 100);
    assert_eq!(r.stats.dropped, 0);
    assert_eq!(r.json()["open_model"]["scheduled"], 100);
    assert_eq!(srv.shutdown().unwrap().responses, 100);
}

#[test]
fn an_untrusted_certificate_is_a_tls_error_unless_insecure() {
    let srv = server(true);
    // The fixture is self-signed: the Mozilla roots do not trust it.
    let c = config(format!("https://localhost:{}/", srv.addr().port()), 20, 2);
    let r = load(&c);
    assert_eq!(r.stats.responses, 0);
    assert_eq!(errors_of(&r, "tls"), 20, "{:?}", r.error_counts());
    assert_eq!(r.errors(), 20);
    assert!(r.error_counts()[0].2.as_deref().unwrap_or("").contains("UnknownIssuer"));
    assert_eq!(srv.requests_served(), 0);
    for http2 in [false, true] {
        let mut c = c.clone();
        c.insecure = true;
        c.http2 = http2;
        let r = load(&c);
        assert_eq!(r.stats.responses, 20);
        assert_eq!(r.errors(), 0);
    }
    assert_eq!(srv.shutdown().unwrap().responses, 40);
}

#[test]
fn an_untrusted_certificate_exits_1_with_the_summary() {
    let srv = server(true);
    let url = format!("https://127.0.0.1:{}/", srv.addr().port());
    let o = Command::cargo_bin("perflab")
        .unwrap()
        .args(["http", &url, "-n", "5", "-c", "1", "-q"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("tls: 5"), "{out}");
    srv.shutdown().unwrap();
}

#[test]
fn a_bad_cacert_path_is_one_line_and_exit_2() {
    let o = Command::cargo_bin("perflab")
        .unwrap()
        .args(["http", "https://127.0.0.1:9/", "-n", "1", "--cacert", "/nonexistent/ca.pem"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--cacert /nonexistent/ca.pem"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn protocol_options_without_their_protocol_are_bad_input() {
    for args in [
        vec!["http", "http://127.0.0.1:9/", "-n", "1", "--streams", "4"],
        vec!["http", "http://127.0.0.1:9/", "-n", "1", "--insecure"],
        vec!["http", "http://127.0.0.1:9/", "-n", "1", "--http2", "--no-keepalive"],
    ] {
        let o = Command::cargo_bin("perflab")
            .unwrap()
            .args(&args)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}
