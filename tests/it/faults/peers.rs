//! Hostile peers on loopback, and the clock of the stop tests.
//!
//! A [`Peer`] is a server that accepts and stays silent (with a UDP socket on its port that never
//! reads), one that never accepts (a listen backlog of 0, filled: later SYNs are dropped), one that
//! resets every connection, or one that sends forever without reading. Each runs on threads of the
//! test process, bounded in time ([`PEER_LIFE`]), and stops when dropped.
//!
//! [`run`] starts perflab, optionally sends it SIGINT after a while, and times it: the whole run,
//! and from the SIGINT to its exit. The bounds the tests assert are about not hanging, with room for
//! a busy machine: [`allowance`] is how long perflab takes to start and exit here, now.

use socket2::{Domain, SockRef, Socket, Type};
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_perflab");

/// No peer outlives this, whatever the test does.
const PEER_LIFE: Duration = Duration::from_secs(300);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hostile {
    /// Accepts, never reads or writes.
    Silent,
    /// A listen backlog of 0, full: a connect waits for its SYN to be answered, which never comes.
    NeverAccepts,
    /// Accepts and resets (RST) at once.
    Resets,
    /// Accepts and sends bytes forever, never reading.
    Floods,
}

pub const ALL: [Hostile; 4] = [Hostile::Silent, Hostile::NeverAccepts, Hostile::Resets, Hostile::Floods];

/// A running hostile peer.
pub struct Peer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    _sockets: Vec<Socket>,
    _udp: Option<UdpSocket>,
}

