//! The event-loop model: tokio + hyper on a few threads, HTTP/1.1 and h2c (prior knowledge, detected
//! by its preface) on the same port, or the same over TLS (ALPN h2, http/1.1). Delays never block
//! other connections.

use super::content::Route;
use super::Shared;
use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio_rustls::TlsAcceptor;

type Stopper = Box<dyn FnOnce() + Send>;

pub fn start(listener: std::net::TcpListener, shared: Arc<Shared>, tls: Option<TlsAcceptor>) -> anyhow::Result<Stopper> {
    listener.set_nonblocking(true)?;
    let threads = match shared.cfg.threads {
        0 => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        n => n,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .thread_name("serve-io")
        .build()?;
    let (tx, rx) = tokio::sync::watch::channel(false);
    let handle = std::thread::Builder::new().name("serve-event-loop".into()).spawn(move || {
        rt.block_on(accept_loop(listener, shared, tls, rx));
        rt.shutdown_timeout(Duration::from_secs(1));
    })?;
    Ok(Box::new(move || {
        let _ = tx.send(true);
        let _ = handle.join();
    }))
}

async fn accept_loop(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    tls: Option<TlsAcceptor>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            r = listener.accept() => {
                let Ok((stream, peer)) = r else { continue };
                let _ = stream.set_nodelay(true);
                let source = shared.source(peer.ip());
                let s = shared.clone();
                let mut stop2 = stop.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    let responses = Arc::new(AtomicU64::new(0));
                    let svc = hyper::service::service_fn(move |req| answer(req, s.clone(), responses.clone(), source.clone()));
                    let builder = auto::Builder::new(TokioExecutor::new());
                    match tls {
                        None => {
                            let conn = builder.serve_connection(TokioIo::new(stream), svc);
                            tokio::select! {
                                _ = conn => {}
                                _ = stop2.changed() => {}
                            }
                        }
                        Some(acceptor) => {
                            // A failed handshake (an untrusting client) just ends the connection.
                            let handshake = tokio::time::timeout(Duration::from_secs(10), acceptor.accept(stream));
                            let Ok(Ok(stream)) = (tokio::select! {
                                r = handshake => r,
                                _ = stop2.changed() => return,
                            }) else { return };
                            let conn = builder.serve_connection(TokioIo::new(stream), svc);
                            tokio::select! {
                                _ = conn => {}
                                _ = stop2.changed() => {}
                            }
                        }
                    }
                });
            }
        }
    }
}

async fn answer(
    req: Request<hyper::body::Incoming>,
    shared: Arc<Shared>,
    responses: Arc<AtomicU64>,
    source: Arc<AtomicU64>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let mut d = shared.cfg.delay.draw();
    if let Some(s) = &shared.cfg.stall {
        d = d.max(s.wait(shared.started));
    }
    if !d.is_zero() {
        tokio::time::sleep(d).await;
    }
    let (status, body) = match shared.content.route(req.uri().path()) {
        _ if super::http1::fails(&shared) => (StatusCode::INTERNAL_SERVER_ERROR, Bytes::from_static(b"injected failure\n")),
        Route::Body(b) => (StatusCode::OK, b),
        Route::NotFound => (StatusCode::NOT_FOUND, Bytes::from_static(b"not found\n")),
        Route::TooLarge => (StatusCode::PAYLOAD_TOO_LARGE, Bytes::from_static(b"too large\n")),
    };
    let head = req.method() == hyper::Method::HEAD;
    let n = responses.fetch_add(1, Ordering::Relaxed) + 1;
    let mut resp = Response::builder()
        .status(status)
        .header("server", "perflab")
        .header("content-type", "application/octet-stream")
        .header("content-length", body.len());
    if shared.cfg.close_after.is_some_and(|c| n >= c) && req.version() < hyper::Version::HTTP_2 {
        resp = resp.header("connection", "close");
    }
    shared.served.fetch_add(1, Ordering::Relaxed);
    source.fetch_add(1, Ordering::Relaxed);
    let body = if head { Bytes::new() } else { body };
    Ok(resp
        .body(Full::new(body))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()))))
}
