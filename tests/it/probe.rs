//! Truth tests of the latency probes (`perflab probe`, `perflab::probe`), on loopback only: each
//! probe kind against a target whose answer is known (a 20 ms HTTP delay, an echo that drops every
//! 10th datagram or holds each reply 15 ms, a target that stops answering, a command's exit status),
//! and the command line's output and exit codes.

use perflab::probe::{IcmpSocket, Kind, Outcome, PhaseTag, ProbeResult, ProbeSet, ProbeSpec};
use perflab::serve::udp_echo::{self, UdpEchoConfig};
use perflab::serve::{self, Delay, ServeConfig, Stall};
use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn spec(kind: Kind, target: &str, interval_ms: u64, count: u64, timeout_ms: u64) -> ProbeSpec {
    let mut s = ProbeSpec::new(kind, target);
    s.interval = ms(interval_ms);
    s.count = Some(count);
    s.timeout = ms(timeout_ms);
    s
}

/// Run one probe to its count.
fn run(spec: ProbeSpec) -> ProbeResult {
    let running = ProbeSet::start(vec![spec], Arc::new(|| PhaseTag::new("test"))).expect("the probe starts");
    assert!(running.wait_finished(Duration::from_secs(120)), "the probe ends by its count");
    running.stop().pop().expect("one result")
}

fn serve_with_delay() -> serve::ServerHandle {
    serve::start(ServeConfig {
        threads: 1,
        delay: Delay::parse("20ms").expect("a delay"),
        ..ServeConfig::default()
    })
    .expect("serve starts on loopback")
}

#[test]
fn http_probe_reads_the_servers_20ms_delay_and_its_parts_add_up() {
    let s = serve_with_delay();
    let r = run(spec(Kind::Http, &format!("http://{}/", s.addr()), 30, 40, 2000));
    s.shutdown().expect("shutdown");
    let sum = r.summary();
    assert_eq!(
        (sum.n, sum.replies),
        (40, 40),
        "{:?}",
        r.samples.iter().find(|s| s.outcome.rtt().is_none())
    );
    let p50 = sum.rtt.median_ms.expect("a median");
    // At least the server's 20 ms; under 35 ms, which a doubled delay (40 ms) or a delayed ACK
    // would pass, with room for a machine busy with other tests (25.3 ms seen at a load of 8).
    assert!((20.0..35.0).contains(&p50), "http total p50 {p50} ms, the server waits 20 ms");
    assert_eq!(r.part_names, ["dns", "connect", "tls", "wait", "transfer"]);
    for x in &r.samples {
        let total = x.outcome.rtt().expect("a reply").as_secs_f64();
        let parts: f64 = x.parts.iter().map(|p| p.as_secs_f64()).sum();
        assert!(
            (parts - total).abs() <= 0.01 * total,
            "seq {}: parts {parts} s, total {total} s",
            x.seq
        );
        // The 20 ms are the server's: they fall in the wait, not in the connection.
        assert!(x.parts.get(3) >= Some(ms(20)), "seq {}: wait {:?}", x.seq, x.parts.get(3));
        assert_eq!(x.parts.get(2), Some(Duration::ZERO), "no TLS over http://");
    }
    let mean_parts: f64 = sum.parts.iter().map(|p| p.stats.mean_ms.expect("a mean")).sum();
    let mean = sum.rtt.mean_ms.expect("a mean");
    assert!(
        (mean_parts - mean).abs() <= 0.01 * mean,
        "mean parts {mean_parts} vs mean total {mean}"
    );
    // Each probe is one request and one response on its own connection.
    assert!(
        sum.traffic.packets_out >= 3 * 40 && sum.traffic.packets_in >= 2 * 40,
        "{:?}",
        sum.traffic
    );
    assert!(
        sum.traffic.bytes_in > sum.traffic.bytes_out,
        "the responses are longer than the requests"
    );
}