impl Peer {
    pub fn start(kind: Hostile) -> Peer {
        let stop = Arc::new(AtomicBool::new(false));
        if kind == Hostile::NeverAccepts {
            let l = Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket");
            l.bind(&SocketAddr::from(([127, 0, 0, 1], 0)).into()).expect("bind");
            l.listen(0).expect("listen");
            let addr = l.local_addr().expect("addr").as_socket().expect("inet");
            let mut sockets = vec![l];
            for _ in 0..4 {
                let s = Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket");
                s.set_nonblocking(true).expect("nonblocking");
                let _ = s.connect(&addr.into());
                sockets.push(s);
            }
            // Let the handshakes that fit in the backlog complete.
            std::thread::sleep(Duration::from_millis(100));
            return Peer {
                addr,
                stop,
                threads: Vec::new(),
                _sockets: sockets,
                _udp: None,
            };
        }
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().expect("addr");
        l.set_nonblocking(true).expect("nonblocking");
        // A UDP socket on the same port that never reads: datagrams are taken, never answered.
        let udp = (kind == Hostile::Silent).then(|| UdpSocket::bind(addr).expect("udp bind"));
        let s = stop.clone();
        let accept = std::thread::spawn(move || accept_loop(&l, kind, &s));
        Peer {
            addr,
            stop,
            threads: vec![accept],
            _sockets: Vec::new(),
            _udp: udp,
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn accept_loop(l: &TcpListener, kind: Hostile, stop: &Arc<AtomicBool>) {
    let born = Instant::now();
    let mut held = Vec::new();
    let mut floods = Vec::new();
    while !stop.load(Ordering::SeqCst) && born.elapsed() < PEER_LIFE {
        match l.accept() {
            Ok((s, _)) => match kind {
                Hostile::Silent => held.push(s),
                Hostile::Resets => {
                    let _ = SockRef::from(&s).set_linger(Some(Duration::ZERO));
                    drop(s);
                }
                Hostile::Floods => {
                    let stop = stop.clone();
                    floods.push(std::thread::spawn(move || flood(s, &stop, born)));
                }
                Hostile::NeverAccepts => unreachable!("never accepts"),
            },
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    for f in floods {
        let _ = f.join();
    }
}

/// Send 64 KiB blocks until the client is gone, the peer stops or its life ends.
fn flood(s: TcpStream, stop: &AtomicBool, born: Instant) {
    let _ = s.set_nonblocking(false);
    let _ = s.set_write_timeout(Some(Duration::from_millis(50)));
    let block = vec![b'x'; 64 << 10];
    let mut w = &s;
    while !stop.load(Ordering::SeqCst) && born.elapsed() < PEER_LIFE {
        match w.write(&block) {
            Ok(_) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
    }
}

/// How long perflab takes to start and exit on this machine now (the slowest of three `perflab
/// --version`), at least 100 ms: the room every bound gets for a busy machine.
pub fn allowance() -> Duration {
    static A: OnceLock<Duration> = OnceLock::new();
    *A.get_or_init(|| {
        (0..3)
            .map(|_| {
                let t0 = Instant::now();
                let _ = Command::new(BIN).arg("--version").output();
                t0.elapsed()
            })
            .max()
            .unwrap_or_default()
            .max(Duration::from_millis(100))
    })
}

/// What [`run`] saw.
pub struct Ran {
    pub out: Output,
    /// From the start to the exit.
    pub took: Duration,
    /// From the SIGINT to the exit; None when perflab ended before it was sent.
    pub after_interrupt: Option<Duration>,
    /// Still running at the hard limit (then killed).
    pub hung: bool,
}

impl Ran {
    pub fn code(&self) -> Option<i32> {
        self.out.status.code()
    }

    pub fn text(&self) -> String {
        format!(
            "exit {:?} after {:?}\nstdout:\n{}\nstderr:\n{}",
            self.code(),
            self.took,
            String::from_utf8_lossy(&self.out.stdout),
            String::from_utf8_lossy(&self.out.stderr)
        )
    }
}

/// Run `cmd` (stdout and stderr captured), send it SIGINT after `interrupt` when given, and kill it
/// (SIGKILL, by its PID) if it still runs after `hard`.
pub fn run(cmd: Command, interrupt: Option<Duration>, hard: Duration) -> Ran {
    let t0 = Instant::now();
    run_until(cmd, |_| interrupt.is_some_and(|d| t0.elapsed() >= d), hard)
}

/// [`run`], sending SIGINT once `when(elapsed)` says so (asked every 5 ms while perflab runs).
pub fn run_until(mut cmd: Command, mut when: impl FnMut(Duration) -> bool, hard: Duration) -> Ran {
    let t0 = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start perflab");
    let pid = child.id() as libc::pid_t;
    let out_reader = reader(child.stdout.take());
    let err_reader = reader(child.stderr.take());
    let mut sent: Option<Instant> = None;
    let mut hung = false;
    let status = loop {
        if let Ok(Some(st)) = child.try_wait() {
            break st;
        }
        if sent.is_none() && when(t0.elapsed()) {
            // SAFETY: kill(2) on the child we started and have not reaped: its PID is still its own.
            unsafe { libc::kill(pid, libc::SIGINT) };
            sent = Some(Instant::now());
        }
        if t0.elapsed() >= hard {
            hung = true;
            let _ = child.kill();
            break child.wait().expect("wait");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let ended = Instant::now();
    let out = Output {
        status,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
    };
    Ran {
        out,
        took: ended - t0,
        after_interrupt: sent.map(|s| ended - s),
        hung,
    }
}

fn reader<R: std::io::Read + Send + 'static>(p: Option<R>) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut b = Vec::new();
        if let Some(mut p) = p {
            let _ = p.read_to_end(&mut b);
        }
        b
    })
}

/// A perflab command line.
pub fn perflab(args: &[String]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args);
    c
}

/// No panic, no backtrace, no Rust type in what perflab printed.
pub fn no_internals(r: &Ran, what: &str) {
    let all = r.text();
    for bad in ["panicked", "RUST_BACKTRACE", "Os {", "Custom {", "kind:"] {
        assert!(!all.contains(bad), "{what}: `{bad}` in the output:\n{all}");
    }
}

/// Each case's `f`, at most `width` at a time.
pub fn in_parallel<T: Sync, R: Send>(cases: &[T], width: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let mut out = Vec::new();
    for chunk in cases.chunks(width.max(1)) {
        let r: Vec<R> = std::thread::scope(|s| {
            let hs: Vec<_> = chunk.iter().map(|c| s.spawn(|| f(c))).collect();
            hs.into_iter().map(|h| h.join().expect("case thread")).collect()
        });
        out.extend(r);
    }
    out
}

/// Flush stdout (the tests print what each case measured).
pub fn flush() {
    let _ = std::io::stdout().flush();
}
