//! Truth tests of `perflab http`, on loopback against `perflab serve`: each test checks one promise
//! of the load generator (counts, latencies, rates, exit codes) against a known answer. The tests of this file run one at a time (a lock), so that
//! their timing-sensitive lines (the 20 ms delay, the 500 ms stall) do not compete with each other.

use perflab::serve::{self, Delay, Model, ServeConfig, ServerHandle, Stall};
use perflab::util::Cancel;
use perflab::workload::http::{self, HttpConfig, HttpReport, Stats};
use perflab::workload::result::latency_histogram;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

fn server(f: impl FnOnce(&mut ServeConfig)) -> ServerHandle {
    let mut cfg = ServeConfig {
        threads: 1,
        ..ServeConfig::default()
    };
    f(&mut cfg);
    serve::start(cfg).expect("perflab serve starts on loopback")
}

fn load(s: &ServerHandle, f: impl FnOnce(&mut HttpConfig)) -> HttpReport {
    load_on(s, false, f)
}

/// `load` on the epoll engine, or on the io_uring one (`perflab http --engine uring`).
fn load_on(s: &ServerHandle, uring: bool, f: impl FnOnce(&mut HttpConfig)) -> HttpReport {
    let mut cfg = HttpConfig::new(&format!("http://{}/", s.addr()));
    cfg.connections = 4;
    cfg.threads = Some(2);
    cfg.timeout = Some("10s".into());
    f(&mut cfg);
    let mut prepared = http::prepare(&cfg).expect("valid configuration");
    prepared.uring = uring;
    http::run(&prepared, Duration::ZERO, &Cancel::new(), &mut || {}, &mut |_, _| {}).expect("the run completes")
}

fn ms(h: &hdrhistogram::Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / 1000.0
}

#[test]
fn a_20ms_delay_gives_a_p50_between_20_and_40_ms() {
    let _g = lock();
    let s = server(|c| c.delay = Delay::Fixed(Duration::from_millis(20)));
    let r = load(&s, |c| c.requests = Some(200));
    s.shutdown().expect("shutdown");
    assert_eq!((r.stats.responses, r.errors()), (200, 0));
    let p50 = ms(&r.stats.latency, 0.5);
    assert!((20.0..40.0).contains(&p50), "p50 = {p50} ms");
}

#[test]
fn n_1000_counts_exactly_1000_on_both_sides() {
    let _g = lock();
    for keepalive in [true, false] {
        let s = server(|_| {});
        let r = load(&s, |c| {
            c.requests = Some(1000);
            c.keepalive = keepalive;
        });
        let served = s.shutdown().expect("shutdown").responses;
        assert_eq!(r.stats.responses, 1000, "client count, keepalive={keepalive}");
        assert_eq!(r.errors(), 0, "keepalive={keepalive}: {:?}", r.error_counts());
        assert_eq!(r.status_counts(), vec![(200, 1000)]);
        assert_eq!(r.stats.latency.len(), 1000);
        assert_eq!(served, 1000, "server count, keepalive={keepalive}");
        if !keepalive {
            // A connection per request, and none of them is a reconnect after a failure.
            assert!(r.stats.connections_opened >= 1000, "opened {}", r.stats.connections_opened);
        }
    }
}

#[test]
fn open_model_through_a_500ms_stall_separates_intended_from_service_time() {
    let _g = lock();
    let s = server(|c| {
        c.stall = Some(Stall {
            at: Duration::from_millis(1000),
            length: Duration::from_millis(500),
        })
    });
    let r = load(&s, |c| {
        c.rate = Some(200.0);
        c.duration = Some("3s".into());
    });
    s.shutdown().expect("shutdown");
    assert_eq!(r.errors(), 0, "{:?}", r.error_counts());
    let intended = ms(&r.stats.latency, 0.99);
    let service = ms(&r.stats.service, 0.99);
    assert!(intended >= 400.0, "intended-time p99 = {intended} ms");
    assert!(service < 400.0, "service-time p99 = {service} ms");
    assert!(r.stats.late > 0, "late sends: {}", r.stats.late);
    let j = r.json();
    assert_eq!(j["open_model"]["late"], r.stats.late);
}