#[test]
fn tcp_probe_connects_without_waiting_for_the_servers_delay() {
    let s = serve_with_delay();
    let r = run(spec(Kind::Tcp, &s.addr().to_string(), 5, 50, 2000));
    s.shutdown().expect("shutdown");
    let sum = r.summary();
    assert_eq!((sum.n, sum.replies, sum.timeouts, sum.errors), (50, 50, 0, 0));
    // A handshake: SYN and ACK out, SYN-ACK in; no payload.
    assert_eq!((sum.traffic.packets_out, sum.traffic.packets_in), (100, 50), "{:?}", sum.traffic);
    assert_eq!((sum.traffic.bytes_out, sum.traffic.bytes_in), (0, 0));
    assert!(r.histogram(None).len() == 50, "every reply is in the HDR histogram");
}

#[test]
fn udp_probe_reads_10_pct_loss_from_an_echo_that_drops_every_10th() {
    let echo = udp_echo::start(UdpEchoConfig {
        drop_every: Some(10),
        ..UdpEchoConfig::default()
    })
    .expect("echo starts");
    let r = run(spec(Kind::Udp, &echo.addr().to_string(), 2, 500, 300));
    let counts = echo.shutdown();
    let sum = r.summary();
    assert_eq!(sum.n, 500);
    assert_eq!(counts.dropped, 50, "{counts:?}");
    let loss = sum.loss_pct.expect("a loss");
    assert!((9.0..=11.0).contains(&loss), "loss {loss} %");
    assert_eq!(sum.timeouts, sum.n - sum.replies);
    // The dropped ones are every 10th datagram the echo received: seq 9, 19, 29, ...
    let lost: Vec<u64> = r.samples.iter().filter(|s| s.outcome == Outcome::Timeout).map(|s| s.seq).collect();
    assert!(lost.iter().all(|s| s % 10 == 9), "{lost:?}");
    assert_eq!((sum.traffic.packets_out, sum.traffic.packets_in), (500, 450));
    assert_eq!(sum.traffic.bytes_out, 500 * 64);
    assert!(sum.jitter_ms.is_some());
}

#[test]
fn udp_probe_reads_an_echo_holding_each_reply_15ms() {
    let echo = udp_echo::start(UdpEchoConfig {
        hold: ms(15),
        ..UdpEchoConfig::default()
    })
    .expect("echo starts");
    // Sends every 2 ms while replies take 15: several probes are in flight at once.
    let r = run(spec(Kind::Udp, &echo.addr().to_string(), 2, 150, 1000));
    echo.shutdown();
    let sum = r.summary();
    assert_eq!((sum.n, sum.replies), (150, 150));
    let p50 = sum.rtt.median_ms.expect("a median");
    assert!(p50 >= 15.0, "p50 {p50} ms, the echo holds 15 ms");
    assert!(sum.rtt.min_ms.expect("a min") >= 15.0);
}

#[test]
fn udp_replies_read_at_the_next_send_are_timed_by_their_arrival() {
    // Every 80 ms: the probe reads each reply just before its next send, up to 80 ms after it came;
    // the round trip is the kernel's arrival stamp less the send time, not the time of the read.
    let echo = udp_echo::start(UdpEchoConfig::default()).expect("echo starts");
    let r = run(spec(Kind::Udp, &echo.addr().to_string(), 80, 8, 1000));
    echo.shutdown();
    let sum = r.summary();
    assert_eq!((sum.n, sum.replies), (8, 8));
    let p50 = sum.rtt.median_ms.expect("a median");
    assert!(p50 < 40.0, "p50 {p50} ms: the time of the read, not of the arrival");
}

