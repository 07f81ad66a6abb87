//! The live server (`perflab run --live`, `perflab watch`): GET only, on 127.0.0.1 by default.
//! `/` the page (uPlot embedded, nothing from the network), `/events` the run's event log as
//! server-sent events (replayed from the store, then polled by `seq`; `Last-Event-ID` resumes),
//! `/metrics` the current state in the OpenMetrics text format, `/report` the run's HTML report once
//! written. Any address other than loopback needs the token printed once (`?token=` or
//! `Authorization: Bearer`): 401 and nothing else without it.

use super::metrics::{self, LiveState};
use super::Publisher;
use crate::util::charts::{CHARTS_JS, UPLOT_CSS, UPLOT_JS};
use bytes::Bytes;
use hyper::body::{Body, Frame};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// The page, with uPlot and the charts put in their places (see [`page`]).
const PAGE: &str = include_str!("../../assets/live/index.html");

/// How often `/events` looks for new events in the store.
const POLL: Duration = Duration::from_millis(250);

/// What the server answers from.
pub struct Served {
    /// The run directory (its store, its report).
    pub dir: PathBuf,
    /// Required from every request when set (a non-loopback address).
    pub token: Option<String>,
    /// In the run's own process: the monitor's latest sample, for `/metrics`.
    pub publisher: Option<Publisher>,
    /// This machine's name (the `host` label).
    pub host: String,
    /// `perflab monitor --listen`: only `/metrics`, this latest sample's (no run directory).
    pub sample: Option<super::metrics::Latest>,
}

/// A running server: stops when dropped.
pub struct Server {
    pub addr: SocketAddr,
    pub token: Option<String>,
    stop: Option<tokio::sync::watch::Sender<bool>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Serve run directory `dir` on `listener`. A non-loopback address gets a fresh token.
    pub fn start(listener: std::net::TcpListener, dir: &Path, publisher: Option<Publisher>) -> anyhow::Result<Server> {
        Server::serve(listener, |token| Served {
            dir: dir.to_path_buf(),
            token,
            publisher,
            host: hostname(),
            sample: None,
        })
    }

    /// Serve only `/metrics` from `latest` (`perflab monitor --listen`).
    pub fn start_sample(listener: std::net::TcpListener, latest: super::metrics::Latest) -> anyhow::Result<Server> {
        Server::serve(listener, |token| Served {
            dir: PathBuf::new(),
            token,
            publisher: None,
            host: hostname(),
            sample: Some(latest),
        })
    }

    /// Serve what `served` (given the token, if the address needs one) says on `listener`.
    fn serve(listener: std::net::TcpListener, served: impl FnOnce(Option<String>) -> Served) -> anyhow::Result<Server> {
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let token = (!addr.ip().is_loopback()).then(new_token).transpose()?;
        let ctx = Arc::new(served(token.clone()));
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let (tx, rx) = tokio::sync::watch::channel(false);
        let thread = std::thread::Builder::new().name("perflab-live".into()).spawn(move || {
            rt.block_on(accept_loop(listener, ctx, rx));
        })?;
        Ok(Server {
            addr,
            token,
            stop: Some(tx),
            thread: Some(thread),
        })
    }

    /// The page's address (with the token when there is one).
    pub fn url(&self) -> String {
        match &self.token {
            Some(t) => format!("http://{}/?token={t}", self.addr),
            None => format!("http://{}/", self.addr),
        }
    }
}

impl std::fmt::Debug for Server {
    /// Its address (never its token).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("addr", &self.addr).finish_non_exhaustive()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // The events stored last (the run's end) reach the open streams before they close.
        std::thread::sleep(POLL * 3);
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(true);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// This machine's name (`/proc/sys/kernel/hostname`).
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map_or_else(|_| "localhost".into(), |h| h.trim().to_string())
}

/// 128 random bits from the kernel, in hex.
fn new_token() -> anyhow::Result<String> {
    use std::io::Read;
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

async fn accept_loop(listener: std::net::TcpListener, ctx: Arc<Served>, mut stop: tokio::sync::watch::Receiver<bool>) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            r = listener.accept() => {
                let Ok((stream, _)) = r else { continue };
                let ctx = ctx.clone();
                let mut stop2 = stop.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req| {
                        let ctx = ctx.clone();
                        async move { Ok::<_, Infallible>(answer(&req, &ctx)) }
                    });
                    let conn = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), svc);
                    tokio::select! {
                        _ = conn => {}
                        _ = stop2.changed() => {}
                    }
                });
            }
        }
    }
}

/// A response's body: all of it at once, or server-sent events as they come.
pub enum LiveBody {
    Full(Option<Bytes>),
    Stream(tokio::sync::mpsc::Receiver<Bytes>),
}

impl Body for LiveBody {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            LiveBody::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            LiveBody::Stream(rx) => rx.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, LiveBody::Full(None))
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match self {
            LiveBody::Full(b) => hyper::body::SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            LiveBody::Stream(_) => hyper::body::SizeHint::default(),
        }
    }
}