#[test]
fn a_server_closing_every_10_requests_loses_and_doubles_nothing() {
    let _g = lock();
    for model in [Model::EventLoop, Model::ThreadPerConnection] {
        let s = server(|c| {
            c.close_after = Some(10);
            c.model = model;
        });
        let r = load(&s, |c| c.requests = Some(1000));
        let served = s.shutdown().expect("shutdown").responses;
        assert_eq!(r.errors(), 0, "{model:?}: {:?}", r.error_counts());
        assert_eq!(r.stats.responses, 1000, "{model:?}: client count");
        assert_eq!(served, 1000, "{model:?}: server count");
        // 1000 responses, 10 per connection: at least 96 closes beyond the first 4 connections.
        assert!(r.stats.reconnects >= 96, "{model:?}: reconnects {}", r.stats.reconnects);
        assert!(
            r.stats.connections_opened >= 100,
            "{model:?}: opened {}",
            r.stats.connections_opened
        );
    }
}

/// `perflab serve --port 0` as a child; returns it and its address.
fn serve_child() -> (std::process::Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["serve", "--port", "0", "--threads", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn perflab serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the address line");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .expect("a URL on the first line")
        .to_string();
    (child, url)
}

#[test]
fn a_server_killed_mid_run_gives_classified_errors_a_summary_and_exit_1() {
    let _g = lock();
    let (mut target, url) = serve_child();
    let client = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["http", &url, "-c", "4", "-d", "3s", "--quiet", "--timeout", "2s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn perflab http");
    std::thread::sleep(Duration::from_millis(1000));
    target.kill().expect("kill the target");
    let _ = target.wait();
    // Bounded wait for the client (its run lasts 3 s).
    let started = Instant::now();
    let mut client = client;
    let status = loop {
        if let Some(st) = client.try_wait().expect("wait") {
            break st;
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = client.kill();
            panic!("perflab http did not finish");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut out = String::new();
    client.stdout.take().expect("stdout").read_to_string(&mut out).expect("read stdout");
    let mut err = String::new();
    client.stderr.take().expect("stderr").read_to_string(&mut err).expect("read stderr");
    assert_eq!(status.code(), Some(1), "exit code; stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("Complete requests:"), "no summary:\n{out}");
    assert!(out.contains("Percentage of the requests served within"), "no latency table:\n{out}");
    // Reconnecting to a dead port is refused, and each refusal is named with its first example.
    assert!(out.contains("connect_refused:"), "no connect_refused line:\n{out}");
    let complete: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("Complete requests:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("a count of complete requests");
    assert!(complete > 0, "requests before the kill were answered");
}

#[test]
fn two_workers_histograms_merged_equal_one_histogram_of_all_values() {
    // Values spread over the whole range (1 µs .. 1 h), from a fixed-seed generator.
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut values = Vec::new();
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let exp = x % 32; // 2^0 .. 2^31 µs
        values.push(1 + (x >> 32) % (1u64 << exp));
    }
    let (mut a, mut b, mut all) = (Stats::new(), Stats::new(), latency_histogram());
    for (i, v) in values.iter().enumerate() {
        let w = if i % 3 == 0 { &mut a } else { &mut b };
        w.latency.record(*v).expect("in range");
        w.responses += 1;
        all.record(*v).expect("in range");
    }
    let mut merged = Stats::new();
    merged.merge(&a);
    merged.merge(&b);
    assert_eq!(merged.responses, values.len() as u64);
    assert_eq!(merged.latency.len(), all.len());
    assert_eq!((merged.latency.min(), merged.latency.max()), (all.min(), all.max()));
    for q in [0.0, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
        assert_eq!(merged.latency.value_at_quantile(q), all.value_at_quantile(q), "q = {q}");
    }
    // Bucket by bucket.
    let counts = |h: &hdrhistogram::Histogram<u64>| {
        h.iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect::<Vec<_>>()
    };
    assert_eq!(counts(&merged.latency), counts(&all));
    assert!(merged.latency == all);
}

#[test]
fn hdr_log_parses_back_and_holds_every_completed_request() {
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;
    let _g = lock();
    let s = server(|c| c.delay = Delay::Fixed(Duration::from_millis(1)));
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("latency.hlog");
    let out = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args([
            "http",
            &format!("http://{}/", s.addr()),
            "-c",
            "4",
            "-d",
            "2500ms",
            "--json",
            "--hdr-log",
        ])
        .arg(&path)
        .output()
        .expect("run perflab http");
    s.shutdown().expect("shutdown");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let completed = j["requests"].as_u64().expect("requests");
    assert!(completed > 0);

    let text = std::fs::read(&path).expect("the log");
    let (mut total, mut intervals, mut base, mut last_ts) = (0u64, 0, None, -1.0);
    let mut de = Deserializer::new();
    for entry in IntervalLogIterator::new(&text) {
        match entry.expect("a valid interval log line") {
            LogEntry::BaseTime(t) => base = Some(t),
            LogEntry::StartTime(_) => {}
            LogEntry::Interval(iv) => {
                let ts = iv.start_timestamp().as_secs_f64();
                assert!(ts > last_ts, "intervals in time order");
                last_ts = ts;
                assert!(iv.duration().as_secs_f64() <= 1.0 + 1e-9, "1 s intervals");
                let bytes = base64_decode(iv.encoded_histogram());
                let h: hdrhistogram::Histogram<u64> = de.deserialize(&mut &bytes[..]).expect("a V2 histogram");
                total += h.len();
                intervals += 1;
            }
        }
    }
    assert!(base.is_some(), "a BaseTime header");
    assert!(intervals >= 3, "2.5 s gives at least 3 intervals, got {intervals}");
    assert_eq!(total, completed, "the log's total count equals the requests completed");
}

/// Standard base64 (the log's histogram encoding), decoded here to keep the test self-contained.
fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    } as u32;
    let bytes: Vec<u8> = s.bytes().filter(|c| *c != b'=').collect();
    let mut out = Vec::new();
    for chunk in bytes.chunks(4) {
        let mut acc = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            acc |= val(*c) << (18 - 6 * i);
        }
        let n = chunk.len() * 6 / 8;
        for i in 0..n {
            out.push((acc >> (16 - 8 * i)) as u8);
        }
    }
    out
}

fn kinds(r: &HttpReport) -> Vec<&'static str> {
    r.warnings.iter().map(|w| w.kind).collect()
}

