//! The probe scheduler's poller: one edge-triggered epoll over every probe's sockets, the stop flag
//! and one timerfd, and beside it, for one wait at a time, the sockets that only await a reply
//! ([`Poller::also`]). A wait ends at an instant to the nanosecond in one of two ways, whichever
//! costs the prober less: a sleep with nothing in flight is `ppoll`'s own timeout on the epoll
//! descriptor (one system call; a sleep of up to 50 ms with nothing in flight the scheduler takes
//! in `clock_nanosleep` instead, without the poller, which costs less still), while a wait for a
//! reply first sets the timerfd for the next send and then waits without a timeout, so that the
//! reply's wake-up starts and cancels no kernel timer of its own (on a VM, reprogramming the timer
//! device costs more than the `timerfd_settime`). Where a sandbox forbids `ppoll`, the timerfd
//! gives the nanoseconds for every wait, and the sockets given to [`Poller::also`] join the epoll
//! set.

use super::clock::Instant;
use super::sys::Timer;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// The most events one `epoll_wait` takes.
const EPOLL_MAX: usize = 64;

/// The token of the fallback timer's events, which [`Poller::wait`] keeps to itself.
const TIMER: u64 = u64::MAX - 1;

/// What the poller saw on one descriptor (mio's reading of epoll's flags).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Event {
    pub token: usize,
    flags: u32,
}

impl Event {
    fn has(&self, f: libc::c_int) -> bool {
        self.flags & f as u32 != 0
    }
    pub fn is_readable(&self) -> bool {
        self.has(libc::EPOLLIN | libc::EPOLLPRI)
    }
    pub fn is_writable(&self) -> bool {
        self.has(libc::EPOLLOUT)
    }
    pub fn is_error(&self) -> bool {
        self.has(libc::EPOLLERR)
    }
    pub fn is_read_closed(&self) -> bool {
        self.has(libc::EPOLLHUP) || (self.has(libc::EPOLLIN) && self.has(libc::EPOLLRDHUP))
    }
    pub fn is_write_closed(&self) -> bool {
        self.has(libc::EPOLLHUP) || (self.has(libc::EPOLLOUT) && self.has(libc::EPOLLERR)) || self.flags == libc::EPOLLERR as u32
    }
}

pub(crate) struct Poller {
    ep: OwnedFd,
    events: Vec<libc::epoll_event>,
    /// A timerfd registered in the epoll, and the instant it is set for (None: not set, or rung).
    timer: Timer,
    armed: Option<Instant>,
    /// Its own timed sleep ([`Poller::sleep`]) works here (a sandbox may forbid `ppoll`).
    sleeps: bool,
    /// The next wait's `ppoll` set: the epoll descriptor first, then the descriptors given to
    /// [`Poller::also`] and their tokens.
    polled: Vec<libc::pollfd>,
    tokens: Vec<usize>,
}

