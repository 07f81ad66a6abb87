//! The system calls the probes need beyond std: a stop signal that `ppoll` can wait on (an
//! eventfd), waiting for readable descriptors with microsecond timeouts, receiving a datagram with
//! the kernel's receive timestamp (`SO_TIMESTAMPNS`, as iputils ping does), raw sockets, a TCP
//! connect without mode switches, a nanosecond timer for the poller, a TCP socket's segment and byte counts (`TCP_INFO`), and waiting
//! for a child's exit (pidfd).

use std::io;
use std::mem::{size_of, size_of_val, zeroed};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// The Linux architectures with the generic socket constants (x86, x86-64, arm, aarch64, riscv),
/// for which libc does not export the two below.
const GENERIC_SOCKET_CONSTANTS: bool = cfg!(not(any(
    target_arch = "mips",
    target_arch = "mips64",
    target_arch = "sparc64",
    target_arch = "powerpc",
    target_arch = "powerpc64"
)));

/// `SO_TIMESTAMPNS` (= `SCM_TIMESTAMPNS`), where its number is known.
const SO_TIMESTAMPNS: Option<libc::c_int> = if GENERIC_SOCKET_CONSTANTS { Some(35) } else { None };

/// `SO_ATTACH_FILTER`, where its number is known.
const SO_ATTACH_FILTER: Option<libc::c_int> = if GENERIC_SOCKET_CONSTANTS { Some(26) } else { None };

