//! send(2) and recv(2) on a connection, as plain system calls. libc's wrappers are cancellation
//! points that switch asynchronous cancellation on and off around every call; the workers never
//! cancel threads, and on the keep-alive fast path that switching was a sixth of the client's user
//! time (perf, 800-byte responses from nginx at c = 10).

use std::io;
use std::os::fd::AsRawFd;

/// Send what `buf` holds; never raises SIGPIPE.
pub fn send(s: &impl AsRawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: the pointer and length describe `buf`, which outlives the call and is only read; the
    // destination address is null with length 0, which a connected socket requires. A bad fd only
    // makes the call fail (EBADF).
    let n = unsafe {
        libc::syscall(
            libc::SYS_sendto,
            s.as_raw_fd(),
            buf.as_ptr(),
            buf.len(),
            libc::MSG_NOSIGNAL,
            std::ptr::null::<libc::sockaddr>(),
            0,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Receive into `buf`; Ok(0) at the end of the stream.
pub fn recv(s: &impl AsRawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: the pointer and length describe `buf`, which is exclusively borrowed for the call and
    // which the kernel fills at most up to its length; the source address is not asked for (both
    // pointers null). A bad fd only makes the call fail (EBADF).
    let n = unsafe {
        libc::syscall(
            libc::SYS_recvfrom,
            s.as_raw_fd(),
            buf.as_mut_ptr(),
            buf.len(),
            0,
            std::ptr::null_mut::<libc::sockaddr>(),
            std::ptr::null_mut::<libc::socklen_t>(),
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    #[test]
    fn round_trip_end_and_errors() {
        let (a, b) = UnixStream::pair().expect("pair");
        assert_eq!(send(&a, b"hello").expect("send"), 5);
        let mut buf = [0u8; 16];
        assert_eq!(recv(&b, &mut buf).expect("recv"), 5);
        assert_eq!(&buf[..5], b"hello");
        b.set_nonblocking(true).expect("nonblocking");
        assert_eq!(recv(&b, &mut buf).expect_err("empty").kind(), io::ErrorKind::WouldBlock);
        drop(a);
        assert_eq!(recv(&b, &mut buf).expect("eof"), 0);
        // The peer is gone: EPIPE as an error, not a signal that kills the test.
        assert_eq!(send(&b, b"x").expect_err("closed").kind(), io::ErrorKind::BrokenPipe);
    }
}
