//! Ending calls that wait on a peer which never answers.
//!
//! A flag ([`Cancel`], a phase's deadline) is only seen between calls: a thread blocked in
//! `connect`, `read` or `write` on a server that accepts and stays silent, never accepts, or never
//! reads, sees it only when the call returns, which may be never. A [`Cut`] ends such calls: the
//! sockets made on a thread that [`entered`](Cut::enter) it (through [`Watched`]) and the process
//! groups started there ([`hold_group`]) are registered with it, and [`Cut::cut`] shuts every socket
//! down (`shutdown(2)` wakes a blocked connect, read or write on it, which then fails) and SIGKILLs
//! every group. Whatever registers after the cut is severed at once.
//!
//! [`Cut::arm`] cuts on its own: a moment after `cancel` is set (so that calls in flight on a
//! healthy peer end by themselves first), or at a deadline. Code that classifies an error asks
//! [`cut_here`] whether the failure was the cut's doing, to say so instead of the socket's
//! wording (`Connection reset by peer` for a connect that was cut).

use crate::util::Cancel;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long calls in flight get to end by themselves after a Ctrl-C before [`Cut::arm`] cuts them.
pub const CANCEL_GRACE: Duration = Duration::from_millis(300);

/// Why a cut came.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// The run was stopped (Ctrl-C, SIGTERM, a probe set aborted).
    Interrupted,
    /// The phase's time was up and the call still waited on its peer.
    Deadline,
}

impl Why {
    /// What a call that the cut ended says about it.
    pub fn said(self) -> &'static str {
        match self {
            Why::Interrupted => "still waiting on the peer when interrupted",
            Why::Deadline => "still waiting on the peer at the end of the phase",
        }
    }
}

/// A registered thing to sever.
#[derive(Clone, Copy, Debug)]
enum Held {
    Socket(RawFd),
    Group(libc::pid_t),
}

impl Held {
    fn sever(self) {
        match self {
            // SAFETY: shutdown(2) takes integers and touches no memory of ours. The descriptor is
            // still open: its owner takes the registration back (under the same lock) before it
            // closes it, so the number cannot belong to another file here.
            Held::Socket(fd) => unsafe {
                libc::shutdown(fd, libc::SHUT_RDWR);
            },
            // SAFETY: kill(2) takes integers and touches no memory of ours; the group's leader is
            // not reaped while it is registered, so the group id is still its own. pgid > 1 is
            // checked at registration (never our own group or every process).
            Held::Group(pgid) => unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            },
        }
    }
}

#[derive(Debug, Default)]
struct State {
    next: u64,
    held: BTreeMap<u64, Held>,
    cut: Option<Why>,
}

/// The sockets and process groups a stop severs (see the module's doc). Clones share them.
#[derive(Clone, Debug, Default)]
pub struct Cut(Arc<Mutex<State>>);

thread_local! {
    static CURRENT: RefCell<Option<Cut>> = const { RefCell::new(None) };
}

