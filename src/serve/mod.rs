//! `perflab serve`: the built-in target. One listener, three concurrency models:
//! - `event-loop` (default): tokio + hyper, HTTP/1.1 and h2c (prior knowledge) on the same port, or
//!   HTTPS with ALPN h2 and http/1.1 given a certificate and key (a testing aid);
//! - `pool --workers N`: N threads, each serving one connection at a time from the shared accept
//!   queue with blocking I/O (HTTP/1.1), like a pooled httpd;
//! - `thread-per-connection`: a new OS thread per accepted connection (HTTP/1.1).
//!
//! Routes: `GET /` → `size` bytes, `GET /bytes/N` → N bytes, anything else 404. Bodies are built once.
//!
//! Beside it, on request, a UDP echo (`udp_echo`): the target of `perflab probe udp`; and the
//! server of `perflab load net` (`net`, `--net PORT`).

pub mod cli;
mod content;
mod event_loop;
mod http1;
pub mod net;
mod threads;
mod tls;
pub mod udp_echo;

pub use content::{Delay, Stall};

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    EventLoop,
    Pool { workers: usize },
    ThreadPerConnection,
}

#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub host: IpAddr,
    pub port: u16,
    pub model: Model,
    /// Bytes of `GET /`.
    pub size: usize,
    pub delay: Delay,
    /// Testing aid: close each connection after this many responses.
    pub close_after: Option<u64>,
    /// Testing aid: hold every response during one global pause.
    pub stall: Option<Stall>,
    /// Testing aid: this fraction of requests gets a 500.
    pub fail_rate: f64,
    /// Event-loop worker threads (0 = one per CPU).
    pub threads: usize,
    /// Testing aid: serve HTTPS (ALPN h2 and http/1.1) with this PEM certificate and key
    /// (event-loop model only).
    pub tls: Option<(std::path::PathBuf, std::path::PathBuf)>,
}

impl Default for ServeConfig {
    fn default() -> ServeConfig {
        ServeConfig {
            host: IpAddr::from([127, 0, 0, 1]),
            port: 0,
            model: Model::EventLoop,
            size: 37,
            delay: Delay::None,
            close_after: None,
            stall: None,
            fail_rate: 0.0,
            threads: 0,
            tls: None,
        }
    }
}

/// State shared by every connection.
pub(crate) struct Shared {
    pub cfg: ServeConfig,
    pub content: content::Content,
    pub served: AtomicU64,
    /// The responses served to each client address (one counter per address, shared by its
    /// connections: a split load's sources, counted apart).
    sources: std::sync::Mutex<std::collections::BTreeMap<IpAddr, Arc<AtomicU64>>>,
    pub stop: AtomicBool,
    pub started: std::time::Instant,
}

impl Shared {
    /// The response counter of the client at `ip` (taken once per connection).
    pub fn source(&self, ip: IpAddr) -> Arc<AtomicU64> {
        let mut m = self.sources.lock().unwrap_or_else(|e| e.into_inner());
        m.entry(ip).or_default().clone()
    }
}

/// What a server served: its responses, and how many went to each client address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    pub responses: u64,
    pub by_source: Vec<(IpAddr, u64)>,
}

impl std::fmt::Display for Served {
    /// `served N requests`, then `: n1 to ADDR1, n2 to ADDR2` when more than one client was served.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "served {} requests", self.responses)?;
        if self.by_source.len() > 1 {
            let parts: Vec<String> = self.by_source.iter().map(|(ip, n)| format!("{n} to {ip}")).collect();
            write!(f, ": {}", parts.join(", "))?;
        }
        Ok(())
    }
}

pub struct ServerHandle {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stopper: Box<dyn FnOnce() + Send>,
}

/// Bind and start serving on background threads; returns once the socket listens.
pub fn start(cfg: ServeConfig) -> anyhow::Result<ServerHandle> {
    let listener = std::net::TcpListener::bind((cfg.host, cfg.port))
        .map_err(|e| crate::error::usage(format!("cannot listen on {}:{}: {e}", cfg.host, cfg.port)))?;
    let addr = listener.local_addr()?;
    let shared = Arc::new(Shared {
        content: content::Content::new(cfg.size),
        cfg: cfg.clone(),
        served: AtomicU64::new(0),
        sources: Default::default(),
        stop: AtomicBool::new(false),
        started: std::time::Instant::now(),
    });
    let acceptor = match &cfg.tls {
        Some(_) if cfg.model != Model::EventLoop => return Err(crate::error::usage("TLS needs the event-loop model")),
        Some((cert, key)) => Some(tls::acceptor(cert, key)?),
        None => None,
    };
    let stopper = match cfg.model {
        Model::EventLoop => event_loop::start(listener, shared.clone(), acceptor)?,
        Model::Pool { workers } => threads::start_pool(listener, shared.clone(), workers.max(1))?,
        Model::ThreadPerConnection => threads::start_per_connection(listener, shared.clone())?,
    };
    Ok(ServerHandle { addr, shared, stopper })
}

impl ServerHandle {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn requests_served(&self) -> u64 {
        self.shared.served.load(Ordering::Relaxed)
    }

    /// Stop accepting, close connections, join the threads; returns what was served.
    pub fn shutdown(self) -> anyhow::Result<Served> {
        self.shared.stop.store(true, Ordering::SeqCst);
        (self.stopper)();
        let sources = self.shared.sources.lock().unwrap_or_else(|e| e.into_inner());
        Ok(Served {
            responses: self.shared.served.load(Ordering::Relaxed),
            by_source: sources.iter().map(|(ip, n)| (*ip, n.load(Ordering::Relaxed))).collect(),
        })
    }
}
