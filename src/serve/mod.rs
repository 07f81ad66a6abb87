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
    pub stop: AtomicBool,
    pub started: std::time::Instant,
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

    /// Stop accepting, close connections, join the threads; returns the number of responses served.
    pub fn shutdown(self) -> anyhow::Result<u64> {
        self.shared.stop.store(true, Ordering::SeqCst);
        (self.stopper)();
        Ok(self.shared.served.load(Ordering::Relaxed))
    }
}
