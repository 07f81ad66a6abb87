//! A timerfd in the worker's epoll set: wakes the loop at an open-model send time to the
//! microsecond. epoll's own timeout counts whole milliseconds (mio rounds it up), which would make
//! sends late, and sleeping the rest blind would delay the responses that arrive meanwhile.

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Instant;

pub struct Timer {
    fd: OwnedFd,
    armed: Option<Instant>,
}

impl Timer {
    pub fn new(registry: &Registry, token: Token) -> std::io::Result<Timer> {
        // SAFETY: timerfd_create takes two integers and touches no memory of ours.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by timerfd_create (checked >= 0 above) and nothing else owns
        // it, so the OwnedFd is its only owner and closes it once.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        registry.register(&mut SourceFd(&fd.as_raw_fd()), token, Interest::READABLE)?;
        Ok(Timer { fd, armed: None })
    }

    /// Fire at `at` (once); a no-op when already armed for that instant.
    pub fn arm(&mut self, at: Instant) {
        if self.armed == Some(at) {
            return;
        }
        self.armed = Some(at);
        let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `now` is a valid, writable timespec for the whole call; clock_gettime only fills it.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
        // Instant is CLOCK_MONOTONIC on Linux; go through a delta to stay within the public API.
        let delta = at.saturating_duration_since(Instant::now());
        let mut ns = now.tv_nsec as u64 + u64::from(delta.subsec_nanos());
        let mut s = now.tv_sec as u64 + delta.as_secs();
        if ns >= 1_000_000_000 {
            ns -= 1_000_000_000;
            s += 1;
        }
        // An all-zero value would disarm the timer: fire at least 1 ns after the epoch.
        let value = libc::timespec {
            tv_sec: s as libc::time_t,
            tv_nsec: (ns as libc::c_long).max(1),
        };
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: value,
        };
        // SAFETY: the fd is the timerfd this Timer owns; `spec` is a valid itimerspec that outlives
        // the call and is only read; the old value is not asked for (null is allowed).
        unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) };
    }

    /// The timer fired: clear it.
    pub fn fired(&mut self) {
        let mut buf = [0u8; 8];
        // SAFETY: `buf` is a local 8-byte buffer and at most 8 bytes are read into it; the fd is the
        // timerfd this Timer owns (non-blocking, so an empty read just fails with EAGAIN).
        unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), 8) };
        self.armed = None;
    }
}