impl Poller {
    pub fn new() -> io::Result<Poller> {
        // SAFETY: epoll_create1 takes no pointers; the result is checked before use.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let p = Poller {
            // SAFETY: fd is a fresh descriptor that nothing else owns.
            ep: unsafe { OwnedFd::from_raw_fd(fd) },
            events: vec![libc::epoll_event { events: 0, u64: 0 }; EPOLL_MAX],
            timer: Timer::new()?,
            armed: None,
            sleeps: true,
            polled: vec![libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            }],
            tokens: Vec::new(),
        };
        // Edge-triggered: each expiry is one event, and setting it again needs no read.
        p.ctl(p.timer.fd(), (libc::EPOLLIN | libc::EPOLLET) as u32, TIMER)?;
        Ok(p)
    }

    /// Watch `fd` (edge-triggered) for reading, and for writing if `write`, its events tagged
    /// `token`. Closing the descriptor takes it out of the poller.
    pub fn add(&self, fd: RawFd, token: usize, write: bool) -> io::Result<()> {
        let mut flags = libc::EPOLLET | libc::EPOLLIN | libc::EPOLLRDHUP;
        if write {
            flags |= libc::EPOLLOUT;
        }
        self.ctl(fd, flags as u32, token as u64)
    }

    /// Take `fd` out of the poller (the reverse of [`Poller::add`]): the poller leaves its wait
    /// queue, so that nothing the socket does (a send's buffer given back within the send, on
    /// loopback) calls into the poller.
    pub fn remove(&self, fd: RawFd) -> io::Result<()> {
        self.ctl_op(libc::EPOLL_CTL_DEL, fd, 0, 0)
    }

    /// Wait for `fd` to be readable (or closed, or in error) in the next wait only, beside the
    /// epoll set, its event tagged `token`: a socket that awaits its reply with nothing more to
    /// send (an http probe's request went within its connect). It never enters the epoll set, so
    /// neither adding it there nor the set's callback on its wake-ups costs anything, and its close
    /// needs no taking out: the wait is `ppoll` over the epoll descriptor and these, as a C prober's
    /// `poll`. Level-triggered: the caller reads until the socket would block, and gives the
    /// descriptor again before each wait for as long as it awaits.
    pub fn also(&mut self, fd: RawFd, token: usize) {
        self.polled.push(libc::pollfd {
            fd,
            events: libc::POLLIN | libc::POLLRDHUP,
            revents: 0,
        });
        self.tokens.push(token);
    }

    fn ctl(&self, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        self.ctl_op(libc::EPOLL_CTL_ADD, fd, events, token)
    }

    fn ctl_op(&self, op: libc::c_int, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: ev is a live epoll_event; the kernel copies it.
        if unsafe { libc::epoll_ctl(self.ep.as_raw_fd(), op, fd, &mut ev) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Wait until a watched descriptor is ready or `until` comes (None: no limit); the events seen
    /// (none at the time, or on a signal). `by_timer`: a readiness is expected well before `until`
    /// (a reply): the timerfd is set for `until` (unless it is already) and the wait has no timeout.
    /// A timer set earlier for an instant still to come before `until` is left as it is (no
    /// `timerfd_settime`): it wakes this wait early, with no event, and the caller waits again.
    /// An answer's deadline (a second away, a probe every 10 ms) so costs one setting and one
    /// early wake-up a second instead of a setting per probe.
    pub fn wait(&mut self, until: Option<Instant>, by_timer: bool) -> io::Result<impl Iterator<Item = Event> + '_> {
        let n = match self.wait_once(until, by_timer) {
            Err(e) if self.sleeps && matches!(e.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EPERM)) => {
                self.sleeps = false;
                self.wait_once(until, by_timer)
            }
            r => r,
        };
        self.polled.truncate(1);
        self.tokens.clear();
        let n = match n {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
            r => r?,
        };
        if self.events[..n].iter().any(|e| e.u64 == TIMER) {
            self.armed = None;
        }
        Ok(self.events[..n].iter().filter(|e| e.u64 != TIMER).map(|e| Event {
            token: e.u64 as usize,
            flags: e.events,
        }))
    }

    fn wait_once(&mut self, until: Option<Instant>, by_timer: bool) -> io::Result<usize> {
        if !self.sleeps {
            self.adopt()?;
        }
        let sooner = |a: Instant, u: Instant| a <= u && a > Instant::now();
        match until {
            Some(u) if by_timer && self.armed.is_some_and(|a| sooner(a, u)) => self.block(false),
            Some(u) if self.armed != Some(u) && (by_timer || !self.sleeps) => self.wait_with_timer(u),
            Some(u) if self.armed != Some(u) => self.sleep(u),
            // Nothing to wait for but readiness, or the timer is set for that instant already.
            _ => self.block(false),
        }
    }

    /// Where `ppoll` is forbidden: the descriptors given to [`Poller::also`] join the epoll set
    /// (edge-triggered, for reading) and stay there until they are closed.
    fn adopt(&mut self) -> io::Result<()> {
        for (p, &token) in self.polled[1..].iter().zip(&self.tokens) {
            match self.add(p.fd, token, false) {
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {}
                r => r?,
            }
        }
        self.polled.truncate(1);
        self.tokens.clear();
        Ok(())
    }

    /// Sleep until `until` in `ppoll` on the epoll descriptor (readable when one of its
    /// descriptors has an event), then take the events if there are any: one system call for a
    /// sleep that nothing interrupts. Not `epoll_pwait2` with the same timeout: on this VM a send
    /// right after waking from that measured 1.5-2 µs slower to its echo's reply than after
    /// `ppoll` (or ping's blocking `recvmsg`), which the icmp probe's round trip includes.
    fn sleep(&mut self, until: Instant) -> io::Result<usize> {
        self.poll(Some(until.saturating_duration_since(Instant::now())))
    }

    /// Wait for the epoll set and the descriptors given to [`Poller::also`] with no time limit,
    /// or only look if `at_once`: `epoll_wait` alone when there are none of those.
    fn block(&mut self, at_once: bool) -> io::Result<usize> {
        match (self.polled.len(), at_once) {
            (1, true) => self.epoll_wait(0),
            (1, false) => self.epoll_wait(-1),
            (_, true) => self.poll(Some(Duration::ZERO)),
            (_, false) => self.poll(None),
        }
    }

    /// `ppoll` over the epoll descriptor and the descriptors given to [`Poller::also`]; the epoll
    /// set's events taken if it has any, then theirs (the same flags as epoll's).
    fn poll(&mut self, timeout: Option<Duration>) -> io::Result<usize> {
        let ts = timeout.map(|d| libc::timespec {
            tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        });
        let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
        for p in self.polled.iter_mut() {
            p.revents = 0;
        }
        // SAFETY: polled and ts are live for the call, polled of the length given; no signal mask.
        let n = unsafe {
            libc::ppoll(
                self.polled.as_mut_ptr(),
                self.polled.len() as libc::nfds_t,
                ts_ptr,
                std::ptr::null(),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n == 0 {
            return Ok(0);
        }
        let mut count = if self.polled[0].revents != 0 { self.epoll_wait(0)? } else { 0 };
        let need = EPOLL_MAX + self.tokens.len();
        if self.events.len() < need {
            self.events.resize(need, libc::epoll_event { events: 0, u64: 0 });
        }
        for (p, &token) in self.polled[1..].iter().zip(&self.tokens) {
            if p.revents != 0 {
                // poll's flags are epoll's (POLLIN is EPOLLIN, POLLRDHUP EPOLLRDHUP, ...); a
                // descriptor that was closed (POLLNVAL) is reported as an error.
                let flags = if p.revents & libc::POLLNVAL != 0 {
                    libc::EPOLLERR as u32
                } else {
                    p.revents as u16 as u32
                };
                self.events[count] = libc::epoll_event {
                    events: flags,
                    u64: token as u64,
                };
                count += 1;
            }
        }
        Ok(count)
    }

    /// The timer set for `until` (at once if that has passed), then a wait without a timeout.
    fn wait_with_timer(&mut self, until: Instant) -> io::Result<usize> {
        let now = Instant::now();
        if until <= now {
            return self.block(true);
        }
        self.timer.set(until - now)?;
        self.armed = Some(until);
        self.block(false)
    }

    fn epoll_wait(&mut self, timeout_ms: libc::c_int) -> io::Result<usize> {
        // SAFETY: events is a live buffer of the length given.
        let n = unsafe { libc::epoll_wait(self.ep.as_raw_fd(), self.events.as_mut_ptr(), EPOLL_MAX as libc::c_int, timeout_ms) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n as usize)
    }

    /// Use the timer for every wait from now on (for its test).
    #[cfg(test)]
    fn without_sleep(mut self) -> Poller {
        self.sleeps = false;
        self
    }
}

/// Let this thread's timed waits end when asked, not up to 50 µs later (the default timer slack,
/// which lets the kernel gather wake-ups): the probes' sends keep to their schedule as they did
/// with a timerfd, which has no slack.
pub(crate) fn exact_wakeups() {
    // SAFETY: prctl with integer arguments only; a failure leaves the default slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::Duration;

    /// The three ways a wait ends at its instant: the poller's own sleep, the timer set for a
    /// reply's wait, the timer where that sleep is forbidden.
    fn all() -> Vec<(&'static str, Poller, bool)> {
        vec![
            ("the sleep", Poller::new().unwrap(), false),
            ("the timer for a reply's wait", Poller::new().unwrap(), true),
            ("the fallback timer", Poller::new().unwrap().without_sleep(), false),
        ]
    }

    #[test]
    fn a_wait_ends_at_its_instant_and_not_before() {
        for (how, mut p, by_timer) in all() {
            for ms in [3u64, 12] {
                let t0 = Instant::now();
                let n = p.wait(Some(t0 + Duration::from_millis(ms)), by_timer).unwrap().count();
                assert_eq!(n, 0, "{how}: nothing is watched");
                assert!(t0.elapsed() >= Duration::from_millis(ms), "{how}: woke before its {ms} ms");
            }
            // An instant already past: at once.
            assert_eq!(p.wait(Some(Instant::now()), by_timer).unwrap().count(), 0, "{how}");
        }
    }

    #[test]
    fn readiness_comes_with_its_token_once_per_edge() {
        for (how, mut p, by_timer) in all() {
            let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
            b.set_nonblocking(true).unwrap();
            p.add(b.as_raw_fd(), 7, false).unwrap();
            a.write_all(b"x").unwrap();
            let far = Instant::now() + Duration::from_secs(5);
            let ev: Vec<Event> = p.wait(Some(far), by_timer).unwrap().collect();
            assert_eq!(ev.len(), 1, "{how}");
            assert_eq!(ev[0].token, 7, "{how}");
            assert!(ev[0].is_readable() && !ev[0].is_writable() && !ev[0].is_error(), "{how}: {ev:?}");
            // Edge-triggered: not again until something new comes.
            let soon = Instant::now() + Duration::from_millis(2);
            assert_eq!(p.wait(Some(soon), by_timer).unwrap().count(), 0, "{how}");
            drop(a);
            let ev: Vec<Event> = p.wait(Some(far), by_timer).unwrap().collect();
            assert!(ev.len() == 1 && ev[0].is_read_closed(), "{how}: {ev:?}");
        }
    }

    #[test]
    fn the_timer_moves_with_the_instant_and_is_never_an_event() {
        let mut p = Poller::new().unwrap();
        // Set for 10 s, then asked for 5 ms: the timer is set again, the wait ends at 5 ms.
        let t0 = Instant::now();
        let far = t0 + Duration::from_secs(10);
        assert_eq!(p.wait(Some(t0), true).unwrap().count(), 0);
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        p.add(b.as_raw_fd(), 1, true).unwrap();
        assert_eq!(p.wait(Some(far), true).unwrap().count(), 1, "writable at once");
        assert_eq!(p.armed, Some(far));
        let near = Instant::now() + Duration::from_millis(5);
        assert_eq!(p.wait(Some(near), true).unwrap().count(), 0, "the timer's ring is no event");
        assert!(Instant::now() >= near);
        assert_eq!(p.armed, None, "rung: set again next time");
        drop(a);
    }

    #[test]
    fn a_timer_set_for_a_sooner_instant_is_kept_and_wakes_the_wait_early() {
        let mut p = Poller::new().unwrap();
        let t0 = Instant::now();
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        p.add(b.as_raw_fd(), 1, true).unwrap();
        let soon = t0 + Duration::from_millis(20);
        assert_eq!(p.wait(Some(soon), true).unwrap().count(), 1, "writable at once");
        assert_eq!(p.armed, Some(soon));
        // A later instant: the timer stays set for the sooner one, which ends this wait with no event.
        let later = t0 + Duration::from_secs(10);
        assert_eq!(p.wait(Some(later), true).unwrap().count(), 0);
        assert!(Instant::now() >= soon, "woken by the timer, not before");
        assert_eq!(p.armed, None);
        // The next wait sets it for its own instant.
        let near = Instant::now() + Duration::from_millis(5);
        assert_eq!(p.wait(Some(near), true).unwrap().count(), 0);
        assert!(Instant::now() >= near);
        drop(a);
    }

    /// The descriptors an epoll set holds, from the kernel's own listing of it.
    fn watched(p: &Poller) -> Vec<RawFd> {
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", p.ep.as_raw_fd())).unwrap();
        info.lines()
            .filter_map(|l| l.strip_prefix("tfd:"))
            .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
            .collect()
    }

    #[test]
    fn a_datagram_socket_is_in_the_set_only_while_watched_and_what_came_before_is_reported() {
        let mut p = Poller::new().unwrap();
        let a = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        b.set_nonblocking(true).unwrap();
        let fd = b.as_raw_fd();
        assert!(!watched(&p).contains(&fd));
        // A datagram that comes while the socket is out of the set wakes no wait...
        a.send_to(b"x", b.local_addr().unwrap()).unwrap();
        let soon = Instant::now() + Duration::from_millis(5);
        assert_eq!(p.wait(Some(soon), false).unwrap().count(), 0);
        // ...and is reported at the first wait once watched, though edge-triggered.
        p.add(fd, 3, false).unwrap();
        assert!(watched(&p).contains(&fd));
        let far = Instant::now() + Duration::from_secs(5);
        let ev: Vec<Event> = p.wait(Some(far), false).unwrap().collect();
        assert!(ev.len() == 1 && ev[0].token == 3 && ev[0].is_readable(), "{ev:?}");
        p.remove(fd).unwrap();
        assert!(!watched(&p).contains(&fd), "out of the set again");
        a.send_to(b"y", b.local_addr().unwrap()).unwrap();
        let soon = Instant::now() + Duration::from_millis(5);
        assert_eq!(p.wait(Some(soon), false).unwrap().count(), 0, "unwatched: no wake-up");
    }

    #[test]
    fn a_socket_given_to_also_wakes_its_wait_for_that_wait_only_and_never_enters_the_set() {
        for (how, mut p, by_timer) in all() {
            let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
            b.set_nonblocking(true).unwrap();
            let fd = b.as_raw_fd();
            // Nothing to read: the wait ends at its instant with no event.
            p.also(fd, 5);
            let soon = Instant::now() + Duration::from_millis(3);
            assert_eq!(p.wait(Some(soon), by_timer).unwrap().count(), 0, "{how}");
            a.write_all(b"x").unwrap();
            let far = Instant::now() + Duration::from_secs(5);
            p.also(fd, 5);
            let ev: Vec<Event> = p.wait(Some(far), by_timer).unwrap().collect();
            assert!(
                ev.len() == 1 && ev[0].token == 5 && ev[0].is_readable() && !ev[0].is_error(),
                "{how}: {ev:?}"
            );
            if p.sleeps {
                assert!(!watched(&p).contains(&fd), "{how}: polled beside the set, never in it");
                // Not given again: the unread byte wakes nothing.
                let soon = Instant::now() + Duration::from_millis(3);
                assert_eq!(p.wait(Some(soon), by_timer).unwrap().count(), 0, "{how}");
                // Level-triggered: given again, the byte still unread is reported again.
                p.also(fd, 5);
                assert_eq!(p.wait(Some(far), by_timer).unwrap().count(), 1, "{how}");
            } else {
                // Where ppoll is forbidden the socket joined the epoll set, edge-triggered.
                assert!(watched(&p).contains(&fd), "{how}");
            }
            // Its peer's close is a readiness too (read as the end), beside the set's own events.
            drop(a);
            let (mut c, d) = std::os::unix::net::UnixStream::pair().unwrap();
            p.add(d.as_raw_fd(), 9, false).unwrap();
            c.write_all(b"y").unwrap();
            p.also(fd, 5);
            let mut ev: Vec<(usize, bool)> = p
                .wait(Some(far), by_timer)
                .unwrap()
                .map(|e| (e.token, e.is_read_closed()))
                .collect();
            ev.sort();
            assert_eq!(ev, vec![(5, true), (9, false)], "{how}");
        }
    }
}
