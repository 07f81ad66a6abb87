//! HTTP/1.1 over a blocking socket, for the pool and thread-per-connection models: keep-alive,
//! `Connection: close`, HTTP/1.0, request bodies skipped by Content-Length, pipelined requests.

use super::content::Route;
use super::Shared;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::time::Duration;

const MAX_HEAD: usize = 64 << 10;

/// Serve one connection until the client closes it, it misbehaves, or the server stops.
pub fn serve_connection(mut stream: TcpStream, shared: &Shared) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let mut buf: Vec<u8> = Vec::with_capacity(8192);
    let mut out: Vec<u8> = Vec::with_capacity(8192);
    let mut responses = 0u64;
    let source = stream.peer_addr().ok().map(|a| shared.source(a.ip()));
    loop {
        // Parse every complete request in the buffer (pipelining), answering in order.
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut req = httparse::Request::new(&mut headers);
            let head_len = match req.parse(&buf) {
                Ok(httparse::Status::Complete(n)) => n,
                Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => return,
                Ok(httparse::Status::Partial) => break,
                Err(_) => {
                    let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                    return;
                }
            };
            let mut content_length = 0usize;
            let mut close = req.version == Some(0);
            for h in req.headers.iter() {
                if h.name.eq_ignore_ascii_case("content-length") {
                    content_length = std::str::from_utf8(h.value).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0);
                } else if h.name.eq_ignore_ascii_case("connection") {
                    let v = h.value.to_ascii_lowercase();
                    if v.windows(5).any(|w| w == b"close") {
                        close = true;
                    } else if v.windows(10).any(|w| w == b"keep-alive") {
                        close = false;
                    }
                }
            }
            let head = req.method == Some("HEAD");
            let route = shared.content.route(req.path.unwrap_or("/"));
            // Skip the request body.
            let total = head_len + content_length;
            while buf.len() < total {
                if !read_more(&mut stream, &mut buf, shared) {
                    return;
                }
            }
            buf.drain(..total);
            responses += 1;
            if shared.cfg.close_after.is_some_and(|n| responses >= n) {
                close = true;
            }
            wait_before_answering(shared);
            out.clear();
            respond(&mut out, route, head, close, shared);
            if stream.write_all(&out).is_err() {
                return;
            }
            shared.served.fetch_add(1, Ordering::Relaxed);
            if let Some(s) = &source {
                s.fetch_add(1, Ordering::Relaxed);
            }
            if close {
                let _ = stream.flush();
                let _ = stream.shutdown(std::net::Shutdown::Write);
                return;
            }
        }
        if !read_more(&mut stream, &mut buf, shared) {
            return;
        }
    }
}

/// Read once into `buf`; false when the connection is over (EOF, error, server stopping).
fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>, shared: &Shared) -> bool {
    let mut chunk = [0u8; 8192];
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            return false;
        }
        match stream.read(&mut chunk) {
            Ok(0) => return false,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                return true;
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut | std::io::ErrorKind::Interrupted
                ) =>
            {
                continue
            }
            Err(_) => return false,
        }
    }
}

fn wait_before_answering(shared: &Shared) {
    let mut d = shared.cfg.delay.draw();
    if let Some(s) = &shared.cfg.stall {
        d = d.max(s.wait(shared.started));
    }
    if !d.is_zero() {
        std::thread::sleep(d);
    }
}

/// Whether this request draws a 500 (testing aid).
pub fn fails(shared: &Shared) -> bool {
    shared.cfg.fail_rate > 0.0 && crate::util::rng::with_thread(|r| r.unit()) < shared.cfg.fail_rate
}

fn respond(out: &mut Vec<u8>, route: Route, head: bool, close: bool, shared: &Shared) {
    let conn = if close { "Connection: close\r\n" } else { "" };
    let (status, body): (&str, bytes::Bytes) = match route {
        _ if fails(shared) => ("500 Internal Server Error", bytes::Bytes::from_static(b"injected failure\n")),
        Route::Body(b) => ("200 OK", b),
        Route::NotFound => ("404 Not Found", bytes::Bytes::from_static(b"not found\n")),
        Route::TooLarge => ("413 Content Too Large", bytes::Bytes::from_static(b"too large\n")),
    };
    let _ = write!(
        out,
        "HTTP/1.1 {status}\r\nServer: perflab\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\n{conn}\r\n",
        body.len()
    );
    if !head {
        out.extend_from_slice(&body);
    }
}