impl LiveBody {
    /// The whole body, when it is not a stream (tests).
    pub fn text(&self) -> String {
        match self {
            LiveBody::Full(Some(b)) => String::from_utf8_lossy(b).into_owned(),
            _ => String::new(),
        }
    }
}

fn plain(status: StatusCode, ctype: &str, body: impl Into<Bytes>) -> Response<LiveBody> {
    let body = body.into();
    let mut r = Response::new(LiveBody::Full(Some(body)));
    *r.status_mut() = status;
    r.headers_mut().insert("content-type", ctype.parse().expect("content type"));
    r.headers_mut().insert("cache-control", "no-store".parse().expect("header"));
    r
}

/// Whether `req` carries the token (when one is needed).
pub fn authorized<B>(req: &Request<B>, token: Option<&str>) -> bool {
    let Some(token) = token else { return true };
    let in_query = req
        .uri()
        .query()
        .is_some_and(|q| q.split('&').any(|kv| kv.strip_prefix("token=") == Some(token)));
    let in_header = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| t == token);
    in_query || in_header
}

/// The answer to one request.
pub fn answer<B>(req: &Request<B>, ctx: &Served) -> Response<LiveBody> {
    if !authorized(req, ctx.token.as_deref()) {
        return plain(
            StatusCode::UNAUTHORIZED,
            "text/plain",
            "401 unauthorized: this address needs the token perflab printed\n",
        );
    }
    if req.method() != hyper::Method::GET {
        let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "405 method not allowed: GET only\n");
        r.headers_mut().insert("allow", "GET".parse().expect("header"));
        return r;
    }
    if let Some(latest) = &ctx.sample {
        return match (req.uri().path(), super::metrics::render_latest(latest, &ctx.host)) {
            ("/metrics", Some(t)) => plain(StatusCode::OK, "application/openmetrics-text; version=1.0.0; charset=utf-8", t),
            ("/metrics", None) => plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "text/plain",
                "no sample yet: the first comes after one --interval\n",
            ),
            _ => plain(
                StatusCode::NOT_FOUND,
                "text/plain",
                "not found: perflab monitor serves /metrics only\n",
            ),
        };
    }
    match req.uri().path() {
        "/" => plain(StatusCode::OK, "text/html; charset=utf-8", page()),
        "/events" => events(req, ctx),
        "/metrics" => match metrics_text(ctx) {
            Ok(t) => plain(StatusCode::OK, "application/openmetrics-text; version=1.0.0; charset=utf-8", t),
            Err(e) => plain(StatusCode::SERVICE_UNAVAILABLE, "text/plain", format!("{e:#}\n")),
        },
        "/report" => match std::fs::read(ctx.dir.join("report.html")) {
            Ok(b) => plain(StatusCode::OK, "text/html; charset=utf-8", b),
            Err(_) => plain(
                StatusCode::NOT_FOUND,
                "text/plain",
                "no report yet: it is written when the run ends\n",
            ),
        },
        _ => plain(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
    }
}

/// The page with uPlot and the charts in it: one document, nothing fetched from anywhere.
pub fn page() -> String {
    PAGE.replace("/*UPLOT_CSS*/", UPLOT_CSS)
        .replace("/*UPLOT_JS*/", UPLOT_JS)
        .replace("/*CHARTS_JS*/", CHARTS_JS)
}

/// The store's events read as a view would (read-only, waiting for the runner's short writes).
fn open_log(dir: &Path) -> anyhow::Result<rusqlite::Connection> {
    let conn = rusqlite::Connection::open_with_flags(dir.join(crate::store::DB_FILE), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    Ok(conn)
}

fn metrics_text(ctx: &Served) -> anyhow::Result<String> {
    let conn = open_log(&ctx.dir)?;
    let rows = crate::store::events::read_after(&conn, 0, usize::MAX >> 1)?;
    let state = LiveState::fold(
        rows.iter()
            .filter_map(|r| super::Event::from_stored(&r.kind, r.trial, &r.body).ok()),
    );
    let latest = ctx.publisher.as_ref().and_then(Publisher::latest_sample);
    Ok(metrics::render(&state, latest.as_ref(), &ctx.host))
}

/// `/events`: every event after `Last-Event-ID` (or `?after=`), then the new ones as they come.
fn events<B>(req: &Request<B>, ctx: &Served) -> Response<LiveBody> {
    let header = req
        .headers()
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok());
    let query = req
        .uri()
        .query()
        .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("after=")))
        .and_then(|v| v.parse().ok());
    let after: i64 = header.or(query).unwrap_or(0);
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    let dir = ctx.dir.clone();
    let spawned = std::thread::Builder::new()
        .name("perflab-live-sse".into())
        .spawn(move || stream_events(&dir, after, &tx));
    if spawned.is_err() {
        return plain(StatusCode::SERVICE_UNAVAILABLE, "text/plain", "busy\n");
    }
    let mut r = Response::new(LiveBody::Stream(rx));
    r.headers_mut().insert("content-type", "text/event-stream".parse().expect("header"));
    r.headers_mut().insert("cache-control", "no-store".parse().expect("header"));
    r
}

