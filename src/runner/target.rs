//! The system under test: start it (in its own process group, inside its limits, dying with perflab),
//! wait until it is ready, watch it, and stop it (signal, grace period, then SIGKILL to the whole
//! group and cgroup). A target started with [`RunningTarget::launch`] is in the run's ledger from
//! before its cgroups exist until it is stopped.

use super::ledger::Ledger;
use super::limits::Applied;
use crate::plan::{Ready, ResolvedTarget};
use crate::util::command::CommandLine;
use crate::util::{process, Cancel, Tail};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// How much of each of the target's streams is kept for the report.
const TAIL_BYTES: usize = 16 * 1024;

/// A started target.
pub struct RunningTarget {
    child: Child,
    pub limits: Applied,
    stdout: Arc<Mutex<Tail>>,
    stderr: Arc<Mutex<Tail>>,
    lines: mpsc::Receiver<String>,
    /// The readers pass lines on only while readiness may need them: a target that logs a line per
    /// request would otherwise queue its whole output in memory for the rest of the trial.
    want_lines: Arc<AtomicBool>,
    readers: Vec<std::thread::JoinHandle<()>>,
    exited: Option<std::process::ExitStatus>,
    stop_signal: i32,
    grace: Duration,
    /// The run's ledger and this target's name in it.
    ledger: Ledger,
    name: String,
}

/// What stopping the target found.
pub struct Stopped {
    pub stdout_tail: String,
    pub stderr_tail: String,
    /// Set when the target had already exited on its own before it was asked to stop.
    pub died: Option<String>,
}

fn reader(
    mut src: impl Read + Send + 'static,
    tail: Arc<Mutex<Tail>>,
    lines: mpsc::Sender<String>,
    want: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut r = BufReader::new(&mut src);
        let mut line = Vec::new();
        loop {
            line.clear();
            match r.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if let Ok(mut t) = tail.lock() {
                        t.push(&line);
                    }
                    if want.load(Ordering::Relaxed) {
                        let _ = lines.send(String::from_utf8_lossy(&line).trim_end().to_string());
                    }
                }
            }
        }
    })
}

fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(s)) => format!(
            "was killed by signal {s}{}",
            if s == libc::SIGKILL { " (SIGKILL; out of memory?)" } else { "" }
        ),
        _ => "exited".into(),
    }
}

impl RunningTarget {
    /// Create the target's cgroups (named `name`, unique per start) and start it inside them, with
    /// each cgroup and then its process group in `ledger` before or as it comes to exist.
    pub fn launch(cfg: &ResolvedTarget, name: &str, ledger: &Ledger) -> anyhow::Result<RunningTarget> {
        let limits = Applied::prepare_noting(&cfg.limits, name, &mut |dir| ledger.cgroup(name, dir))?;
        let mut t = RunningTarget::start(cfg, limits)?;
        ledger.target_started(name, t.pid() as i32);
        t.ledger = ledger.clone();
        t.name = name.to_string();
        Ok(t)
    }

