//! `perflab monitor --listen ADDR`: the system sampler's latest sample at `/metrics`, in the
//! OpenMetrics text format (a node exporter for the figures perflab computes). The same server as
//! `--live` (GET only; an address other than loopback needs the token printed once).

pub use super::metrics::Latest;
use super::server::Server;

/// The server of `perflab monitor --listen` and the sample it serves.
pub struct Exporter {
    pub latest: Latest,
    _server: Server,
}

impl Exporter {
    /// Listen on `addr` (`--listen`'s value) and say where (and the token, once).
    pub fn start(addr: &str) -> anyhow::Result<Exporter> {
        let listener = super::watch::bind_for("--listen", addr)?;
        let latest = Latest::default();
        let server = Server::start_sample(listener, latest.clone())?;
        eprintln!("perflab: monitor: serving http://{}/metrics", server.addr);
        if let Some(t) = &server.token {
            eprintln!("perflab: monitor: not on loopback: every request needs this token (shown only now): Authorization: Bearer {t} (or ?token={t})");
        }
        Ok(Exporter { latest, _server: server })
    }
}
