//! HTTP/2 for the async engine, with the `h2` crate: over TLS (ALPN `h2`) or h2c with prior
//! knowledge. Each connection carries `streams` request slots that run at once.

use super::async_conn::{connect, Stream};
use super::async_ctx::{Ctx, Job};
use super::conn::ErrorClass;
use super::template::Template;
use bytes::Bytes;
use h2::client::SendRequest;
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// One HTTP/2 connection task: connect, run the stream slots, connect again if it breaks.
pub async fn run(ctx: Rc<Ctx>) {
    let tpl = match Template::new(&ctx.sh.cfg) {
        Ok(t) => Rc::new(t),
        Err(_) => return, // checked by `prepare`
    };
    loop {
        let Some(stream) = connect(&ctx).await else { return };
        let finished = match stream {
            Stream::Plain(s) => session(&ctx, &tpl, s).await,
            Stream::Tls(s) => session(&ctx, &tpl, *s).await,
        };
        if finished {
            return;
        }
        ctx.reconnected();
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Serve requests on one connection until the run needs no more (true) or it breaks (false).
async fn session<S: AsyncRead + AsyncWrite + Unpin + 'static>(ctx: &Rc<Ctx>, tpl: &Rc<Template>, io: S) -> bool {
    let handshake = h2::client::Builder::new()
        .initial_window_size(1 << 20)
        .initial_connection_window_size(1 << 24)
        .handshake::<_, Bytes>(io);
    let (sr, conn) = match tokio::time::timeout(ctx.sh.cfg.timeout, handshake).await {
        Ok(Ok(x)) => x,
        Ok(Err(e)) => {
            ctx.connect_failed(class(&e).0, &format!("HTTP/2 handshake: {e}"));
            return false;
        }
        Err(_) => {
            ctx.connect_failed(ErrorClass::ConnectTimeout, "no HTTP/2 handshake within the timeout");
            return false;
        }
    };
    let dead = Rc::new(Cell::new(false));
    let d = dead.clone();
    let driver = tokio::task::spawn_local(async move {
        let _ = conn.await;
        d.set(true);
    });
    let slots: Vec<_> = (0..ctx.sh.cfg.streams)
        .map(|_| tokio::task::spawn_local(slot(ctx.clone(), tpl.clone(), sr.clone(), dead.clone())))
        .collect();
    drop(sr);
    let mut finished = true;
    for h in slots {
        finished &= h.await.unwrap_or(false);
    }
    // Every handle is gone: the connection says goodbye (GOAWAY) and ends.
    if tokio::time::timeout(Duration::from_millis(100), driver).await.is_err() {
        // Still open (the server holds it): dropped with the runtime.
    }
    finished
}

/// One stream slot: a request at a time; true when the run needs no more, false when the
/// connection broke.
async fn slot(ctx: Rc<Ctx>, tpl: Rc<Template>, mut sr: SendRequest<Bytes>, dead: Rc<Cell<bool>>) -> bool {
    loop {
        sr = match sr.ready().await {
            Ok(s) => s,
            Err(_) => return ctx.finished(),
        };
        let Some((job, _permit)) = ctx.next_job().await else { return true };
        if dead.get() {
            ctx.give_back(job);
            return false;
        }
        match tokio::time::timeout(ctx.sh.cfg.timeout, exchange(&ctx, &tpl, &mut sr, &job)).await {
            Ok(Ok((status, bytes))) => ctx.done(&job, status, bytes),
            Ok(Err(e)) => {
                let (c, connection) = class(&e);
                ctx.fail(&job, c, &e.to_string());
                if connection {
                    return false;
                }
            }
            // Dropping the stream resets it; the connection goes on.
            Err(_) => ctx.fail(&job, ErrorClass::ReadTimeout, "no complete response within the timeout"),
        }
    }
}

async fn exchange(ctx: &Ctx, tpl: &Template, sr: &mut SendRequest<Bytes>, job: &Job) -> Result<(u16, u64), h2::Error> {
    let body = &ctx.sh.cfg.body;
    let (resp, mut out) = sr.send_request(tpl.request(), body.is_empty())?;
    if !body.is_empty() {
        out.send_data(body.clone(), true)?;
    }
    let resp = resp.await?;
    ctx.first_byte(job);
    let status = resp.status().as_u16();
    let mut rb = resp.into_body();
    let mut n = 0u64;
    while let Some(chunk) = rb.data().await {
        let c = chunk?;
        n += c.len() as u64;
        let _ = rb.flow_control().release_capacity(c.len());
    }
    Ok((status, n))
}

/// The class of an HTTP/2 error, and whether it ended the connection (not only the stream).
fn class(e: &h2::Error) -> (ErrorClass, bool) {
    if let Some(io) = e.get_io() {
        let c = match io.kind() {
            std::io::ErrorKind::UnexpectedEof => ErrorClass::Closed,
            _ => ErrorClass::of_io(io, false),
        };
        (c, true)
    } else if e.is_go_away() {
        (ErrorClass::Reset, true)
    } else if e.is_reset() {
        (ErrorClass::Reset, false)
    } else {
        (ErrorClass::Protocol, false)
    }
}
