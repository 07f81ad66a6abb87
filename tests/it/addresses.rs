//! Addresses as perflab takes them: a URL's user and password are sent as Basic authorization (as
//! curl sends them) and never shown or kept (terminal, JSON, the interval log, the run directory);
//! a client's ephemeral port is not taken for a server's.

use std::io::{Read, Write};
use std::process::Command;
use std::sync::{Arc, Mutex};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");
const PASSWORD: &str = "s3cret-pw0";
/// `user:s3cret-pw0` in base64.
const BASIC: &str = "Basic dXNlcjpzM2NyZXQtcHcw";

/// A keep-alive HTTP/1.1 server on loopback that answers every request with an empty 200 and
/// keeps each request's head; its port.
fn recording_server() -> (u16, Arc<Mutex<Vec<String>>>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let kept = heads.clone();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            let kept = kept.clone();
            std::thread::spawn(move || serve(c, &kept));
        }
    });
    (port, heads)
}

fn serve(mut c: std::net::TcpStream, kept: &Mutex<Vec<String>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            buf.drain(..end + 4);
            kept.lock().expect("lock").push(head);
            if c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").is_err() {
                return;
            }
        }
        match c.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Every request carried the Basic authorization, and no head names the password.
fn all_authorized(heads: &Mutex<Vec<String>>) -> usize {
    let heads = heads.lock().expect("lock");
    assert!(!heads.is_empty(), "no request arrived");
    for h in heads.iter() {
        let auth = h
            .lines()
            .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("authorization")))
            .map(|(_, v)| v.trim().to_string());
        assert_eq!(auth.as_deref(), Some(BASIC), "{h}");
        assert!(
            !h.contains(PASSWORD) && !h.contains("user@"),
            "the userinfo is not in the request line or Host: {h}"
        );
    }
    heads.len()
}

#[test]
fn a_urls_userinfo_is_sent_as_basic_authorization_and_never_shown() {
    let (port, heads) = recording_server();
    let dir = tempfile::tempdir().expect("tmp");
    let log = dir.path().join("latency.hlog");
    let url = format!("http://user:{PASSWORD}@127.0.0.1:{port}/x");
    for json in [false, true] {
        let mut cmd = Command::new(BIN);
        cmd.args(["http", &url, "-n", "20", "-c", "2", "--hdr-log"]).arg(&log);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().expect("perflab http");
        let printed = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "{printed}");
        assert!(!printed.contains(PASSWORD), "the password is shown: {printed}");
        assert!(printed.contains("user:[redacted]@127.0.0.1"), "{printed}");
        let hlog = std::fs::read_to_string(&log).expect("the interval log");
        assert!(!hlog.contains(PASSWORD), "the interval log holds the password");
    }
    assert_eq!(all_authorized(&heads), 40);
}

#[test]
fn a_plans_url_password_is_sent_and_kept_nowhere() {
    let (port, heads) = recording_server();
    let dir = tempfile::tempdir().expect("tmp");
    let plan = crate::common::write_plan(
        dir.path(),
        &format!(
            "name = \"userinfo\"\n[workload]\ntype = \"http\"\nurl = \"http://user:{PASSWORD}@127.0.0.1:{port}/\"\n\
             connections = 1\n[phases]\nbaseline = 0\nwarmup = 0\nload = \"300ms\"\nrecovery = 0\ninterval = \"100ms\"\n"
        ),
    );
    let runs = dir.path().join("runs");
    let out = Command::new(BIN)
        .args(["run", "-q", "--runs-dir"])
        .arg(&runs)
        .arg(&plan)
        .output()
        .expect("perflab run");
    let printed = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{printed}");
    assert!(!printed.contains(PASSWORD), "{printed}");
    assert!(all_authorized(&heads) > 0);
    let run = crate::common::only_run_dir(&runs);
    for (name, bytes) in crate::common::files_under(&run) {
        let found = bytes.windows(PASSWORD.len()).any(|w| w == PASSWORD.as_bytes());
        assert!(!found, "{name} holds the password");
    }
}

#[test]
fn an_unclosed_ipv6_bracket_is_not_looked_up_as_a_name() {
    let out = Command::new(BIN)
        .args(["http", "http://[::1", "-n", "1"])
        .output()
        .expect("perflab http");
    crate::common::one_line_exit_2(&out, "an IPv6 address without its closing `]`");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("resolve"), "{err}");
}

/// A port that is only the local end of a client's connection takes no connection meant for a
/// server: a plan whose ready port it is, is not refused. A listening port still is.
#[test]
fn a_clients_ephemeral_port_is_not_in_use_for_the_port_check() {
    let server = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let client = std::net::TcpStream::connect(server.local_addr().expect("addr")).expect("connect");
    let _accepted = server.accept().expect("accept");
    let ephemeral = client.local_addr().expect("client addr").port();
    let dir = tempfile::tempdir().expect("tmp");
    let plan = |port: u16| {
        crate::common::write_plan(
            dir.path(),
            &format!(
                "name = \"p\"\n[workload]\ntype = \"exec\"\ncommand = \"true\"\n[target]\ncommand = \"true\"\n\
                 ready = {{ tcp = \"127.0.0.1:{port}\" }}\n"
            ),
        )
    };
    let out = Command::new(BIN)
        .args(["run", "--dry-run"])
        .arg(plan(ephemeral))
        .output()
        .expect("perflab run --dry-run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "port {ephemeral} is a client's: {err}");
    let listening = server.local_addr().expect("addr").port();
    let out = Command::new(BIN)
        .args(["run", "--dry-run"])
        .arg(plan(listening))
        .output()
        .expect("perflab run --dry-run");
    crate::common::one_line_exit_2(&out, &format!("port {listening} is already in use"));
}