    /// Start the target inside `limits` (already prepared by the caller).
    pub fn start(cfg: &ResolvedTarget, limits: Applied) -> anyhow::Result<RunningTarget> {
        let mut cmd = match &cfg.command {
            CommandLine::Argv(argv) => {
                let Some((prog, args)) = argv.split_first() else {
                    return Err(crate::error::usage("target command is empty"));
                };
                let mut c = Command::new(prog);
                c.args(args);
                c
            }
            CommandLine::Shell(s) => {
                let mut c = Command::new("/bin/sh");
                c.arg("-c").arg(s);
                c
            }
        };
        if let Some(d) = &cfg.cwd {
            cmd.current_dir(d);
        }
        cmd.envs(cfg.env.iter().map(|(k, v)| (k, v)));
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        limits.install(&mut cmd);
        // Killed with perflab, even by SIGKILL (its children are caught by the cgroup, and by the
        // next perflab from the ledger).
        process::die_with_parent(&mut cmd);
        let mut child = cmd.spawn().map_err(|e| {
            let what = match &cfg.command {
                CommandLine::Argv(a) => a.first().cloned().unwrap_or_default(),
                CommandLine::Shell(s) => s.clone(),
            };
            // A failure of the attach step (cgroup.procs, sched_setaffinity) surfaces here too.
            let within = match limits.mechanism {
                "none" => String::new(),
                m => format!(" inside its limits ({m})"),
            };
            anyhow::anyhow!("cannot start target `{what}`{within}: {e}")
        })?;
        let stdout = Arc::new(Mutex::new(Tail::new(TAIL_BYTES)));
        let stderr = Arc::new(Mutex::new(Tail::new(TAIL_BYTES)));
        let (tx, rx) = mpsc::channel();
        let want_lines = Arc::new(AtomicBool::new(true));
        let mut readers = Vec::new();
        if let Some(o) = child.stdout.take() {
            readers.push(reader(o, stdout.clone(), tx.clone(), want_lines.clone()));
        }
        if let Some(e) = child.stderr.take() {
            readers.push(reader(e, stderr.clone(), tx, want_lines.clone()));
        }
        Ok(RunningTarget {
            child,
            limits,
            stdout,
            stderr,
            lines: rx,
            want_lines,
            readers,
            exited: None,
            stop_signal: cfg.stop_signal,
            grace: cfg.grace,
            ledger: Ledger::none(),
            name: String::new(),
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `Some(description)` if the target has exited.
    pub fn exited(&mut self) -> Option<String> {
        if self.exited.is_none() {
            if let Ok(Some(st)) = self.child.try_wait() {
                self.exited = Some(st);
            }
        }
        self.exited.map(describe)
    }

    pub fn stderr_tail(&self) -> String {
        self.stderr.lock().map(|t| t.text()).unwrap_or_default()
    }

    /// Wait until the target is ready. The error says why not (timeout, exit, cancel). Once it returns,
    /// the target's output still reaches the tails but is no longer kept line by line.
    pub fn wait_ready(&mut self, ready: &Ready, cancel: &Cancel) -> anyhow::Result<()> {
        let r = self.wait_ready_inner(ready, cancel);
        self.want_lines.store(false, Ordering::Relaxed);
        while self.lines.try_recv().is_ok() {}
        r
    }

    fn wait_ready_inner(&mut self, ready: &Ready, cancel: &Cancel) -> anyhow::Result<()> {
        let start = Instant::now();
        let (timeout, what) = match ready {
            Ready::None => return Ok(()),
            Ready::Delay(d) => (*d, String::new()),
            Ready::Tcp { addr, timeout } => (*timeout, format!("port {addr} to accept")),
            Ready::Http { url, timeout } => (*timeout, format!("{url} to answer 200")),
            Ready::Log { pattern, timeout } => (*timeout, format!("a log line matching /{}/", pattern.as_str())),
        };
        loop {
            if cancel.is_cancelled() {
                anyhow::bail!("interrupted while waiting for the target to become ready");
            }
            if let Some(how) = self.exited() {
                // Give the readers a moment to drain what the target printed before it died.
                std::thread::sleep(Duration::from_millis(50));
                anyhow::bail!("target {how} before it was ready");
            }
            let ok = match ready {
                Ready::None => true,
                Ready::Delay(d) => start.elapsed() >= *d,
                Ready::Tcp { addr, .. } => tcp_accepts(addr),
                Ready::Http { url, .. } => http_ok(url),
                Ready::Log { pattern, .. } => {
                    let mut hit = false;
                    while let Ok(line) = self.lines.try_recv() {
                        if pattern.is_match(&line) {
                            hit = true;
                            break;
                        }
                    }
                    hit
                }
            };
            if ok {
                return Ok(());
            }
            if !matches!(ready, Ready::Delay(_)) && start.elapsed() > timeout {
                anyhow::bail!(
                    "target was not ready after {}: waited for {what}",
                    crate::util::duration::format(timeout)
                );
            }
            std::thread::sleep(Duration::from_millis(if matches!(ready, Ready::Delay(_)) { 10 } else { 25 }));
        }
    }

    /// Stop the target: signal its process group, wait the grace period, then SIGKILL the group and
    /// everything left in its cgroups, and remove them.
    pub fn stop(mut self) -> anyhow::Result<Stopped> {
        let died = self.exited();
        let pgid = self.child.id() as libc::pid_t;
        if died.is_none() {
            let grace = self.grace;
            process::stop_group(pgid, self.stop_signal, grace, || self.exited().is_some());
        } else {
            // Whatever is left of the group (the leader is gone while children may live on).
            process::signal_group(pgid, libc::SIGKILL);
        }
        let _ = self.child.wait();
        self.limits.kill_all();
        let cleanup = self.limits.cleanup();
        for r in self.readers.drain(..) {
            // The pipes close when the last process holding them is gone.
            let _ = r.join();
        }
        if cleanup.is_ok() {
            self.ledger.target_stopped(&self.name);
        }
        cleanup?;
        Ok(Stopped {
            stdout_tail: self.stdout.lock().map(|t| t.text()).unwrap_or_default(),
            stderr_tail: self.stderr.lock().map(|t| t.text()).unwrap_or_default(),
            died,
        })
    }
}

/// Whether something accepts a connection at `addr` (`HOST:PORT`, `[v6]:PORT`), on any address
/// the host resolves to.
pub(super) fn tcp_accepts(addr: &str) -> bool {
    use std::net::ToSocketAddrs;
    let Ok((host, port)) = crate::util::url::host_port(addr) else {
        return false;
    };
    let Ok(mut addrs) = (host.as_str(), port).to_socket_addrs() else {
        return false;
    };
    addrs.any(|a| std::net::TcpStream::connect_timeout(&a, Duration::from_millis(200)).is_ok())
}

/// Whether the plain-http `url` answers 200: one GET on a new connection, the status read from the
/// whole status line by the load generator's response parser.
pub(super) fn http_ok(url: &str) -> bool {
    use crate::workload::http::response::Parser;
    let Some((addr, u)) = http_target(url) else {
        return false;
    };
    let Ok(mut s) = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(300)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    let auth = u.basic_auth().map(|a| format!("Authorization: {a}\r\n")).unwrap_or_default();
    let request = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\n{auth}Connection: close\r\n\r\n",
        u.target(),
        u.authority()
    );
    if s.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    let mut parser = Parser::default();
    loop {
        let n = match s.read(&mut buf) {
            Ok(n) if n > 0 => n,
            _ => return false,
        };
        head.extend_from_slice(&buf[..n]);
        match parser.parse_head(&head) {
            Ok(Some(_)) => return parser.status == 200,
            Ok(None) => {}
            Err(_) => return false,
        }
    }
}

/// The address a plain-http ready URL is checked at (port 80 when it names none), and the URL.
fn http_target(url: &str) -> Option<(std::net::SocketAddr, crate::util::url::Url)> {
    let u = crate::util::url::Url::parse(url).ok()?;
    if u.scheme != "http" || u.host.is_empty() {
        return None;
    }
    let addr = crate::util::url::resolve(&u.host, u.port_or(80)).ok()?;
    Some((addr, u))
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    #[test]
    fn ready_urls_without_a_port_are_checked_at_port_80() {
        let at = |url: &str| super::http_target(url).map(|(a, u)| (a.to_string(), u.authority()));
        assert_eq!(at("http://[::1]/"), Some(("[::1]:80".into(), "[::1]".into())));
        assert_eq!(at("http://[::1]:8080/x"), Some(("[::1]:8080".into(), "[::1]:8080".into())));
        assert_eq!(at("http://127.0.0.1/"), Some(("127.0.0.1:80".into(), "127.0.0.1".into())));
        assert_eq!(at("https://127.0.0.1/"), None);
    }

    /// A server that answers every connection with `reply`, on loopback `ip`; its URL's authority.
    fn answering(ip: &str, reply: &'static [u8]) -> String {
        let l = std::net::TcpListener::bind((ip, 0)).expect("bind");
        let a = l.local_addr().expect("addr");
        std::thread::spawn(move || {
            for mut c in l.incoming().flatten().take(4) {
                let mut buf = [0u8; 1024];
                let _ = c.read(&mut buf);
                let _ = c.write_all(reply);
            }
        });
        a.to_string()
    }

    #[test]
    fn the_ready_check_reads_the_whole_status_line() {
        let ok = answering("127.0.0.1", b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        assert!(super::http_ok(&format!("http://{ok}/health")));
        // A long reason phrase and headers before the 32nd byte change nothing; a 2000 is no 200.
        let long = answering("127.0.0.1", b"HTTP/1.1 200 Everything is absolutely fine here\r\nX: y\r\n\r\n");
        assert!(super::http_ok(&format!("http://{long}/")));
        let not = answering("127.0.0.1", b"HTTP/1.1 2000 OK\r\n\r\n");
        assert!(!super::http_ok(&format!("http://{not}/")));
        let busy = answering("127.0.0.1", b"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n");
        assert!(!super::http_ok(&format!("http://{busy}/")));
    }

    #[test]
    fn the_ready_check_reaches_ipv6_loopback_with_and_without_a_port() {
        if std::net::TcpListener::bind("[::1]:0").is_err() {
            eprintln!("NOTE: no IPv6 loopback here: only the parse is checked");
            assert!(crate::util::url::Url::parse("http://[::1]/").is_ok());
            return;
        }
        let v6 = answering("::1", b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        assert!(super::http_ok(&format!("http://{v6}/")), "{v6}");
        assert!(super::tcp_accepts(&v6), "{v6}");
    }
}