impl Cut {
    pub fn new() -> Cut {
        Cut::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sever everything registered, and anything registered from now on. Only the first cut's
    /// reason is kept.
    pub fn cut(&self, why: Why) {
        let mut st = self.state();
        st.cut.get_or_insert(why);
        for h in st.held.values() {
            h.sever();
        }
    }

    /// Whether (and why) this has been cut.
    pub fn is_cut(&self) -> Option<Why> {
        self.state().cut
    }

    /// Make this the cut of the calling thread until the guard is dropped: [`Watched`] sockets and
    /// [`hold_group`] groups made on this thread register with it.
    pub fn enter(&self) -> Entered {
        let previous = CURRENT.with(|c| c.replace(Some(self.clone())));
        Entered { previous }
    }

    /// The calling thread's cut, if it entered one.
    pub fn current() -> Option<Cut> {
        CURRENT.with(|c| c.borrow().clone())
    }

    fn hold(&self, h: Held) -> Hold {
        let mut st = self.state();
        if st.cut.is_some() {
            h.sever();
        }
        let id = st.next;
        st.next += 1;
        st.held.insert(id, h);
        Hold(Some((self.clone(), id)))
    }

    /// Cut (as [`Why::Interrupted`]) [`CANCEL_GRACE`] after `cancel` is seen set, or (as
    /// [`Why::Deadline`]) at `deadline`, whichever comes first, from a thread of its own; dropping
    /// the guard disarms it.
    pub fn arm(&self, cancel: &Cancel, deadline: Option<Instant>) -> Armed {
        let done = Arc::new((Mutex::new(false), Condvar::new()));
        let (cut, cancel, d) = (self.clone(), cancel.clone(), done.clone());
        let thread = std::thread::Builder::new()
            .name("cut".into())
            .spawn(move || watch(&cut, &cancel, deadline, &d))
            .ok();
        Armed { done, thread }
    }
}

/// The armed thread's loop: looks at the flag every 20 ms until it cuts or is disarmed.
fn watch(cut: &Cut, cancel: &Cancel, deadline: Option<Instant>, done: &(Mutex<bool>, Condvar)) {
    let (lock, cv) = done;
    let mut disarmed = lock.lock().unwrap_or_else(|p| p.into_inner());
    let mut seen: Option<Instant> = None;
    while !*disarmed {
        let now = Instant::now();
        if cancel.is_cancelled() {
            let at = *seen.get_or_insert(now);
            if now >= at + CANCEL_GRACE {
                cut.cut(Why::Interrupted);
                return;
            }
        }
        if deadline.is_some_and(|d| now >= d) {
            cut.cut(Why::Deadline);
            return;
        }
        disarmed = cv
            .wait_timeout(disarmed, Duration::from_millis(20))
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
}

/// The thread [`Cut::arm`] started; dropping it stops the thread (and waits for it).
pub struct Armed {
    done: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Armed {
    fn drop(&mut self) {
        let (lock, cv) = &*self.done;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cv.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// While alive, the thread's cut is the one [`Cut::enter`] was called on; then the previous one.
pub struct Entered {
    previous: Option<Cut>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

/// A registration with a cut; dropping it takes it back (a no-op when the thread had no cut).
#[derive(Debug)]
pub struct Hold(Option<(Cut, u64)>);

impl Drop for Hold {
    fn drop(&mut self) {
        if let Some((cut, id)) = self.0.take() {
            cut.state().held.remove(&id);
        }
    }
}

/// Register the process group `pgid` (a child started as its group's leader, not yet reaped) with
/// the calling thread's cut: the cut SIGKILLs it. Drop the hold before reaping the leader.
pub fn hold_group(pgid: libc::pid_t) -> Hold {
    match Cut::current() {
        Some(c) if pgid > 1 => c.hold(Held::Group(pgid)),
        _ => Hold(None),
    }
}

/// Whether the calling thread's cut has been cut, and why: a call that failed then failed because
/// of it.
pub fn cut_here() -> Option<Why> {
    Cut::current().and_then(|c| c.is_cut())
}

/// A socket registered with the calling thread's cut (if any) for as long as it is open. The hold
/// is dropped before the socket is closed (field order), so the cut never shuts a descriptor
/// number that another file took since.
#[derive(Debug)]
pub struct Watched<S: AsRawFd> {
    hold: Hold,
    sock: S,
}

impl<S: AsRawFd> Watched<S> {
    pub fn new(sock: S) -> Watched<S> {
        let hold = match Cut::current() {
            Some(c) => c.hold(Held::Socket(sock.as_raw_fd())),
            None => Hold(None),
        };
        Watched { hold, sock }
    }

    /// The same descriptor as another type (a `socket2::Socket` made into a `TcpStream`), still held.
    pub fn map<T: AsRawFd>(self, f: impl FnOnce(S) -> T) -> Watched<T> {
        let Watched { hold, sock } = self;
        let sock = f(sock);
        if let Some((cut, id)) = &hold.0 {
            cut.state().held.insert(*id, Held::Socket(sock.as_raw_fd()));
        }
        Watched { hold, sock }
    }
}

impl<S: AsRawFd> std::ops::Deref for Watched<S> {
    type Target = S;
    fn deref(&self) -> &S {
        &self.sock
    }
}

impl<S: AsRawFd> std::ops::DerefMut for Watched<S> {
    fn deref_mut(&mut self) -> &mut S {
        &mut self.sock
    }
}

impl<S: AsRawFd> AsRawFd for Watched<S> {
    fn as_raw_fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }
}

impl<S: AsRawFd + Read> Read for Watched<S> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.sock.read(buf)
    }
}

impl<S: AsRawFd + Write> Write for Watched<S> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.sock.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.sock.flush()
    }
}

impl<'a, S: AsRawFd> Read for &'a Watched<S>
where
    &'a S: Read,
{
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        (&self.sock).read(buf)
    }
}