#[test]
fn a_target_that_stops_answering_gives_timeouts_as_loss_and_the_run_goes_on() {
    // An echo that answers the first 20 datagrams, then keeps its socket open and says nothing.
    let sock = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let addr = sock.local_addr().expect("addr");
    sock.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
    let echo = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        for _ in 0..20 {
            let (n, peer) = sock.recv_from(&mut buf).expect("a probe");
            sock.send_to(&buf[..n], peer).expect("echo");
        }
        sock
    });
    let r = run(spec(Kind::Udp, &addr.to_string(), 5, 40, 100));
    let _silent = echo.join().expect("echo thread");
    let sum = r.summary();
    assert_eq!((sum.n, sum.replies, sum.timeouts), (40, 20, 20));
    assert_eq!(sum.loss_pct, Some(50.0));
    assert!(r.samples[..20].iter().all(|s| s.outcome.rtt().is_some()));
    assert!(
        r.samples[20..].iter().all(|s| s.outcome == Outcome::Timeout),
        "every later probe is a loss, none is missing"
    );
}

#[test]
fn an_http_target_that_stalls_gives_timeouts_then_replies_again() {
    // Every response is held from 0.4 s to 1.4 s after the server starts.
    let s = serve::start(ServeConfig {
        threads: 1,
        stall: Some(Stall {
            at: ms(400),
            length: ms(1000),
        }),
        ..ServeConfig::default()
    })
    .expect("serve starts");
    let mut p = spec(Kind::Http, &format!("http://{}/", s.addr()), 50, 10_000, 150);
    p.count = None;
    p.duration = Some(ms(2500));
    let r = run(p);
    s.shutdown().expect("shutdown");
    let first_timeout = r
        .samples
        .iter()
        .position(|s| s.outcome == Outcome::Timeout)
        .expect("timeouts in the stall");
    assert!(
        r.samples[..first_timeout].iter().any(|s| s.outcome.rtt().is_some()),
        "replies before the stall"
    );
    assert!(
        r.samples[first_timeout..].iter().any(|s| s.outcome.rtt().is_some()),
        "replies after the stall"
    );
    let sum = r.summary();
    assert!(sum.timeouts >= 3 && sum.loss_pct.unwrap() > 0.0, "{sum:?}");
    assert_eq!(sum.n, sum.replies + sum.timeouts + sum.errors + sum.failed);
}

#[test]
fn a_command_that_exits_non_zero_is_failed_with_its_status() {
    let mut p = ProbeSpec::shell("exit 3");
    p.interval = ms(5);
    p.count = Some(3);
    let r = run(p);
    let sum = r.summary();
    assert_eq!((sum.n, sum.failed, sum.replies), (3, 3, 0));
    assert_eq!(sum.loss_pct, Some(0.0), "an answer that failed is not a loss");
    assert!(
        r.samples.iter().all(|s| matches!(s.outcome, Outcome::Failed { status: 3, .. })),
        "{:?}",
        r.samples
    );

    let mut p = ProbeSpec::argv(vec!["true".into()]);
    p.interval = ms(5);
    p.count = Some(3);
    assert_eq!(run(p).summary().replies, 3);

    // A command still running at the timeout is killed and is a loss.
    let mut p = ProbeSpec::argv(vec!["sleep".into(), "30".into()]);
    p.interval = ms(5);
    p.count = Some(2);
    p.timeout = ms(100);
    let t0 = std::time::Instant::now();
    let r = run(p);
    assert_eq!(r.summary().timeouts, 2);
    assert!(t0.elapsed() < Duration::from_secs(20), "the sleeps were killed at their timeout");
}

#[test]
fn icmp_probe_as_root_gets_replies_from_127_0_0_1() {
    let mut p = spec(Kind::Icmp, "127.0.0.1", 5, 20, 1000);
    p.icmp_socket = IcmpSocket::Raw;
    let running = match ProbeSet::start(vec![p], Arc::new(|| PhaseTag::new("test"))) {
        Ok(r) => r,
        Err(e) => {
            crate::common::skip_unless_required(&format!(
                "icmp raw-socket test: no raw socket here (not root / no CAP_NET_RAW): {e}"
            ));
            return;
        }
    };
    assert!(running.wait_finished(Duration::from_secs(60)));
    let r = running.stop().pop().expect("a result");
    assert!(r.detail.contains("raw socket"), "{}", r.detail);
    let sum = r.summary();
    assert_eq!((sum.n, sum.replies), (20, 20), "{:?}", r.samples);
    assert_eq!(sum.traffic.bytes_out, 20 * 64, "ping's 64-byte ICMP messages");
}

