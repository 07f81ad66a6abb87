//! `perflab serve --udp-echo PORT`: a UDP echo (every datagram sent back unchanged to its sender),
//! the target of `perflab probe udp`. Testing aids: drop every Nth datagram (`drop_every`), hold
//! each reply for a while (`hold`) without delaying the datagrams behind it.

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// At most this many replies are held at once; beyond it a datagram is dropped (and counted).
pub const MAX_HELD: usize = 100_000;

#[derive(Clone, Debug)]
pub struct UdpEchoConfig {
    pub host: IpAddr,
    /// 0 = pick a free port.
    pub port: u16,
    /// Testing aid: drop the Nth, 2Nth, ... datagram received (counting from 1).
    pub drop_every: Option<u64>,
    /// Testing aid: send each reply this long after its datagram came.
    pub hold: Duration,
}

impl Default for UdpEchoConfig {
    fn default() -> UdpEchoConfig {
        UdpEchoConfig {
            host: IpAddr::from([127, 0, 0, 1]),
            port: 0,
            drop_every: None,
            hold: Duration::ZERO,
        }
    }
}

/// What the echo did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EchoCounts {
    pub received: u64,
    pub echoed: u64,
    pub dropped: u64,
}

#[derive(Default)]
struct Counters {
    received: AtomicU64,
    echoed: AtomicU64,
    dropped: AtomicU64,
}

impl Counters {
    fn get(&self) -> EchoCounts {
        EchoCounts {
            received: self.received.load(Ordering::Relaxed),
            echoed: self.echoed.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
        }
    }
}

/// A running echo.
pub struct UdpEchoHandle {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    counters: Arc<Counters>,
    thread: Option<JoinHandle<()>>,
}

/// Bind and start echoing on a background thread; returns once the socket is bound.
pub fn start(cfg: UdpEchoConfig) -> anyhow::Result<UdpEchoHandle> {
    if cfg.drop_every == Some(0) {
        return Err(crate::error::usage("--udp-drop-every must be at least 1"));
    }
    let sock = UdpSocket::bind((cfg.host, cfg.port))
        .map_err(|e| crate::error::usage(format!("cannot listen on udp {}:{}: {e}", cfg.host, cfg.port)))?;
    let addr = sock.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let counters = Arc::new(Counters::default());
    let (s, c) = (stop.clone(), counters.clone());
    let thread = std::thread::Builder::new()
        .name("udp-echo".into())
        .spawn(move || echo(sock, cfg, &s, &c))?;
    Ok(UdpEchoHandle {
        addr,
        stop,
        counters,
        thread: Some(thread),
    })
}

impl UdpEchoHandle {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn counts(&self) -> EchoCounts {
        self.counters.get()
    }

    /// Stop (held replies are not sent) and join the thread; returns what it did.
    pub fn shutdown(mut self) -> EchoCounts {
        self.halt();
        self.counters.get()
    }

    fn halt(&mut self) {
        let Some(thread) = self.thread.take() else { return };
        self.stop.store(true, Ordering::SeqCst);
        // Wake the receive with an empty datagram to ourselves.
        let local: SocketAddr = match self.addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => ([127, 0, 0, 1], self.addr.port()).into(),
            IpAddr::V6(ip) if ip.is_unspecified() => (std::net::Ipv6Addr::LOCALHOST, self.addr.port()).into(),
            _ => self.addr,
        };
        let from: SocketAddr = if local.is_ipv4() {
            ([127, 0, 0, 1], 0).into()
        } else {
            (std::net::Ipv6Addr::LOCALHOST, 0).into()
        };
        if let Ok(s) = UdpSocket::bind(from) {
            let _ = s.send_to(&[], local);
        }
        let _ = thread.join();
    }
}

impl Drop for UdpEchoHandle {
    fn drop(&mut self) {
        self.halt();
    }
}

fn echo(sock: UdpSocket, cfg: UdpEchoConfig, stop: &AtomicBool, c: &Counters) {
    let mut buf = vec![0u8; 65_536];
    let mut held: VecDeque<(Instant, SocketAddr, Vec<u8>)> = VecDeque::new();
    // The receive also wakes every 200 ms, so a lost wake-up datagram still ends the loop.
    let idle = Duration::from_millis(200);
    while !stop.load(Ordering::SeqCst) {
        let now = Instant::now();
        while held.front().is_some_and(|h| h.0 <= now) {
            if let Some((_, peer, data)) = held.pop_front() {
                if sock.send_to(&data, peer).is_ok() {
                    c.echoed.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        let wait = held
            .front()
            .map_or(idle, |h| h.0.saturating_duration_since(now).clamp(Duration::from_micros(1), idle));
        let _ = sock.set_read_timeout(Some(wait));
        let (n, peer) = match sock.recv_from(&mut buf) {
            Ok(x) => x,
            Err(_) => continue,
        };
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let k = c.received.fetch_add(1, Ordering::Relaxed) + 1;
        if cfg.drop_every.is_some_and(|d| k.is_multiple_of(d)) || (!cfg.hold.is_zero() && held.len() >= MAX_HELD) {
            c.dropped.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        if cfg.hold.is_zero() {
            if sock.send_to(&buf[..n], peer).is_ok() {
                c.echoed.fetch_add(1, Ordering::Relaxed);
            }
        } else {
            held.push_back((Instant::now() + cfg.hold, peer, buf[..n].to_vec()));
        }
    }
}
