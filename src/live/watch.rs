//! `perflab watch RUN_DIR`: the live page of a run started elsewhere (live or finished), from its
//! store; and the parsing of `--live[=ADDR:PORT]` shared with `perflab run`.

use super::server::Server;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;

/// Where the live server listens unless told: loopback, a free port.
pub const DEFAULT_ADDR: &str = "127.0.0.1:0";

#[derive(clap::Args, Debug)]
pub struct WatchArgs {
    /// The run directory (one that `perflab run` made: its store has the run's events)
    pub run: PathBuf,
    /// Serve the page on ADDR:PORT (default 127.0.0.1 and a free port; any other address than
    /// loopback needs the token printed at the start)
    #[arg(long, value_name = "ADDR:PORT")]
    pub live: Option<String>,
    /// Show the run in the terminal instead of serving the page (with --live, both); `q` or
    /// Ctrl-C ends the view, `+`/`-` change the history window
    #[arg(long)]
    pub tui: bool,
}

/// `--live`'s value as an address (`127.0.0.1:8080`, `[::1]:0`, `0.0.0.0:9000`; a bare port is
/// on loopback).
pub fn parse_addr(s: &str) -> anyhow::Result<SocketAddr> {
    parse_addr_for("--live", s)
}

/// `flag`'s value as an address, as [`parse_addr`] reads it.
pub fn parse_addr_for(flag: &str, s: &str) -> anyhow::Result<SocketAddr> {
    if let Ok(port) = s.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse()
        .map_err(|_| crate::error::usage(format!("{flag} {s}: not an address: give ADDR:PORT (127.0.0.1:8080) or a port")))
}

/// Listen on `--live`'s address (before the run starts: a taken port is said before anything runs).
pub fn bind(addr: &str) -> anyhow::Result<TcpListener> {
    bind_for("--live", addr)
}

/// Listen on `flag`'s address.
pub fn bind_for(flag: &str, addr: &str) -> anyhow::Result<TcpListener> {
    let a = parse_addr_for(flag, addr)?;
    TcpListener::bind(a).map_err(|e| crate::error::usage(format!("{flag} {addr}: cannot listen there: {e}")))
}

/// Start the live server of run directory `dir` on `listener` and say where it is (and its
/// token, once).
pub fn serve(listener: &TcpListener, dir: &std::path::Path, publisher: Option<super::Publisher>) -> anyhow::Result<Server> {
    let server = Server::start(listener.try_clone()?, dir, publisher)?;
    eprintln!("perflab: live: {}", server.url());
    if server.token.is_some() {
        eprintln!("perflab: live: not on loopback: every request needs the token above (shown only now)");
    }
    Ok(server)
}

pub fn run(args: WatchArgs) -> anyhow::Result<i32> {
    let live = match (&args.live, args.tui) {
        (Some(a), _) => Some(a.as_str()),
        (None, false) => Some(DEFAULT_ADDR),
        (None, true) => None,
    };
    live.map(parse_addr).transpose()?;
    if args.tui {
        super::tui::check_terminal()?;
    }
    // The store's checks (a directory that is no run says so in one line).
    drop(crate::store::Store::open(&args.run)?);
    let cancel = crate::util::Cancel::on_signals()?;
    let _server = live.map(|a| serve(&bind(a)?, &args.run, None)).transpose()?;
    // The view ends on `q` or Ctrl-C (it sets `cancel`), or when its terminal goes.
    let view = args
        .tui
        .then(|| super::tui::View::start(&args.run, super::tui::Quit::Cancel(cancel.clone()), None))
        .transpose()?;
    while !cancel.is_cancelled() && !view.as_ref().is_some_and(super::tui::View::ended) {
        cancel.sleep(std::time::Duration::from_millis(200));
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn live_addresses_read_as_the_user_means_them() {
        assert_eq!(super::parse_addr("8080").unwrap().to_string(), "127.0.0.1:8080");
        assert_eq!(super::parse_addr("0.0.0.0:9000").unwrap().to_string(), "0.0.0.0:9000");
        assert_eq!(super::parse_addr("[::1]:0").unwrap().to_string(), "[::1]:0");
        let e = super::parse_addr("localhost").unwrap_err().to_string();
        assert!(e.contains("--live localhost"), "{e}");
    }
}
