//! Truth tests of `perflab serve`: every model counts exactly the requests it answered,
//! `/bytes/N` serves N bytes, `--port 0` prints the address it chose, SIGTERM ends it with exit 0,
//! and bad options are one line with exit 2.

use perflab::serve::{self, Model, ServeConfig};
use perflab::util::Cancel;
use perflab::workload::http::{self, HttpConfig};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MODELS: [Model; 3] = [Model::EventLoop, Model::Pool { workers: 3 }, Model::ThreadPerConnection];

fn start(model: Model) -> serve::ServerHandle {
    serve::start(ServeConfig {
        model,
        threads: 1,
        ..ServeConfig::default()
    })
    .expect("starts on loopback")
}

#[test]
fn each_model_counts_the_requests_it_served() {
    for model in MODELS {
        let s = start(model);
        let mut cfg = HttpConfig::new(&format!("http://{}/", s.addr()));
        cfg.connections = 3;
        cfg.requests = Some(500);
        cfg.timeout = Some("10s".into());
        let prepared = http::prepare(&cfg).expect("valid");
        let r = http::run(&prepared, Duration::ZERO, &Cancel::new(), &mut || {}, &mut |_, _| {}).expect("run");
        let served = s.shutdown().expect("shutdown").responses;
        assert_eq!(r.stats.responses, 500, "{model:?}: {:?}", r.error_counts());
        assert_eq!(served, 500, "{model:?}");
    }
}

/// One raw HTTP/1.1 GET; returns the head and the body.
fn get(addr: SocketAddr, path: &str) -> (String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").expect("send");
    let mut all = Vec::new();
    s.read_to_end(&mut all).expect("read to the end");
    let end = all.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
    (String::from_utf8_lossy(&all[..end]).into_owned(), all[end..].to_vec())
}

#[test]
fn bytes_1000000_is_exactly_one_million_bytes_in_every_model() {
    for model in MODELS {
        let s = start(model);
        let (head, body) = get(s.addr(), "/bytes/1000000");
        s.shutdown().expect("shutdown");
        assert!(head.starts_with("HTTP/1.1 200"), "{model:?}: {head}");
        assert!(
            head.to_ascii_lowercase().contains("content-length: 1000000\r\n"),
            "{model:?}: {head}"
        );
        assert_eq!(body.len(), 1_000_000, "{model:?}");
    }
}

#[test]
fn port_0_prints_the_chosen_address_and_sigterm_exits_0() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["serve", "--port", "0", "--threads", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn perflab serve");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("the first line");
    // One line, holding the URL with the port the kernel chose.
    assert!(line.ends_with('\n') && line.matches('\n').count() == 1, "{line:?}");
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).expect("a URL");
    let addr: SocketAddr = url.trim_start_matches("http://").trim_end_matches('/').parse().expect("host:port");
    assert_ne!(addr.port(), 0);
    let (head, body) = get(addr, "/");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(body.len(), 37, "the default size");

    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let started = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("perflab serve ignored SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    let mut rest = String::new();
    out.read_to_string(&mut rest).expect("read the rest");
    assert!(rest.contains("served 1 requests"), "{rest:?}");
}

#[test]
fn a_bad_option_is_one_line_and_exit_2() {
    for args in [
        &["serve", "--model", "forking"][..],
        &["serve", "--no-such-option"][..],
        &["serve", "--delay", "soon"][..],
        &["serve", "--stall-at", "1s"][..],
        &["serve", "--fail-rate", "2"][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_perflab"))
            .args(args)
            .output()
            .expect("run perflab");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err:?}");
        assert!(err.starts_with("perflab: error: "), "{args:?}: {err:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