/// One client's events: what the store has after `after`, then what it gets, until the client
/// goes (a comment every few seconds finds out).
fn stream_events(dir: &Path, mut after: i64, tx: &tokio::sync::mpsc::Sender<Bytes>) {
    let conn = match open_log(dir) {
        Ok(c) => c,
        Err(e) => {
            let _ = tx.blocking_send(Bytes::from(format!(": cannot read the run's store: {e:#}\n\n")));
            return;
        }
    };
    let mut quiet = Duration::ZERO;
    loop {
        let rows = crate::store::events::read_after(&conn, after, 500).unwrap_or_default();
        for r in &rows {
            let Ok(e) = super::Event::from_stored(&r.kind, r.trial, &r.body) else {
                continue;
            };
            let Ok(json) = serde_json::to_string(&e) else { continue };
            if tx
                .blocking_send(Bytes::from(format!("id: {}\nevent: {}\ndata: {json}\n\n", r.seq, r.kind)))
                .is_err()
            {
                return;
            }
            after = r.seq;
        }
        if rows.len() == 500 {
            continue;
        }
        quiet += POLL;
        if quiet >= Duration::from_secs(5) {
            quiet = Duration::ZERO;
            if tx.blocking_send(Bytes::from_static(b": waiting\n\n")).is_err() {
                return;
            }
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(token: Option<&str>) -> Served {
        Served {
            dir: PathBuf::from("/nonexistent"),
            token: token.map(str::to_string),
            publisher: None,
            host: "h".into(),
            sample: None,
        }
    }

    fn get(uri: &str) -> Request<()> {
        Request::get(uri).body(()).expect("request")
    }

    #[test]
    fn without_the_token_a_non_loopback_server_says_401_and_nothing_else() {
        let c = ctx(Some("s3cret"));
        for uri in ["/", "/events", "/metrics", "/report", "/?token=wrong", "/metrics?token=s3cre"] {
            let r = answer(&get(uri), &c);
            assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{uri}");
            assert!(!r.body().text().contains("uPlot") && !r.body().text().contains("s3cret"), "{uri}");
        }
        let post = Request::post("/").body(()).expect("request");
        assert_eq!(answer(&post, &c).status(), StatusCode::UNAUTHORIZED);
        // With it: the page (by query or by header).
        let r = answer(&get("/?token=s3cret"), &c);
        assert_eq!(r.status(), StatusCode::OK);
        assert!(r.body().text().contains("uPlot"));
        let h = Request::get("/")
            .header("authorization", "Bearer s3cret")
            .body(())
            .expect("request");
        assert_eq!(answer(&h, &c).status(), StatusCode::OK);
    }

    #[test]
    fn only_get_is_served_and_the_page_needs_nothing_from_the_network() {
        let c = ctx(None);
        let post = Request::post("/").body(()).expect("request");
        assert_eq!(answer(&post, &c).status(), StatusCode::METHOD_NOT_ALLOWED);
        let page = page();
        assert!(page.contains("uPlot") && !page.contains("/*UPLOT_JS*/"));
        assert!(page.contains("const perflabCharts") && !page.contains("/*CHARTS_JS*/"));
        for external in ["http://", "https://", "//cdn", "src=\"//"] {
            assert!(
                !page.contains(&format!("src=\"{external}")) && !page.contains(&format!("href=\"{external}")),
                "{external}"
            );
        }
        assert_eq!(answer(&get("/nope"), &c).status(), StatusCode::NOT_FOUND);
    }

    #[test]
    fn a_monitor_server_serves_its_latest_sample_at_metrics_only_and_needs_the_token_elsewhere() {
        let latest = super::super::metrics::Latest::default();
        let mut c = ctx(None);
        c.sample = Some(latest.clone());
        assert_eq!(
            answer(&get("/metrics"), &c).status(),
            StatusCode::SERVICE_UNAVAILABLE,
            "before the first sample"
        );
        latest.set(1_764_000_000.5, &[("cpu_busy_pct".into(), 3.25)]);
        let r = answer(&get("/metrics"), &c);
        assert_eq!(r.status(), StatusCode::OK);
        assert!(
            r.body()
                .text()
                .contains("perflab_monitor_sample{host=\"h\",name=\"cpu_busy_pct\"} 3.25\n"),
            "{}",
            r.body().text()
        );
        assert_eq!(answer(&get("/"), &c).status(), StatusCode::NOT_FOUND);
        assert_eq!(
            answer(&Request::post("/metrics").body(()).expect("request"), &c).status(),
            StatusCode::METHOD_NOT_ALLOWED
        );
        c.token = Some("t0k".into());
        let r = answer(&get("/metrics"), &c);
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert!(!r.body().text().contains("cpu_busy"));
        assert_eq!(answer(&get("/metrics?token=t0k"), &c).status(), StatusCode::OK);
    }
}
