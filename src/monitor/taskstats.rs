//! A whole process's context switches, its exited threads included, from the kernel's taskstats
//! (generic netlink family `TASKSTATS`, `TASKSTATS_CMD_GET` for a thread group).
//!
//! `/proc/PID/status` counts the switches of the process's main thread only, and a thread that
//! exited takes its own with it: a server with a thread per connection would look as if it never
//! switched. The kernel adds an exiting thread's counts to its thread group's, which taskstats
//! reports (like `getrusage(RUSAGE_SELF)` from inside). Asking needs CAP_NET_ADMIN; without it (or a
//! kernel without taskstats) [`Taskstats::open`] gives None and the monitor reads `status`.

use std::time::Duration;

const NETLINK_GENERIC: i32 = 16;
const GENL_ID_CTRL: u16 = 16;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
const TASKSTATS_CMD_GET: u8 = 1;
const TASKSTATS_CMD_ATTR_TGID: u16 = 2;
const TASKSTATS_TYPE_STATS: u16 = 3;
const TASKSTATS_TYPE_AGGR_TGID: u16 = 5;
const NLM_F_REQUEST: u16 = 1;
const NLMSG_ERROR: u16 = 2;
/// Offsets of `nvcsw` and `nivcsw` in `struct taskstats` (linux/taskstats.h, version ≥ 1).
const NVCSW_AT: usize = 272;
const NIVCSW_AT: usize = 280;

/// An open taskstats socket.
pub struct Taskstats {
    fd: i32,
    family: u16,
    seq: u32,
}

/// One netlink attribute: length, type, payload, padded to 4 bytes.
fn attr(kind: u16, data: &[u8]) -> Vec<u8> {
    let len = 4 + data.len();
    let mut v = Vec::with_capacity(len + 3);
    v.extend_from_slice(&(len as u16).to_ne_bytes());
    v.extend_from_slice(&kind.to_ne_bytes());
    v.extend_from_slice(data);
    v.resize(len.div_ceil(4) * 4, 0);
    v
}

/// A generic netlink request: netlink header, genl header (command, version 1), attributes.
fn message(kind: u16, seq: u32, cmd: u8, attrs: &[u8]) -> Vec<u8> {
    let len = 16 + 4 + attrs.len();
    let mut v = Vec::with_capacity(len);
    v.extend_from_slice(&(len as u32).to_ne_bytes());
    v.extend_from_slice(&kind.to_ne_bytes());
    v.extend_from_slice(&NLM_F_REQUEST.to_ne_bytes());
    v.extend_from_slice(&seq.to_ne_bytes());
    v.extend_from_slice(&0u32.to_ne_bytes());
    v.extend_from_slice(&[cmd, 1, 0, 0]);
    v.extend_from_slice(attrs);
    v
}

/// The attributes of `buf` as (type, payload).
fn attrs(mut buf: &[u8]) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    while buf.len() >= 4 {
        let len = u16::from_ne_bytes([buf[0], buf[1]]) as usize;
        let kind = u16::from_ne_bytes([buf[2], buf[3]]) & 0x3fff;
        if len < 4 || len > buf.len() {
            break;
        }
        out.push((kind, &buf[4..len]));
        buf = &buf[(len.div_ceil(4) * 4).min(buf.len())..];
    }
    out
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

