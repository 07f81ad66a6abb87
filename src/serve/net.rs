//! `perflab serve --net PORT`: the server half of `perflab load net`. TCP on PORT, one thread per
//! connection, each connection saying what it is for in its header (`util::netwire`): counting an
//! upload, sending a download, echoing round trips, or closing a UDP test; and UDP on the same port
//! number, accounting each test's datagrams. Testing aid: `drop_every` drops every Nth datagram
//! received (counting from 1), before it is accounted.

use crate::util::netwire::{now_ns, Datagram, Header, Mode, UdpAccount, HEADER_LEN};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct NetServeConfig {
    pub host: IpAddr,
    /// 0 = a free port (the same number is then bound for UDP).
    pub port: u16,
    /// Testing aid: drop every Nth UDP datagram.
    pub drop_every: Option<u64>,
}

/// What the server did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetCounts {
    pub connections: u64,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    pub datagrams: u64,
    pub dropped: u64,
}

#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    connections: AtomicU64,
    received: AtomicU64,
    sent: AtomicU64,
    datagrams: AtomicU64,
    dropped: AtomicU64,
    sessions: Mutex<HashMap<u64, UdpAccount>>,
}

pub struct NetServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl NetServer {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stop accepting and receiving; connections still open end on their own.
    pub fn shutdown(mut self) -> NetCounts {
        self.shared.stop.store(true, Ordering::Relaxed);
        // Wake the blocking accept.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        let s = &self.shared;
        NetCounts {
            connections: s.connections.load(Ordering::Relaxed),
            bytes_received: s.received.load(Ordering::Relaxed),
            bytes_sent: s.sent.load(Ordering::Relaxed),
            datagrams: s.datagrams.load(Ordering::Relaxed),
            dropped: s.dropped.load(Ordering::Relaxed),
        }
    }
}

/// The net server's configuration from `--net PORT` and `--net-drop-every N`, if asked for.
pub fn config(host: IpAddr, port: Option<u16>, drop_every: Option<u64>) -> anyhow::Result<Option<NetServeConfig>> {
    let Some(port) = port else {
        if drop_every.is_some() {
            return Err(crate::error::usage("--net-drop-every needs --net PORT"));
        }
        return Ok(None);
    };
    if drop_every == Some(0) {
        return Err(crate::error::usage("--net-drop-every must be at least 1"));
    }
    Ok(Some(NetServeConfig { host, port, drop_every }))
}

/// Bind TCP and UDP on one port and start serving.
pub fn start(cfg: NetServeConfig) -> anyhow::Result<NetServer> {
    let (tcp, udp) = bind(cfg.host, cfg.port)?;
    let addr = tcp.local_addr()?;
    udp.set_read_timeout(Some(Duration::from_millis(100)))?;
    let shared = Arc::new(Shared::default());
    let s = shared.clone();
    let accept = std::thread::Builder::new()
        .name("net-accept".into())
        .spawn(move || accept_loop(&tcp, &s))?;
    let s = shared.clone();
    let drop_every = cfg.drop_every;
    let recv = std::thread::Builder::new()
        .name("net-udp".into())
        .spawn(move || udp_loop(&udp, &s, drop_every))?;
    Ok(NetServer {
        addr,
        shared,
        threads: vec![accept, recv],
    })
}

fn bind(host: IpAddr, port: u16) -> anyhow::Result<(TcpListener, UdpSocket)> {
    let mut last = None;
    // Port 0: the TCP port the kernel picks may be taken for UDP; try a few.
    for _ in 0..if port == 0 { 20 } else { 1 } {
        let tcp = TcpListener::bind((host, port)).map_err(|e| anyhow::anyhow!("--net: cannot listen on {host}:{port}: {e}"))?;
        let p = tcp.local_addr()?.port();
        match UdpSocket::bind((host, p)) {
            Ok(u) => return Ok((tcp, u)),
            Err(e) => last = Some(e),
        }
    }
    Err(anyhow::anyhow!(
        "--net: cannot bind UDP on {host}:{port}: {}",
        last.map(|e| e.to_string()).unwrap_or_default()
    ))
}

