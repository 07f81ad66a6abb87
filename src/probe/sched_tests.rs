//! The probe scheduler's tests: probes sharing its thread.

use crate::probe::{Kind, Outcome, PhaseTag, ProbeSet, ProbeSpec};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn spec(kind: Kind, target: &str, count: u64, timeout: Duration) -> ProbeSpec {
    let mut s = ProbeSpec::new(kind, target);
    s.interval = Duration::from_millis(5);
    s.count = Some(count);
    s.timeout = timeout;
    s
}

#[test]
fn a_server_that_never_answers_holds_up_no_other_probe_on_the_shared_thread() {
    // Connects succeed through the listeners' backlogs; the http one is never answered.
    let open = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    // An echo for the udp probe, until its socket's 10 s timeout after the last datagram.
    let echo = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let echo_addr = echo.local_addr().unwrap();
    echo.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        while let Ok((n, from)) = echo.recv_from(&mut buf) {
            let _ = echo.send_to(&buf[..n], from);
        }
    });
    let specs = vec![
        spec(
            Kind::Http,
            &format!("http://{}/", silent.local_addr().unwrap()),
            1,
            Duration::from_secs(600),
        ),
        spec(Kind::Tcp, &open.local_addr().unwrap().to_string(), 20, Duration::from_secs(30)),
        spec(Kind::Udp, &echo_addr.to_string(), 20, Duration::from_secs(30)),
    ];
    let seen = Arc::new(Mutex::new([0u64; 3]));
    let s = seen.clone();
    let observer: crate::probe::Observer = Arc::new(move |i, _| s.lock().unwrap()[i] += 1);
    let running = ProbeSet::open(specs)
        .unwrap()
        .run(Arc::new(|| PhaseTag::new("t")), Some(observer))
        .unwrap();
    // The tcp and udp probes reach their counts while the GET waits (its timeout is 10 minutes).
    for _ in 0..6000 {
        if seen.lock().unwrap()[1..] == [20, 20] {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(*seen.lock().unwrap(), [0, 20, 20]);
    let r = running.abort();
    assert!(r[0].samples.is_empty(), "the GET in flight at the abort is no sample");
    for p in &r[1..] {
        assert_eq!(p.samples.len(), 20, "{}", p.spec.label());
        assert!(
            p.samples.iter().all(|s| matches!(s.outcome, Outcome::Reply { .. })),
            "{:?}",
            p.samples
        );
    }
}
