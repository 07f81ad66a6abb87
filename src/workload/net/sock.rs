//! The client's sockets: connecting with the buffer sizes set before the handshake (so the window
//! scale is negotiated for them), the connection's header, `TCP_INFO`, MSG_ZEROCOPY sends, and the
//! classes of the errors a net run can end with.

use crate::util::cut::{cut_here, Watched};
use crate::util::netwire::Header;
use socket2::{Domain, Protocol, Socket, Type};
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

/// How a connection failed, for the error table and the trial's failure line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ErrorClass {
    /// Nothing listens on the target.
    ConnectRefused,
    ConnectTimeout,
    /// The server reset the connection or its end is gone (ECONNRESET, EPIPE).
    Reset,
    /// The server closed the connection before the test's end.
    Closed,
    /// No answer within the timeout.
    Timeout,
    /// The server answered something that is not the protocol.
    Protocol,
    Other,
}

impl ErrorClass {
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::ConnectRefused => "connect_refused",
            ErrorClass::ConnectTimeout => "connect_timeout",
            ErrorClass::Reset => "reset",
            ErrorClass::Closed => "closed",
            ErrorClass::Timeout => "timeout",
            ErrorClass::Protocol => "protocol",
            ErrorClass::Other => "other",
        }
    }

    pub fn of_io(e: &std::io::Error, connecting: bool) -> ErrorClass {
        use std::io::ErrorKind as K;
        match e.kind() {
            K::ConnectionRefused => ErrorClass::ConnectRefused,
            K::TimedOut | K::WouldBlock if connecting => ErrorClass::ConnectTimeout,
            K::TimedOut | K::WouldBlock => ErrorClass::Timeout,
            K::ConnectionReset | K::BrokenPipe | K::ConnectionAborted => ErrorClass::Reset,
            K::UnexpectedEof => ErrorClass::Closed,
            _ => ErrorClass::Other,
        }
    }
}

/// A classified error: `reset: stream 0 after 1.2 GB: Connection reset by peer (os error 104)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetError {
    pub class: ErrorClass,
    pub message: String,
}

impl NetError {
    /// A failed call; one that the run's cut ended (its peer still silent at the end of the phase,
    /// or Ctrl-C) says so rather than what the shut socket answered.
    pub fn io(e: &std::io::Error, connecting: bool, what: &str) -> NetError {
        if let Some(why) = cut_here() {
            return NetError {
                class: if connecting {
                    ErrorClass::ConnectTimeout
                } else {
                    ErrorClass::Timeout
                },
                message: format!("{what}: {}", why.said()),
            };
        }
        NetError {
            class: ErrorClass::of_io(e, connecting),
            message: format!("{what}: {e}"),
        }
    }

    pub fn line(&self) -> String {
        format!("{}: {}", self.class.name(), self.message)
    }
}

/// How long a connect or a silent server is waited for.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// Connect to the server (buffers set first when asked), and send the header. The socket is held
/// by the thread's cut (the driver's: see `driver::coordinator::drive`), so that a server that
/// never accepts, never reads or never answers cannot keep the worker past the run's end.
pub fn connect(target: SocketAddr, header: &Header) -> Result<Watched<TcpStream>, NetError> {
    let fail = |e: std::io::Error| NetError::io(&e, true, &format!("connecting to {target}"));
    let s = Watched::new(Socket::new(Domain::for_address(target), Type::STREAM, Some(Protocol::TCP)).map_err(fail)?);
    if header.buffer > 0 {
        s.set_recv_buffer_size(header.buffer as usize).map_err(fail)?;
        s.set_send_buffer_size(header.buffer as usize).map_err(fail)?;
    }
    s.connect_timeout(&target.into(), TIMEOUT).map_err(fail)?;
    s.set_tcp_nodelay(true).map_err(fail)?;
    let mut c = s.map(TcpStream::from);
    c.write_all(&header.encode())
        .map_err(|e| NetError::io(&e, false, "sending the header"))?;
    Ok(c)
}

/// The kernel's `TCP_INFO` figures perflab reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// All segments retransmitted on this connection so far.
    pub total_retrans: u32,
    /// Smoothed RTT and its variation, µs.
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub snd_cwnd: u32,
}

/// Read `TCP_INFO` of a connected socket.
pub fn tcp_info(c: &TcpStream) -> Option<TcpInfo> {
    // SAFETY: tcp_info is a C struct of integers, for which all-zero bytes are a valid value.
    let mut ti: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `ti` and `len` are valid and writable for the whole call, `len` holds `ti`'s size;
    // the kernel writes at most `len` bytes.
    let r = unsafe {
        libc::getsockopt(
            c.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut ti as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    (r == 0).then_some(TcpInfo {
        total_retrans: ti.tcpi_total_retrans,
        rtt_us: ti.tcpi_rtt,
        rttvar_us: ti.tcpi_rttvar,
        snd_cwnd: ti.tcpi_snd_cwnd,
    })
}

/// SO_ZEROCOPY (asm-generic/socket.h).
const SO_ZEROCOPY: libc::c_int = 60;

/// Ask for MSG_ZEROCOPY sends on this socket; an error says the kernel does not have it.
pub fn enable_zerocopy(c: &TcpStream) -> std::io::Result<()> {
    let one: libc::c_int = 1;
    // SAFETY: `one` lives for the whole call and its size is passed; setsockopt only reads it.
    let r = unsafe {
        libc::setsockopt(
            c.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_ZEROCOPY,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Send `buf` whole with MSG_ZEROCOPY. The buffer is never changed while the kernel may still read
/// it (perflab sends the same constant block), so completions are only drained, not waited for.
pub fn send_zerocopy(c: &TcpStream, buf: &[u8]) -> std::io::Result<()> {
    let mut off = 0;
    while off < buf.len() {
        let rest = &buf[off..];
        // SAFETY: `rest` is a valid readable slice for the whole call and its length is passed.
        let n = unsafe { libc::send(c.as_raw_fd(), rest.as_ptr().cast(), rest.len(), libc::MSG_ZEROCOPY) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::ENOBUFS) => drain_completions(c),
                Some(libc::EINTR) => {}
                _ => return Err(e),
            }
            continue;
        }
        off += n as usize;
    }
    drain_completions(c);
    Ok(())
}

/// Read (and drop) the zero-copy completion notices waiting on the socket's error queue.
fn drain_completions(c: &TcpStream) {
    let mut control = [0u8; 256];
    loop {
        // SAFETY: msghdr is a C struct of integers and pointers, for which all-zero is valid.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = control.len() as _;
        // SAFETY: `msg` points at `control`, valid and writable for its length for the whole call;
        // no data buffers are given.
        let r = unsafe { libc::recvmsg(c.as_raw_fd(), &mut msg, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
        if r < 0 {
            return;
        }
    }
}

/// Set a UDP socket's send buffer (best effort: the kernel caps it at `net.core.wmem_max`).
pub fn set_send_buffer(u: &std::net::UdpSocket, bytes: u32) {
    let s = socket2::SockRef::from(u);
    let _ = s.set_send_buffer_size(bytes as usize);
}