/// The wall clock in nanoseconds since the Unix epoch (`CLOCK_REALTIME`, the clock of the kernel's
/// receive timestamps).
pub fn realtime_ns() -> i64 {
    // SAFETY: timespec is plain data; clock_gettime only writes it.
    let mut ts: libc::timespec = unsafe { zeroed() };
    // SAFETY: a valid clock id and a valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// A level-triggered stop flag: an eventfd that becomes readable once `set` and stays so, so that
/// every loop waiting in `ppoll` (or in [`Stop::wait`]) wakes at once. An [`abort`](Stop::abort)
/// is a stop that does not wait for the probes in flight either.
#[derive(Debug)]
pub struct Stop {
    fd: OwnedFd,
    /// Set with the eventfd, for a loop that reads the flag without a system call.
    raised: std::sync::atomic::AtomicBool,
    aborted: std::sync::atomic::AtomicBool,
}

impl Stop {
    pub fn new() -> io::Result<Stop> {
        // SAFETY: eventfd takes no pointers; the result is checked before use.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Stop {
            fd,
            raised: std::sync::atomic::AtomicBool::new(false),
            aborted: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Stop, and drop the probes in flight rather than wait for them.
    pub fn abort(&self) {
        self.aborted.store(true, std::sync::atomic::Ordering::SeqCst);
        self.set();
    }

    pub fn is_aborted(&self) -> bool {
        self.aborted.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn set(&self) {
        self.raised.store(true, std::sync::atomic::Ordering::SeqCst);
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our own eventfd.
        unsafe { libc::write(self.fd.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }

    pub fn is_set(&self) -> bool {
        self.raised.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Sleep up to `d`; true when woken by the stop flag.
    pub fn wait(&self, d: Duration) -> bool {
        poll_in(&[self.fd.as_raw_fd()], Some(d)).map(|m| m & 1 != 0).unwrap_or(false)
    }
}

/// Wait until one of `fds` (at most 4) is readable or `timeout` passes (None: no limit). Returns a
/// bit mask of the readable ones (bit i for fds[i]); 0 on timeout or a signal.
pub fn poll_in(fds: &[RawFd], timeout: Option<Duration>) -> io::Result<u32> {
    let mut pfds = [libc::pollfd {
        fd: -1,
        events: 0,
        revents: 0,
    }; 4];
    let n = fds.len().min(4);
    for (p, fd) in pfds.iter_mut().zip(fds) {
        *p = libc::pollfd {
            fd: *fd,
            events: libc::POLLIN,
            revents: 0,
        };
    }
    let ts = timeout.map(|d| libc::timespec {
        tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    });
    let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: pfds holds n valid pollfd entries; tsp is null or points to a live timespec.
    let r = unsafe { libc::ppoll(pfds.as_mut_ptr(), n as libc::nfds_t, tsp, std::ptr::null()) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted { Ok(0) } else { Err(e) };
    }
    let mut mask = 0;
    for (i, p) in pfds[..n].iter().enumerate() {
        if p.revents & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0 {
            mask |= 1 << i;
        }
    }
    Ok(mask)
}

/// Ask the kernel to stamp each received datagram with its arrival time; false where unsupported.
pub fn enable_rx_timestamps(fd: RawFd) -> bool {
    let Some(opt) = SO_TIMESTAMPNS else { return false };
    let on: libc::c_int = 1;
    // SAFETY: a valid option value of the declared size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            (&on as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as u32,
        )
    };
    r == 0
}

/// Attach a classic BPF program to a socket, so the kernel drops what the program rejects
/// before it wakes us; false where it could not be attached.
pub fn attach_filter(fd: RawFd, program: &[libc::sock_filter]) -> bool {
    let Some(opt) = SO_ATTACH_FILTER else { return false };
    let prog = libc::sock_fprog {
        len: program.len() as libc::c_ushort,
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    setsockopt(fd, libc::SOL_SOCKET, opt, &prog).is_ok()
}

/// One datagram, without blocking: Ok(None) when none is waiting. Returns its length and the
/// kernel's receive timestamp (ns since the epoch) when the socket has them enabled.
pub fn recv_stamped(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<(usize, Option<i64>)>> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut control = [0u64; 16];
    // SAFETY: msghdr is plain data; every pointer in it is set below.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = size_of_val(&control) as _;
    let n = loop {
        // SAFETY: msg points to a live iovec over buf and a live control buffer of the given sizes.
        let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
        if n >= 0 {
            break n as usize;
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return Ok(None),
            _ => return Err(e),
        }
    };
    let mut stamp = None;
    // SAFETY: msg was filled by recvmsg; the CMSG_* macros walk its control buffer within
    // msg_controllen, and a timestamp's data is a timespec (read unaligned).
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && Some((*c).cmsg_type) == SO_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                stamp = Some(ts.tv_sec * 1_000_000_000 + ts.tv_nsec);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok(Some((n.min(buf.len()), stamp)))
}

/// A socket of `domain`/`ty`/`protocol`, non-blocking and close-on-exec.
pub fn socket(domain: libc::c_int, ty: libc::c_int, protocol: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: socket takes no pointers; the result is checked before use.
    let fd = unsafe { libc::socket(domain, ty | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, protocol) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `addr` as a sockaddr_storage and its length.
fn sockaddr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data, large enough for either family.
    let mut ss: libc::sockaddr_storage = unsafe { zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_in fits in sockaddr_storage, which is suitably aligned.
            unsafe { std::ptr::write((&mut ss as *mut libc::sockaddr_storage).cast(), sin) };
            size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr { s6_addr: a.ip().octets() },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_in6 fits in sockaddr_storage, which is suitably aligned.
            unsafe { std::ptr::write((&mut ss as *mut libc::sockaddr_storage).cast(), sin6) };
            size_of::<libc::sockaddr_in6>()
        }
    };
    (ss, len as libc::socklen_t)
}

/// Connect a datagram or raw socket to `addr` (the kernel then passes on only its replies).
pub fn connect(fd: RawFd, addr: &SocketAddr) -> io::Result<()> {
    let (ss, len) = sockaddr(addr);
    // SAFETY: ss holds a valid sockaddr of length len.
    let r = unsafe { libc::connect(fd, (&ss as *const libc::sockaddr_storage).cast(), len) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A TCP connection to `addr` begun: a non-blocking, close-on-exec socket (one system call, where
/// std's `connect_timeout` adds two `ioctl`s to switch the mode) and its `connect`, which the
/// poller then sees end (writable: connected; an error or a hang-up: [`connect_failure`]). A
/// refusal at once is `ConnectionRefused`.
pub fn connect_start(addr: &SocketAddr) -> io::Result<TcpStream> {
    let domain = if addr.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 };
    let fd = socket(domain, libc::SOCK_STREAM, 0)?;
    let (ss, len) = sockaddr(addr);
    // SAFETY: ss holds a valid sockaddr of length len; fd is our live socket.
    let r = unsafe { libc::connect(fd.as_raw_fd(), (&ss as *const libc::sockaddr_storage).cast(), len) };
    // errno read directly: an io::Error made for EINPROGRESS and dropped would be one more page of
    // code a probe runs.
    // SAFETY: __errno_location returns this thread's errno.
    if r < 0 && unsafe { *libc::__errno_location() } != libc::EINPROGRESS {
        return Err(io::Error::last_os_error());
    }
    Ok(TcpStream::from(fd))
}

/// Why a connect that the poller saw end with an error or a hang-up failed (refused when the
/// socket does not say).
pub fn connect_failure(s: &TcpStream) -> io::Error {
    socket_error(s.as_raw_fd()).unwrap_or_else(|| io::ErrorKind::ConnectionRefused.into())
}

/// A one-shot timer the poller can wait on (a timerfd on the monotonic clock, nanosecond
/// precision, where the poller's own timeout counts whole milliseconds).
pub struct Timer(OwnedFd);

impl Timer {
    pub fn new() -> io::Result<Timer> {
        // SAFETY: timerfd_create takes no pointers; the result is checked before use.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor that nothing else owns.
        Ok(Timer(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    /// Ring once, `d` from now (at least a nanosecond: zero would disarm it). Setting it again
    /// replaces the time, and its count of expiries starts again from zero, so it needs no read.
    pub fn set(&self, d: Duration) -> io::Result<()> {
        let d = d.max(Duration::from_nanos(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec {
                tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
                tv_nsec: d.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: a live itimerspec; the old value is not asked for.
        let r = unsafe { libc::timerfd_settime(self.0.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// A socket's pending error (`SO_ERROR`), if any.
fn socket_error(fd: RawFd) -> Option<io::Error> {
    let mut err: libc::c_int = 0;
    let mut len = size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: err and len are live and len is err's size.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            (&mut err as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    (r == 0 && err != 0).then(|| io::Error::from_raw_os_error(err))
}

/// Send `buf` on a connected socket; returns the bytes sent.
pub fn send(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: buf is a live slice of the given length.
        let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Set an integer or struct socket option.
pub fn setsockopt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, value: &T) -> io::Result<()> {
    // SAFETY: value is a live T and its size is passed with it.
    let r = unsafe { libc::setsockopt(fd, level, name, (value as *const T).cast(), size_of::<T>() as libc::socklen_t) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// What `TCP_INFO` says of a TCP socket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// The handshake is done (`TCP_ESTABLISHED`).
    pub established: bool,
    pub segs_out: u64,
    pub segs_in: u64,
    /// Bytes sent and acknowledged (the SYN counts as one).
    pub bytes_acked: u64,
    pub bytes_received: u64,
}

/// A TCP socket's state and its segment and byte counts so far (`TCP_INFO`, one system call);
/// None where the kernel does not say.
pub fn tcp_info(s: &TcpStream) -> Option<TcpInfo> {
    /// `TCP_ESTABLISHED` in `tcpi_state` (include/net/tcp_states.h).
    const ESTABLISHED: u8 = 1;
    // The fields read here end with tcpi_segs_in (Linux 4.2); an older kernel writes less.
    const NEEDED: usize = std::mem::offset_of!(libc::tcp_info, tcpi_segs_in) + size_of::<u32>();
    // Not zeroed first: 232 bytes cleared by a call to memset, one more page of code for a tcp
    // probe to run (docs/probes.md, Cost); only what the kernel wrote is read.
    let mut info = std::mem::MaybeUninit::<libc::tcp_info>::uninit();
    let mut len = size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: info and len are live and len is its size.
    let r = unsafe { libc::getsockopt(s.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_INFO, info.as_mut_ptr().cast(), &mut len) };
    if r != 0 || (len as usize) < NEEDED {
        return None;
    }
    let info = info.as_ptr();
    // SAFETY: the kernel wrote the first len bytes, which hold every field read here (NEEDED);
    // each is plain data read in place.
    unsafe {
        Some(TcpInfo {
            established: (*info).tcpi_state == ESTABLISHED,
            segs_out: (*info).tcpi_segs_out as u64,
            segs_in: (*info).tcpi_segs_in as u64,
            bytes_acked: (*info).tcpi_bytes_acked,
            bytes_received: (*info).tcpi_bytes_received,
        })
    }
}

/// A descriptor that becomes readable when process `pid` (our child) exits; None where pidfds are
/// not supported (Linux < 5.3).
pub fn pidfd(pid: u32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags; the result is checked before use.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: fd is a fresh descriptor that nothing else owns.
    Some(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// SIGKILL to the process group `pgid` (a child started as its own group leader).
pub fn kill_group(pgid: u32) {
    // SAFETY: kill takes no pointers; a group that is gone gives ESRCH, which is fine.
    unsafe { libc::kill(-(pgid as libc::pid_t), libc::SIGKILL) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_start_connects_and_a_closed_port_is_refused() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let s = connect_start(&addr).expect("connects to a listener");
        let (peer, _) = l.accept().unwrap();
        assert_eq!(peer.peer_addr().unwrap(), s.local_addr().unwrap());
        drop((s, peer, l));
        // The listener is gone: nothing listens on its port now. On loopback the refusal comes
        // at once or as the connect's error, which the poll then shows.
        let e = match connect_start(&addr) {
            Err(e) => e,
            Ok(s) => {
                let mut p = libc::pollfd {
                    fd: s.as_raw_fd(),
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: one live pollfd.
                assert_eq!(unsafe { libc::poll(&mut p, 1, 5000) }, 1);
                assert_ne!(p.revents & (libc::POLLERR | libc::POLLHUP), 0);
                connect_failure(&s)
            }
        };
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused, "{e}");
    }

    #[test]
    fn the_timer_rings_once_after_its_time() {
        let t = Timer::new().unwrap();
        let t0 = std::time::Instant::now();
        t.set(Duration::from_millis(20)).unwrap();
        assert_eq!(poll_in(&[t.fd()], Some(Duration::from_secs(5))).unwrap(), 1);
        assert!(t0.elapsed() >= Duration::from_millis(20));
        // Set again (without a read), it is quiet until its new time.
        t.set(Duration::from_secs(60)).unwrap();
        assert_eq!(poll_in(&[t.fd()], Some(Duration::ZERO)).unwrap(), 0);
    }

    #[test]
    fn stop_wakes_waiters_and_stays_set() {
        let s = Stop::new().unwrap();
        assert!(!s.is_set());
        assert!(!s.wait(Duration::from_millis(1)));
        s.set();
        assert!(s.is_set());
        assert!(s.wait(Duration::from_secs(5)));
        assert!(s.is_set());
    }
}