/// Restores net.ipv4.ping_group_range when dropped.
struct RangeGuard(String);

impl Drop for RangeGuard {
    fn drop(&mut self) {
        if let Err(e) = std::fs::write(RANGE, &self.0) {
            eprintln!("could not restore {RANGE} to {:?}: {e}", self.0);
        }
    }
}

const RANGE: &str = "/proc/sys/net/ipv4/ping_group_range";

fn icmp_cli(args: &[&str], as_nobody: bool) -> std::process::Output {
    let bin = env!("CARGO_BIN_EXE_perflab");
    let mut c = if as_nobody {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", bin]);
        c
    } else {
        Command::new(bin)
    };
    c.args(["probe", "icmp", "127.0.0.1", "-c", "3", "-i", "10ms"]).args(args);
    c.output().expect("run perflab probe")
}

#[test]
fn icmp_without_privilege_is_one_line_naming_the_sysctl_and_the_datagram_socket_works_where_allowed() {
    // Both halves in one test: the second one changes the sysctl the first one reads.
    let Ok(before) = std::fs::read_to_string(RANGE) else {
        crate::common::skip_unless_required(&format!("{RANGE} is not readable here"));
        return;
    };
    let range: Vec<u64> = before.split_whitespace().filter_map(|v| v.parse().ok()).collect();
    let nobody_allowed = range.len() == 2 && range[0] <= 65534 && 65534 <= range[1];
    if Command::new("setpriv").arg("--version").output().is_err() {
        crate::common::skip_unless_required("the unprivileged half: no setpriv to run as nobody (Debian package `util-linux`)");
    } else {
        // Really unprivileged: uid and gid 65534, no capabilities.
        let out = icmp_cli(&[], true);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if nobody_allowed {
            eprintln!("NOTE: {RANGE} ({}) lets nobody open an ICMP datagram socket", before.trim());
            assert_eq!(out.status.code(), Some(0), "{stderr}");
            assert!(String::from_utf8_lossy(&out.stdout).contains("datagram socket"));
        } else {
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
            assert!(
                stderr.contains("net.ipv4.ping_group_range") && stderr.contains("sysctl -w"),
                "{stderr}"
            );
            assert!(out.stdout.is_empty());
        }
    }
    // The datagram socket as root: allowed when the range holds group 0, refused otherwise.
    let _restore = RangeGuard(before.clone());
    for (set, works) in [("1 0", false), ("0 0", true)] {
        if let Err(e) = std::fs::write(RANGE, set) {
            crate::common::skip_unless_required(&format!("the datagram-socket half: cannot write {RANGE}: {e}"));
            return;
        }
        let out = icmp_cli(&["--icmp-socket", "datagram"], false);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if works {
            assert_eq!(out.status.code(), Some(0), "{stderr}");
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(stdout.contains("datagram socket") && stdout.contains("3 replies"), "{stdout}");
        } else {
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(
                stderr.contains("net.ipv4.ping_group_range") && !stderr.contains("raw socket"),
                "{stderr}"
            );
        }
    }
}

#[test]
fn cli_udp_against_serve_udp_echo_prints_json_and_exits_0() {
    let mut server = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["serve", "--port", "0", "--threads", "1", "--udp-echo", "0", "--udp-hold", "2"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn serve");
    let mut lines = BufReader::new(server.stdout.take().expect("stdout")).lines();
    let _http = lines.next().expect("the http line").expect("read");
    let udp = lines.next().expect("the udp line").expect("read");
    let addr = udp.rsplit(' ').next().expect("an address").to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["probe", "udp", &addr, "-c", "20", "-i", "5ms", "--json"])
        .output()
        .expect("run probe");
    // Stop the server we started, by its pid.
    let _ = Command::new("kill").arg(server.id().to_string()).status();
    let _ = server.wait();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["schema"], "perflab.probe/1");
    assert_eq!(v["summary"]["n"], 20);
    assert_eq!(v["summary"]["replies"], 20);
    assert!(v["summary"]["rtt"]["min_ms"].as_f64().expect("a min") >= 2.0, "the echo holds 2 ms");
    assert_eq!(v["samples"].as_array().expect("samples").len(), 20);
    assert_eq!(v["by_phase"]["probe"]["n"], 20);
}