impl<'a, S: AsRawFd> Write for &'a Watched<S>
where
    &'a S: Write,
{
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        (&self.sock).write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        (&self.sock).flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    /// A server that accepts and never reads or writes.
    fn silent() -> (TcpListener, std::net::SocketAddr) {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let a = l.local_addr().expect("addr");
        (l, a)
    }

    #[test]
    fn a_cut_ends_a_read_and_a_write_blocked_on_a_silent_peer() {
        let (l, addr) = silent();
        let cut = Cut::new();
        let (c1, c2) = (cut.clone(), cut.clone());
        let reader = std::thread::spawn(move || {
            let _in = c1.enter();
            let s = Watched::new(TcpStream::connect(addr).expect("connect"));
            let mut b = [0u8; 16];
            ((&s).read(&mut b).map_err(|e| e.kind()), cut_here())
        });
        let writer = std::thread::spawn(move || {
            let _in = c2.enter();
            let s = Watched::new(TcpStream::connect(addr).expect("connect"));
            // More than the socket buffers of both ends hold: blocks once they are full.
            let block = vec![0u8; 1 << 20];
            let wrote = (0..256).try_for_each(|_| (&s).write_all(&block));
            (wrote.is_err(), cut_here())
        });
        let _peers = (l.accept().expect("accept"), l.accept().expect("accept"));
        std::thread::sleep(Duration::from_millis(300));
        assert!(!reader.is_finished() && !writer.is_finished(), "both wait on the silent peer");
        let t0 = Instant::now();
        cut.cut(Why::Deadline);
        let (read, why) = reader.join().expect("reader");
        let (write_failed, why_w) = writer.join().expect("writer");
        assert!(t0.elapsed() < Duration::from_secs(10), "the blocked calls returned");
        assert_eq!(read, Ok(0), "a cut read sees the end of the stream");
        assert!(write_failed, "a cut write fails");
        assert_eq!((why, why_w), (Some(Why::Deadline), Some(Why::Deadline)));
    }

    #[test]
    fn a_cut_ends_a_connect_to_a_peer_whose_backlog_is_full() {
        use socket2::{Domain, SockAddr, Socket, Type};
        let l = Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket");
        l.bind(&SockAddr::from("127.0.0.1:0".parse::<std::net::SocketAddr>().expect("addr")))
            .expect("bind");
        l.listen(0).expect("listen");
        let addr = l.local_addr().expect("addr").as_socket().expect("inet");
        // Fill the backlog: later SYNs are dropped, and a connect waits for its timeout.
        let mut filling = Vec::new();
        for _ in 0..4 {
            let s = Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket");
            s.set_nonblocking(true).expect("nonblocking");
            let _ = s.connect(&addr.into());
            filling.push(s);
        }
        std::thread::sleep(Duration::from_millis(100));
        let cut = Cut::new();
        let c = cut.clone();
        let t = std::thread::spawn(move || {
            let _in = c.enter();
            let s = Watched::new(Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket"));
            let r = s.connect_timeout(&addr.into(), Duration::from_secs(30));
            (r.is_err(), cut_here())
        });
        std::thread::sleep(Duration::from_millis(300));
        assert!(!t.is_finished(), "the connect waits on the full backlog");
        let t0 = Instant::now();
        cut.cut(Why::Interrupted);
        let (failed, why) = t.join().expect("thread");
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the connect returned at the cut, not at its timeout"
        );
        assert!(failed);
        assert_eq!(why, Some(Why::Interrupted));
    }

    #[test]
    fn a_socket_made_after_the_cut_is_cut_at_once_and_a_thread_without_a_cut_is_left_alone() {
        let (l, addr) = silent();
        let cut = Cut::new();
        cut.cut(Why::Interrupted);
        {
            let _in = cut.enter();
            let s = Watched::new(TcpStream::connect(addr).expect("connect"));
            let mut b = [0u8; 1];
            assert_eq!((&*s).read(&mut b).expect("read"), 0);
            assert_eq!(cut_here(), Some(Why::Interrupted));
        }
        assert_eq!(cut_here(), None, "the guard gave the thread its old (no) cut back");
        let s = Watched::new(TcpStream::connect(addr).expect("connect"));
        s.set_read_timeout(Some(Duration::from_millis(50))).expect("timeout");
        let mut b = [0u8; 1];
        let e = (&*s).read(&mut b).expect_err("nothing to read: the socket was not cut");
        assert!(matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut));
        drop(l);
    }

    #[test]
    fn a_dropped_socket_is_no_longer_held() {
        let (_l, addr) = silent();
        let cut = Cut::new();
        let _in = cut.enter();
        let s = Watched::new(TcpStream::connect(addr).expect("connect"));
        assert_eq!(cut.state().held.len(), 1);
        drop(s);
        assert!(cut.state().held.is_empty());
    }

    #[test]
    fn armed_it_cuts_a_moment_after_cancel_or_at_its_deadline() {
        let cancel = Cancel::new();
        let cut = Cut::new();
        let armed = cut.arm(&cancel, None);
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(cut.is_cut(), None);
        cancel.cancel();
        let t0 = Instant::now();
        while cut.is_cut().is_none() && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(cut.is_cut(), Some(Why::Interrupted));
        assert!(
            t0.elapsed() >= CANCEL_GRACE - Duration::from_millis(25),
            "calls in flight had their grace"
        );
        drop(armed);
        let cut = Cut::new();
        let armed = cut.arm(&Cancel::new(), Some(Instant::now() + Duration::from_millis(50)));
        let t0 = Instant::now();
        while cut.is_cut().is_none() && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(cut.is_cut(), Some(Why::Deadline));
        drop(armed);
        // Disarmed before its deadline: no cut.
        let cut = Cut::new();
        drop(cut.arm(&Cancel::new(), Some(Instant::now() + Duration::from_millis(100))));
        std::thread::sleep(Duration::from_millis(150));
        assert_eq!(cut.is_cut(), None);
    }
}
