//! Connections of the async engine: TCP connect and the TLS handshake (each timed), and HTTP/1.1
//! over TLS, framed by the same response parser as the mio path, so that the error classes match.

use super::async_ctx::{Ctx, Job};
use super::conn::{ErrorClass, BUF};
use super::response::{Fed, HeadCache, Parser};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

/// An open connection.
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// Pause before connecting again after a failed connect, as the mio path does.
const RETRY: Duration = Duration::from_millis(10);

/// Connect (and shake hands) until it works; `None` once the run needs no more requests.
pub async fn connect(ctx: &Ctx) -> Option<Stream> {
    let cfg = &ctx.sh.cfg;
    loop {
        if ctx.finished() {
            return None;
        }
        match try_connect(ctx).await {
            Ok(s) => return Some(s),
            Err((class, msg)) => {
                ctx.connect_failed(class, &msg);
                tokio::time::sleep(RETRY.min(cfg.timeout)).await;
            }
        }
    }
}

async fn try_connect(ctx: &Ctx) -> Result<Stream, (ErrorClass, String)> {
    let cfg = &ctx.sh.cfg;
    let t0 = Instant::now();
    let tcp = match tokio::time::timeout(cfg.timeout, TcpStream::connect(cfg.addr)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return Err((ErrorClass::of_io(&e, true), e.to_string())),
        Err(_) => return Err((ErrorClass::ConnectTimeout, "no connection within the timeout".into())),
    };
    let _ = tcp.set_nodelay(true);
    let connected = t0.elapsed();
    let Some(tls) = &cfg.tls else {
        ctx.opened(connected, None);
        return Ok(Stream::Plain(tcp));
    };
    let t1 = Instant::now();
    let connector = tokio_rustls::TlsConnector::from(tls.config.clone());
    let s = match tokio::time::timeout(cfg.timeout, connector.connect(tls.name.clone(), tcp)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return Err((super::tls::handshake_error(&e), format!("TLS handshake: {e}"))),
        Err(_) => return Err((ErrorClass::Tls, "no TLS handshake within the timeout".into())),
    };
    let want: &[u8] = if cfg.protocol == super::config::Protocol::H2 {
        b"h2"
    } else {
        b"http/1.1"
    };
    // An h2 client must not speak HTTP/2 unless the server chose it; HTTP/1.1 needs no ALPN.
    if cfg.protocol == super::config::Protocol::H2 && s.get_ref().1.alpn_protocol() != Some(want) {
        return Err((ErrorClass::Tls, "the server did not choose h2 by ALPN".into()));
    }
    ctx.opened(connected, Some(t1.elapsed()));
    Ok(Stream::Tls(Box::new(s)))
}

/// One HTTP/1.1 connection task: connect, serve requests, connect again when the connection ends.
pub async fn http1(ctx: &Ctx) {
    let mut buf = vec![0u8; BUF];
    let mut parser = Parser::default();
    let mut heads = HeadCache::default();
    loop {
        let Some(stream) = connect(ctx).await else { return };
        let finished = match stream {
            Stream::Plain(s) => session(ctx, s, &mut buf, &mut parser, &mut heads).await,
            Stream::Tls(s) => session(ctx, *s, &mut buf, &mut parser, &mut heads).await,
        };
        if finished {
            return;
        }
    }
}

/// Requests one after the other on one connection; true when the run needs no more.
async fn session<S: AsyncRead + AsyncWrite + Unpin>(
    ctx: &Ctx,
    mut s: S,
    buf: &mut [u8],
    parser: &mut Parser,
    heads: &mut HeadCache,
) -> bool {
    let cfg = &ctx.sh.cfg;
    let mut probe = [0u8; 1];
    loop {
        // While it waits for a request, an idle connection watches for the server closing it: that
        // is a reconnect, not an error, as on the mio path.
        let next = tokio::select! {
            biased;
            j = ctx.next_job() => Some(j),
            _ = s.read(&mut probe) => None,
        };
        let Some(next) = next else {
            ctx.reconnected();
            return false;
        };
        let Some((job, _permit)) = next else {
            let _ = tokio::time::timeout(Duration::from_millis(100), s.shutdown()).await;
            return true;
        };
        match tokio::time::timeout(cfg.timeout, exchange(ctx, &mut s, buf, parser, heads, &job)).await {
            Ok(Ok(close)) => {
                ctx.done(&job, parser.status, parser.body_bytes);
                if close || !cfg.keepalive {
                    if cfg.keepalive {
                        ctx.reconnected();
                    }
                    return false;
                }
            }
            Ok(Err((class, msg))) => {
                ctx.fail(&job, class, &msg);
                ctx.reconnected();
                return false;
            }
            Err(_) => {
                ctx.fail(&job, ErrorClass::ReadTimeout, "no complete response within the timeout");
                ctx.reconnected();
                return false;
            }
        }
    }
}

/// Send the request, read its response; Ok(true) when the connection must close after it.
async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    ctx: &Ctx,
    s: &mut S,
    buf: &mut [u8],
    parser: &mut Parser,
    heads: &mut HeadCache,
    job: &Job,
) -> Result<bool, (ErrorClass, String)> {
    let io = |e: std::io::Error| (ErrorClass::of_io(&e, false), e.to_string());
    parser.reset(ctx.sh.cfg.method == "HEAD");
    s.write_all(&ctx.sh.cfg.request).await.map_err(io)?;
    s.flush().await.map_err(io)?;
    let mut filled = 0;
    let mut started = false;
    loop {
        let in_head = parser.in_head();
        let dst = if in_head { &mut buf[filled..] } else { &mut buf[..] };
        let n = match s.read(dst).await {
            Ok(n) => n,
            // A TLS peer that closes without close_notify: the connection's end, judged as such.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => 0,
            Err(e) => return Err(io(e)),
        };
        if n == 0 {
            return match parser.at_eof() {
                Ok(()) => Ok(true),
                Err("body_short") => Err((ErrorClass::BodyShort, "the connection closed before the body's end".into())),
                Err(_) if !started => Err((ErrorClass::Closed, "the connection closed before the response".into())),
                Err(_) => Err((ErrorClass::Protocol, "the connection closed inside the response head".into())),
            };
        }
        if !started {
            started = true;
            ctx.first_byte(job);
        }
        let fed = if in_head {
            filled += n;
            match parser.parse_head_cached(&buf[..filled], heads) {
                Ok(Some(h)) => parser.feed_body(&buf[h..filled]),
                Ok(None) if filled == buf.len() => Err("response head too large".to_string()),
                Ok(None) => Ok(Fed::More),
                Err(e) => Err(e),
            }
        } else {
            parser.feed_body(&buf[..n])
        };
        match fed {
            Ok(Fed::Done { .. }) => return Ok(parser.close),
            Ok(Fed::More) => {}
            Err(e) => return Err((ErrorClass::Protocol, e)),
        }
    }
}