#[test]
fn self_diagnosis_reports_cpu_per_request_and_warns_when_behind_or_sharing_cores() {
    let _g = lock();
    // Each response takes 20 ms and one connection is allowed: at most 50 req/s can be served, so an
    // open model at 200 req/s must fall behind.
    let s = server(|c| c.delay = Delay::Fixed(Duration::from_millis(20)));
    let r = load(&s, |c| {
        c.rate = Some(200.0);
        c.duration = Some("1s".into());
        c.connections = 1;
        c.threads = Some(1);
    });
    let closed = load(&s, |c| c.requests = Some(20));
    s.shutdown().expect("shutdown");
    assert!(r.stats.late * 100 > r.stats.scheduled || r.stats.dropped > 0);
    assert!(kinds(&r).contains(&"client_behind_schedule"), "{:?}", r.warnings);
    // The target runs inside this test process, on the same CPUs.
    assert!(kinds(&r).contains(&"shares_cores_with_target"), "{:?}", r.warnings);
    assert!(!kinds(&closed).contains(&"client_behind_schedule"), "{:?}", closed.warnings);
    let c = closed.cpu_us_per_request().expect("CPU per request");
    assert!(c > 0.0);
    let j = r.json();
    assert!(j["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .any(|w| w["kind"] == "client_behind_schedule"));
    assert!(r.summary().contains("WARNING:"));
    assert!(closed.summary().contains("µs per request"));
    assert_eq!(closed.json()["client_cpu_us_per_request"].as_f64(), Some(c));
}

#[test]
fn a_client_thread_near_100_percent_is_reported_as_the_bottleneck() {
    // No server: the report is built directly, as the engine would, with measured thread loads.
    let cfg = http::prepare(&HttpConfig::new("http://127.0.0.1:9/")).expect("valid");
    let mut r = HttpReport::new(
        &cfg,
        Stats::new(),
        Vec::new(),
        Duration::from_secs(10),
        Duration::from_secs(1),
        false,
    );
    r.thread_busy = vec![0.5, 0.97];
    assert!(http::diagnose(&cfg, &r).iter().any(|w| w.kind == "client_cpu_bound"));
    r.thread_busy = vec![0.5, 0.4];
    assert!(!http::diagnose(&cfg, &r).iter().any(|w| w.kind == "client_cpu_bound"));
}

#[test]
fn exit_codes_follow_the_documented_rule() {
    let _g = lock();
    let bin = env!("CARGO_BIN_EXE_perflab");
    // 2: bad input, one line, nothing sent.
    for args in [
        &["http", "not-a-url", "-n", "1"][..],
        &["http", "http://127.0.0.1:9/"][..],
        &["http", "http://127.0.0.1:9/", "-n", "1", "--rate", "-3"][..],
    ] {
        let out = Command::new(bin).args(args).output().expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err:?}");
    }
    // 0: every request answered, even with HTTP 500s (they are responses).
    let s = server(|c| c.fail_rate = 1.0);
    let url = format!("http://{}/", s.addr());
    let out = Command::new(bin).args(["http", &url, "-n", "50", "-q"]).output().expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("status 500: 50"));
    // 130: interrupted, with the summary still printed.
    let child = Command::new(bin)
        .args(["http", &url, "-d", "60s", "-q", "-c", "2"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(Duration::from_millis(700));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT).expect("SIGINT");
    let out = child.wait_with_output().expect("wait");
    s.shutdown().expect("shutdown");
    assert_eq!(out.status.code(), Some(130));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(interrupted)") && text.contains("Complete requests:"), "{text}");
}

#[test]
fn busy_polling_counts_the_same_and_keeps_its_polling_apart_from_work() {
    let _g = lock();
    let s = server(|c| c.delay = Delay::Fixed(Duration::from_millis(2)));
    let r = load(&s, |c| {
        c.requests = Some(200);
        c.connections = 1;
        c.threads = Some(1);
        c.busy_poll = true;
    });
    let served = s.shutdown().expect("shutdown").responses;
    assert_eq!((r.stats.responses, r.errors(), served), (200, 0, 200));
    assert!(ms(&r.stats.latency, 0.5) >= 2.0, "p50 {} ms", ms(&r.stats.latency, 0.5));
    // Every request waited 2 ms for the server, which the worker spent polling for nothing: that time
    // is reported apart, and the busy figure leaves it out.
    assert!(r.stats.spin > Duration::from_millis(200), "spin {:?}", r.stats.spin);
    assert!(!kinds(&r).contains(&"client_cpu_bound"), "{:?}", r.warnings);
    let j = r.json();
    assert_eq!(j["busy_poll"], true);
    assert!(j["client_spin_s"].as_f64().expect("client_spin_s") > 0.2);
    // The tokio path (HTTPS, HTTP/2) does not poll: asking for it there is a usage error.
    let mut cfg = HttpConfig::new("http://127.0.0.1:9/");
    cfg.http2 = true;
    cfg.busy_poll = true;
    let e = http::prepare(&cfg).expect_err("refused").to_string();
    assert!(
        e.contains("busy polling (--busy-poll; busy_poll in a plan) works with plain HTTP/1.1 only"),
        "{e}"
    );
}

#[test]
fn the_io_uring_engine_counts_exactly_what_the_server_served() {
    if let Err(e) = http::uring_permitted() {
        crate::common::skip_unless_required(&format!("this process may not use io_uring ({e})"));
        return;
    }
    let _g = lock();
    // Keep-alive; a connection per request; a server closing every 10th response (the multishot
    // receive of each dropped socket ends, the new one gets its own).
    for (keepalive, close_after) in [(true, None), (false, None), (true, Some(10))] {
        let s = server(|c| c.close_after = close_after);
        let r = load_on(&s, true, |c| {
            c.requests = Some(1000);
            c.keepalive = keepalive;
        });
        let served = s.shutdown().expect("shutdown").responses;
        let what = format!("keepalive={keepalive} close_after={close_after:?}");
        assert_eq!(r.errors(), 0, "{what}: {:?}", r.error_counts());
        assert_eq!((r.stats.responses, served), (1000, 1000), "{what}: client and server counts");
        assert_eq!(r.status_counts(), vec![(200, 1000)], "{what}");
        assert_eq!(r.stats.latency.len(), 1000, "{what}");
        if close_after.is_some() {
            assert!(r.stats.reconnects >= 96, "{what}: reconnects {}", r.stats.reconnects);
        }
    }
    // The open model: 300 sends at 600/s, each recorded from its intended time, and served once.
    let s = server(|_| {});
    let r = load_on(&s, true, |c| {
        c.requests = Some(300);
        c.rate = Some(600.0);
    });
    let served = s.shutdown().expect("shutdown").responses;
    assert_eq!((r.stats.scheduled, r.stats.responses, served, r.errors()), (300, 300, 300, 0));
    assert_eq!((r.stats.latency.len(), r.stats.service.len()), (300, 300));
    // HTTPS and HTTP/2 do not run on io_uring: one line, exit 2, nothing sent.
    let out = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["http", "--engine", "uring", "-n", "1", "https://127.0.0.1:9/"])
        .output()
        .expect("run perflab http");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim(),
        "perflab: error: --engine uring: only plain HTTP/1.1 runs on io_uring (not https:// or --http2)"
    );
}