#[test]
fn cli_bad_input_is_one_line_and_exit_2() {
    for args in [
        &["probe", "smtp", "x"][..],
        &["probe", "tcp", "127.0.0.1"],
        &["probe", "tcp", "127.0.0.1:1", "--interval", "fast"],
        &["probe", "tcp", "127.0.0.1:1", "two"],
        &["probe", "command", "--", "/nonexistent/program"],
        &["probe", "http", "ftp://127.0.0.1/"],
        &["probe", "udp", "127.0.0.1:9", "--size", "3"],
        &["serve", "--udp-drop-every", "3"],
    ] {
        // -c 1: a case that wrongly starts still ends.
        let bound: &[&str] = if args[0] == "probe" { &["-c", "1", "-W", "100ms"] } else { &[] };
        let out = Command::new(env!("CARGO_BIN_EXE_perflab"))
            .arg(args[0])
            .args(bound)
            .args(&args[1..])
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn cli_ctrl_c_ends_with_the_summary_and_exit_130() {
    let s = serve::start(ServeConfig {
        threads: 1,
        ..ServeConfig::default()
    })
    .expect("serve");
    let mut child = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["probe", "tcp", &s.addr().to_string(), "-i", "10ms"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn probe");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("header");
    assert!(line.starts_with("PROBE tcp"), "{line}");
    line.clear();
    out.read_line(&mut line).expect("a live line");
    assert!(line.starts_with("seq=0 time="), "{line}");
    let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).expect("the rest");
    let status = child.wait().expect("exit");
    s.shutdown().expect("shutdown");
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(rest.contains("--- tcp ") && rest.contains("loss"), "{rest}");
}

/// The https probe's handshake, request and response run non-blocking on the probes' shared
/// thread: against perflab serve with the test certificate, trusted through --cacert, each GET is a
/// reply whose parts add up and include the handshake; without the certificate trusted, an error.
#[test]
fn https_probes_shake_hands_without_blocking_and_an_untrusted_certificate_is_an_error() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tls");
    let server = serve::start(serve::ServeConfig {
        threads: 1,
        tls: Some((dir.join("localhost.crt"), dir.join("localhost.key"))),
        ..serve::ServeConfig::default()
    })
    .unwrap();
    let url = format!("https://localhost:{}/", server.addr().port());
    let mut trusted = spec(Kind::Http, &url, 5, 3, 30_000);
    trusted.cacert = Some(dir.join("localhost.crt").to_string_lossy().into_owned());
    let untrusted = spec(Kind::Http, &url, 5, 1, 30_000);
    let running = ProbeSet::start(vec![trusted, untrusted], Arc::new(|| PhaseTag::new("t"))).unwrap();
    assert!(running.wait_finished(Duration::from_secs(120)));
    let r = running.stop();
    assert_eq!(r[0].samples.len(), 3);
    for s in &r[0].samples {
        assert!(matches!(s.outcome, Outcome::Reply { .. }), "{:?}", s.outcome);
        assert!(s.parts.get(2) > Some(Duration::ZERO), "a handshake takes time: {:?}", s.parts);
        assert_eq!(s.parts.iter().sum::<Duration>(), s.outcome.rtt().unwrap());
        assert!(
            s.traffic.bytes_in > 300,
            "the server's handshake and response came: {:?}",
            s.traffic
        );
    }
    match &r[1].samples[0].outcome {
        Outcome::Error(e) => assert!(e.starts_with("tls: "), "{e}"),
        o => panic!("an untrusted certificate: {o:?}"),
    }
    server.shutdown().unwrap();
}