impl Taskstats {
    /// The socket, bound, with the family resolved; None where taskstats cannot be asked.
    pub fn open() -> Option<Taskstats> {
        // SAFETY: socket takes no pointers; a failure returns -1, checked.
        let fd = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, NETLINK_GENERIC) };
        if fd < 0 {
            return None;
        }
        let mut t = Taskstats { fd, family: 0, seq: 0 };
        let timeout = libc::timeval {
            tv_sec: 0,
            tv_usec: Duration::from_millis(200).as_micros() as libc::suseconds_t,
        };
        // SAFETY: `timeout` is a valid timeval that outlives the call, its size is passed.
        let set = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&timeout as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if set != 0 {
            return None;
        }
        let reply = t.ask(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, &attr(CTRL_ATTR_FAMILY_NAME, b"TASKSTATS\0"))?;
        let id = attrs(&reply).into_iter().find(|(k, _)| *k == CTRL_ATTR_FAMILY_ID)?.1;
        t.family = u16::from_ne_bytes(id.get(..2)?.try_into().ok()?);
        // A first question: without the privilege the kernel refuses it.
        t.switches(std::process::id() as i32)?;
        Some(t)
    }

    /// Send one request and return the reply's attributes (after the genl header); None on an
    /// error reply, a timeout or a short read.
    fn ask(&mut self, kind: u16, cmd: u8, body: &[u8]) -> Option<Vec<u8>> {
        self.seq = self.seq.wrapping_add(1);
        let msg = message(kind, self.seq, cmd, body);
        // SAFETY: `msg` is a live buffer of `msg.len()` bytes; a short or failed send is checked.
        let sent = unsafe { libc::send(self.fd, msg.as_ptr().cast(), msg.len(), 0) };
        if sent != msg.len() as isize {
            return None;
        }
        let mut buf = vec![0u8; 4096];
        loop {
            // SAFETY: `buf` is a live, writable buffer of `buf.len()` bytes.
            let n = unsafe { libc::recv(self.fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n < 20 {
                return None;
            }
            let n = n as usize;
            let len = (u32::from_ne_bytes(buf[0..4].try_into().ok()?) as usize).min(n);
            let kind = u16::from_ne_bytes([buf[4], buf[5]]);
            let seq = u32::from_ne_bytes(buf[8..12].try_into().ok()?);
            if seq != self.seq {
                continue; // a late reply to an earlier question
            }
            if kind == NLMSG_ERROR || len < 20 {
                return None;
            }
            return Some(buf[20..len].to_vec());
        }
    }

    /// The thread group's (voluntary, involuntary) context switches, its exited threads included.
    pub fn switches(&mut self, tgid: i32) -> Option<(u64, u64)> {
        let reply = self.ask(
            self.family,
            TASKSTATS_CMD_GET,
            &attr(TASKSTATS_CMD_ATTR_TGID, &(tgid as u32).to_ne_bytes()),
        )?;
        let aggr = attrs(&reply).into_iter().find(|(k, _)| *k == TASKSTATS_TYPE_AGGR_TGID)?.1;
        let stats = attrs(aggr).into_iter().find(|(k, _)| *k == TASKSTATS_TYPE_STATS)?.1;
        Some((u64_at(stats, NVCSW_AT)?, u64_at(stats, NIVCSW_AT)?))
    }
}

impl Drop for Taskstats {
    fn drop(&mut self) {
        // SAFETY: the fd is this struct's own, closed once.
        unsafe { libc::close(self.fd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_round_trip() {
        let a = [attr(2, &7u32.to_ne_bytes()), attr(3, b"abcde")].concat();
        let parsed = attrs(&a);
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[0], (2, &7u32.to_ne_bytes()[..]));
        assert_eq!(parsed[1], (3, &b"abcde"[..]));
    }

    #[test]
    fn counts_the_switches_of_exited_threads() {
        let Some(mut t) = Taskstats::open() else {
            eprintln!("taskstats not available here (needs CAP_NET_ADMIN): the monitor reads /proc/PID/status");
            return;
        };
        let me = std::process::id() as i32;
        let (before, _) = t.switches(me).expect("my own switches");
        // 4 threads that each sleep 50 times (a voluntary switch each) and exit.
        let hs: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    for _ in 0..50 {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                })
            })
            .collect();
        hs.into_iter().for_each(|h| h.join().unwrap());
        let (after, _) = t.switches(me).expect("my own switches");
        assert!(after >= before + 200, "{before} → {after}");
    }
}