/// Set a socket buffer size (best effort: the kernel caps it at its `*mem_max`).
pub fn set_buffer(fd: i32, opt: libc::c_int, bytes: u32) {
    let v = bytes.min(i32::MAX as u32) as libc::c_int;
    // SAFETY: `v` lives for the whole call and its size is passed; setsockopt only reads it.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
}

fn accept_loop(l: &TcpListener, s: &Arc<Shared>) {
    loop {
        let accepted = l.accept();
        if s.stop.load(Ordering::Relaxed) {
            return;
        }
        match accepted {
            Ok((c, _)) => {
                s.connections.fetch_add(1, Ordering::Relaxed);
                let s = s.clone();
                let _ = std::thread::Builder::new().name("net-conn".into()).spawn(move || {
                    let _ = serve_conn(c, &s);
                });
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

fn serve_conn(mut c: TcpStream, s: &Shared) -> std::io::Result<()> {
    c.set_nonblocking(false)?;
    c.set_nodelay(true)?;
    let mut h = [0u8; HEADER_LEN];
    c.read_exact(&mut h)?;
    let h = Header::decode(&h).map_err(std::io::Error::other)?;
    if h.buffer > 0 {
        set_buffer(c.as_raw_fd(), libc::SO_RCVBUF, h.buffer);
        set_buffer(c.as_raw_fd(), libc::SO_SNDBUF, h.buffer);
    }
    let size = (h.size as usize).clamp(1, 16 << 20);
    match h.mode {
        Mode::Upload => {
            let mut buf = vec![0u8; size.max(64 << 10)];
            let mut n = 0u64;
            loop {
                let r = c.read(&mut buf)?;
                if r == 0 {
                    break;
                }
                n += r as u64;
                s.received.fetch_add(r as u64, Ordering::Relaxed);
            }
            c.write_all(&n.to_be_bytes())
        }
        Mode::Download => {
            let buf = vec![0x5au8; size];
            let mut left = if h.limit == 0 { u64::MAX } else { h.limit };
            while left > 0 {
                let k = (left.min(size as u64)) as usize;
                c.write_all(&buf[..k])?;
                s.sent.fetch_add(k as u64, Ordering::Relaxed);
                left -= k as u64;
            }
            c.shutdown(Shutdown::Write)
        }
        Mode::RoundTrip => {
            let mut buf = vec![0u8; size];
            loop {
                match c.read_exact(&mut buf) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
                    Err(e) => return Err(e),
                }
                s.received.fetch_add(size as u64, Ordering::Relaxed);
                c.write_all(&buf)?;
                s.sent.fetch_add(size as u64, Ordering::Relaxed);
            }
        }
        Mode::UdpControl => {
            s.sessions.lock().unwrap_or_else(|p| p.into_inner()).entry(h.limit).or_default();
            let mut b = [0u8; 64];
            while c.read(&mut b)? > 0 {}
            // Datagrams still in the socket buffer when the client finished: let them in.
            std::thread::sleep(Duration::from_millis(200));
            let acct = s
                .sessions
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&h.limit)
                .unwrap_or_default();
            c.write_all(&acct.report.encode())
        }
    }
}

fn udp_loop(u: &UdpSocket, s: &Shared, drop_every: Option<u64>) {
    let mut buf = vec![0u8; 65536];
    let mut seen = 0u64;
    let mut aid_drops: HashMap<u64, u64> = HashMap::new();
    while !s.stop.load(Ordering::Relaxed) {
        // recv, not recv_from: the sender's address is not needed (the session is in the datagram).
        let Ok(n) = u.recv(&mut buf) else {
            continue;
        };
        let arrival = now_ns();
        let Some(d) = Datagram::read(&buf[..n]) else {
            continue;
        };
        seen += 1;
        if drop_every.is_some_and(|k| seen.is_multiple_of(k)) {
            s.dropped.fetch_add(1, Ordering::Relaxed);
            *aid_drops.entry(d.session).or_default() += 1;
            continue;
        }
        s.datagrams.fetch_add(1, Ordering::Relaxed);
        s.received.fetch_add(n as u64, Ordering::Relaxed);
        if d.warmup {
            continue;
        }
        let mut sessions = s.sessions.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(a) = sessions.get_mut(&d.session) {
            a.add(&d, n, arrival);
            if drop_every.is_some() {
                a.report.dropped_by_aid = aid_drops.get(&d.session).copied().unwrap_or(0);
            }
        }
    }
}
