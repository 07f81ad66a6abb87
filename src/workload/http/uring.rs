//! The io_uring engine for plain HTTP/1.1 (`perflab http --engine uring`, a hidden option): the same
//! closed and open models, accounting and recording as the epoll worker (`worker.rs`), with the
//! system calls batched. Each connection's socket sits in the ring's fixed-file table; a multishot
//! receive stays armed on it for its whole life and fills buffers the kernel takes from a
//! provided-buffer ring; a request is one send submission that posts no completion when it all
//! went. One `io_uring_enter` per loop turn submits every send queued since the last one and waits
//! (to the nanosecond, so the open model needs no timerfd) for the next completions.

use super::conn::{ErrorClass, State};
use super::pace::Pace;
use super::response::{Fed, HeadCache, Parser};
use super::shared::us;
use super::uring_ring::{self as rg, BufRing, Op};
use super::worker::{Message, Shared, Stats, LATE_TOLERANCE};
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The size of one provided buffer: an 800-byte response with its head fits in one.
const BUF_SIZE: usize = 16 << 10;

struct UConn {
    sock: Option<OwnedFd>,
    /// Bumped at each connect: completions of an older socket are ignored.
    gen: u32,
    state: State,
    intended: Instant,
    sent: Instant,
    connect_started: Instant,
    first_byte: bool,
    measured: bool,
    parser: Parser,
    head: Vec<u8>,
}

struct Worker {
    // Declared first so that it is dropped first: the kernel lets go of the buffers and sockets.
    ring: IoUring,
    bufs: BufRing,
    /// The target's address, boxed: each connect submission points at it.
    addr: Box<socket2::SockAddr>,
    conns: Vec<UConn>,
    idle: Vec<usize>,
    /// The schedule, the figures and the per-second intervals.
    p: Pace,
    inflight: usize,
    max_inflight: usize,
    any_down: bool,
    heads: HeadCache,
    cqes: Vec<(u64, i32, u32)>,
}

/// Can this process use io_uring, with what this engine needs of it (fixed files, a provided-buffer
/// ring: Linux 5.19)? The error says why not (for `--engine uring` to refuse with it).
pub fn probe() -> Result<(), String> {
    rg::probe()
}

/// Run one worker with `n` connections until the run ends.
pub fn run(sh: Arc<Shared>, id: usize, n: usize, max_inflight: usize, tx: Sender<Message>) -> std::io::Result<Stats> {
    let now = Instant::now();
    let ring = rg::ring(n.max(1))?;
    ring.submitter().register_files_sparse(n.max(1) as u32)?;
    let count = (2 * n + 8).next_power_of_two().clamp(16, 1 << 15) as u16;
    let bufs = BufRing::new(&ring, count, BUF_SIZE)?;
    let mut w = Worker {
        ring,
        bufs,
        addr: Box::new(socket2::SockAddr::from(sh.cfg.addr)),
        conns: (0..n)
            .map(|_| UConn {
                sock: None,
                gen: 0,
                state: State::Down(now),
                intended: now,
                sent: now,
                connect_started: now,
                first_byte: false,
                measured: false,
                parser: Parser::default(),
                head: Vec::new(),
            })
            .collect(),
        idle: Vec::with_capacity(n),
        inflight: 0,
        max_inflight,
        any_down: true,
        heads: HeadCache::default(),
        cqes: Vec::with_capacity(256),
        p: Pace::new(sh, id, tx),
    };
    w.main_loop()?;
    Ok(std::mem::take(&mut w.p.stats))
}

impl Worker {
    fn main_loop(&mut self) -> std::io::Result<()> {
        let mut last_scan = Instant::now();
        loop {
            let now = Instant::now();
            if self.p.sh.stop.load(Ordering::Relaxed) || self.p.sh.deadline.is_some_and(|d| now >= d) {
                break;
            }
            if self.p.exhausted && self.inflight == 0 {
                break;
            }
            self.reconnect_due(now)?;
            self.p.arrivals(now);
            self.dispatch(now)?;
            self.p.flush_interval(now, false);
            self.bufs.publish();
            let busy_poll = self.p.sh.cfg.busy_poll;
            let timeout = if busy_poll { Duration::ZERO } else { self.timeout(now) };
            let polled = busy_poll.then(Instant::now);
            self.enter(timeout)?;
            self.cqes.clear();
            self.cqes
                .extend(self.ring.completion().map(|c| (c.user_data(), c.result(), c.flags())));
            if let (Some(t), true) = (polled, self.cqes.is_empty()) {
                // As on the epoll path: let whatever shares this core run; this time is not work.
                // SAFETY: sched_yield takes no arguments, touches no memory of ours and cannot fail.
                unsafe { libc::sched_yield() };
                self.p.stats.spin += t.elapsed();
            }
            let cqes = std::mem::take(&mut self.cqes);
            for &(data, res, flags) in &cqes {
                self.on_completion(data, res, flags)?;
            }
            self.cqes = cqes;
            if now.duration_since(last_scan) >= Duration::from_millis(50) {
                last_scan = now;
                self.timeouts(Instant::now())?;
            }
        }
        let end = Instant::now();
        let unanswered = self.conns.iter().filter(|c| c.state == State::Busy && c.measured).count();
        self.p.finish(end, unanswered as u64);
        Ok(())
    }

    /// Submit what is queued and wait up to `timeout` for at least one completion: one system call.
    fn enter(&mut self, timeout: Duration) -> std::io::Result<()> {
        let r = if timeout.is_zero() {
            self.ring.submitter().submit_with_args(0, &types::SubmitArgs::new())
        } else {
            let ts = types::Timespec::from(timeout);
            self.ring.submitter().submit_with_args(1, &types::SubmitArgs::new().timespec(&ts))
        };
        match r {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR | libc::EBUSY | libc::EAGAIN)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Queue a submission (entering the ring first when the queue is full).
    fn push(&mut self, e: &squeue::Entry) -> std::io::Result<()> {
        loop {
            // SAFETY: every entry points only at memory that outlives its operation: the request
            // bytes (in `Shared`, alive for the whole run), the peer address (in `self`), and the
            // buffer ring (dropped after the ring).
            if unsafe { self.ring.submission().push(e) }.is_ok() {
                return Ok(());
            }
            self.ring.submit()?;
        }
    }

    fn timeout(&self, now: Instant) -> Duration {
        // A zero wait would be a busy poll: wait at least a microsecond.
        self.p.timeout(now).max(Duration::from_micros(1))
    }

    fn dispatch(&mut self, now: Instant) -> std::io::Result<()> {
        while self.inflight < self.max_inflight {
            let Some(i) = self.idle.pop() else { break };
            if self.conns[i].state != State::Idle {
                continue;
            }
            if !self.send(i, now)? {
                self.idle.push(i);
                break;
            }
        }
        Ok(())
    }

    /// Start the next request on idle connection `i`; false when there is nothing to send.
    fn send(&mut self, i: usize, now: Instant) -> std::io::Result<bool> {
        let intended = if self.p.open {
            match self.p.queue.pop_front() {
                Some(t) => t,
                None => return Ok(false),
            }
        } else {
            if self.p.exhausted {
                return Ok(false);
            }
            if now >= self.p.sh.measure_from && !self.p.sh.claim() {
                self.p.exhausted = true;
                return Ok(false);
            }
            now
        };
        let c = &mut self.conns[i];
        c.intended = intended;
        c.sent = now;
        c.measured = intended >= self.p.sh.measure_from;
        c.first_byte = false;
        c.head.clear();
        c.parser.reset(self.p.sh.cfg.method == "HEAD");
        c.state = State::Busy;
        self.inflight += 1;
        if c.measured && now.duration_since(intended) > LATE_TOLERANCE {
            self.p.stats.late += 1;
        }
        let e = rg::send(i as u32, &self.p.sh.cfg.request, rg::tag(c.gen, i, Op::Send));
        self.push(&e)?;
        Ok(true)
    }

    /// Open a socket for connection `i`, put it in slot `i` of the fixed files, submit its connect.
    fn connect(&mut self, i: usize) -> std::io::Result<()> {
        let now = Instant::now();
        let c = &mut self.conns[i];
        c.connect_started = now;
        c.gen = c.gen.wrapping_add(1);
        let sock = match socket2::Socket::new(self.addr.domain(), socket2::Type::STREAM, None) {
            Ok(s) => s,
            Err(e) => {
                c.state = State::Down(now + Duration::from_millis(10));
                self.any_down = true;
                self.p.connect_failed(ErrorClass::of_io(&e, true), &e.to_string());
                return Ok(());
            }
        };
        let _ = sock.set_tcp_nodelay(true);
        self.ring.submitter().register_files_update(i as u32, &[sock.as_raw_fd()])?;
        c.sock = Some(sock.into());
        c.state = State::Connecting;
        self.p.stats.connections_opened += 1;
        let e = opcode::Connect::new(types::Fixed(i as u32), self.addr.as_ptr().cast(), self.addr.len())
            .build()
            .user_data(rg::tag(c.gen, i, Op::Connect));
        self.push(&e)
    }

    fn reconnect_due(&mut self, now: Instant) -> std::io::Result<()> {
        if !self.any_down {
            return Ok(());
        }
        self.any_down = false;
        for i in 0..self.conns.len() {
            if let State::Down(at) = self.conns[i].state {
                if at <= now {
                    self.connect(i)?;
                }
                if matches!(self.conns[i].state, State::Down(_)) {
                    self.any_down = true;
                }
            }
        }
        Ok(())
    }

    /// Drop connection `i` and connect again after `delay`. Shutting the socket down ends its
    /// multishot receive (a late completion of the old generation, ignored); a pending connect is
    /// cancelled. The fixed-file slot keeps the socket until the next connect replaces it.
    fn drop_conn(&mut self, i: usize, delay: Duration) -> std::io::Result<()> {
        let c = &mut self.conns[i];
        if let Some(s) = c.sock.take() {
            // SAFETY: shutdown takes the descriptor we own and two integers; it touches no memory.
            unsafe { libc::shutdown(s.as_raw_fd(), libc::SHUT_RDWR) };
        }
        let was = c.state;
        if was == State::Busy {
            self.inflight -= 1;
        }
        c.state = State::Down(Instant::now() + delay);
        self.any_down = true;
        if was == State::Connecting {
            let e = opcode::AsyncCancel::new(rg::tag(c.gen, i, Op::Connect))
                .build()
                .user_data(rg::tag(c.gen, i, Op::Cancel));
            self.push(&e)?;
        }
        if delay.is_zero() {
            self.connect(i)?;
        }
        Ok(())
    }

    /// The request on connection `i` failed.
    fn fail(&mut self, i: usize, class: ErrorClass, msg: &str) -> std::io::Result<()> {
        let c = &self.conns[i];
        if c.state == State::Busy && c.measured {
            self.p.count_error(class, msg);
        }
        self.p.stats.reconnects += 1;
        self.drop_conn(i, Duration::from_millis(1))
    }

    fn timeouts(&mut self, now: Instant) -> std::io::Result<()> {
        let limit = self.p.sh.cfg.timeout;
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            match c.state {
                State::Connecting if now.duration_since(c.connect_started) > limit => {
                    self.drop_conn(i, Duration::from_millis(10))?;
                    self.p
                        .connect_failed(ErrorClass::ConnectTimeout, "no connection within the timeout");
                }
                State::Busy if now.duration_since(c.sent) > limit => {
                    self.fail(i, ErrorClass::ReadTimeout, "no complete response within the timeout")?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn on_completion(&mut self, data: u64, res: i32, flags: u32) -> std::io::Result<()> {
        let Some((gen, i, op)) = rg::untag(data) else { return Ok(()) };
        let bid = cqueue::buffer_select(flags);
        let current = i < self.conns.len() && self.conns[i].gen == gen && self.conns[i].sock.is_some();
        if !current {
            if let Some(b) = bid {
                self.bufs.give_back(b);
            }
            return Ok(());
        }
        match op {
            Op::Connect => self.on_connect(i, res),
            Op::Send => self.on_send(i, res),
            Op::Recv => {
                let r = self.on_recv(i, res, bid);
                if let Some(b) = bid {
                    self.bufs.give_back(b);
                }
                // The multishot receive ended without the socket ending (out of buffers, or the
                // completion queue overflowed): arm it again.
                let c = &self.conns[i];
                if !cqueue::more(flags) && c.gen == gen && c.sock.is_some() && (res > 0 || res == -libc::ENOBUFS) {
                    self.push(&rg::recv(i as u32, rg::tag(gen, i, Op::Recv)))?;
                }
                r
            }
            Op::Cancel => Ok(()),
        }
    }

    fn on_connect(&mut self, i: usize, res: i32) -> std::io::Result<()> {
        if self.conns[i].state != State::Connecting {
            return Ok(());
        }
        if res < 0 {
            let e = std::io::Error::from_raw_os_error(-res);
            self.drop_conn(i, Duration::from_millis(10))?;
            self.p.connect_failed(ErrorClass::of_io(&e, true), &e.to_string());
            return Ok(());
        }
        let now = Instant::now();
        let c = &mut self.conns[i];
        if now >= self.p.sh.measure_from {
            let _ = self.p.stats.connect.record(us(now - c.connect_started));
        }
        c.state = State::Idle;
        let e = rg::recv(i as u32, rg::tag(c.gen, i, Op::Recv));
        self.push(&e)?;
        self.idle.push(i);
        self.dispatch(now)
    }

    /// A send posts a completion only when it failed or went short.
    fn on_send(&mut self, i: usize, res: i32) -> std::io::Result<()> {
        if self.conns[i].state != State::Busy {
            return Ok(());
        }
        let len = self.p.sh.cfg.request.len();
        if usize::try_from(res).is_ok_and(|n| n == len) {
            // A kernel without IOSQE_CQE_SKIP_SUCCESS (before 5.17) reports the sends that went.
            return Ok(());
        }
        let e = if res < 0 {
            std::io::Error::from_raw_os_error(-res)
        } else {
            std::io::Error::other(format!("the request went out short ({res} of {len} bytes)"))
        };
        self.fail(i, ErrorClass::of_io(&e, false), &e.to_string())
    }

    /// Bytes (or the end, or an error) arrived on connection `i`.
    fn on_recv(&mut self, i: usize, res: i32, bid: Option<u16>) -> std::io::Result<()> {
        let state = self.conns[i].state;
        if res == -libc::ENOBUFS {
            return Ok(());
        }
        if state != State::Busy {
            // Idle: the server closed the connection (or broke it): connect again, no error.
            if state == State::Idle && res <= 0 {
                self.idle.retain(|x| *x != i);
                self.p.stats.reconnects += 1;
                self.drop_conn(i, Duration::ZERO)?;
            }
            return Ok(());
        }
        let now = Instant::now();
        if res < 0 {
            let e = std::io::Error::from_raw_os_error(-res);
            return self.fail(i, ErrorClass::of_io(&e, false), &e.to_string());
        }
        let c = &mut self.conns[i];
        if res == 0 {
            return match c.parser.at_eof() {
                Ok(()) => self.complete(i, true, now),
                Err("body_short") => self.fail(i, ErrorClass::BodyShort, "the connection closed before the body's end"),
                Err(_) if !c.first_byte => self.fail(i, ErrorClass::Closed, "the connection closed before the response"),
                Err(_) => self.fail(i, ErrorClass::Protocol, "the connection closed inside the response head"),
            };
        }
        if !c.first_byte {
            c.first_byte = true;
            if c.measured {
                let _ = self.p.stats.ttfb.record(us(now.saturating_duration_since(c.sent)));
            }
        }
        let Some(b) = bid else { return Ok(()) };
        let data = self.bufs.data(b, res as usize);
        match c.parser.feed_read(data, &mut c.head, &mut self.heads) {
            Ok(Fed::Done { .. }) => self.complete(i, false, now),
            Ok(Fed::More) => Ok(()),
            Err(e) => self.fail(i, ErrorClass::Protocol, &e),
        }
    }

    /// A whole response arrived on connection `i` at `now` (`eof`: its end was the connection's end).
    fn complete(&mut self, i: usize, eof: bool, now: Instant) -> std::io::Result<()> {
        let c = &mut self.conns[i];
        if c.measured {
            self.p.answered(now, c.intended, c.sent, &c.parser);
        }
        let close = eof || c.parser.close || !self.p.sh.cfg.keepalive;
        self.inflight -= 1;
        if close {
            c.state = State::Down(now);
            if self.p.sh.cfg.keepalive {
                self.p.stats.reconnects += 1;
            }
            self.drop_conn(i, Duration::ZERO)
        } else {
            c.state = State::Idle;
            self.idle.push(i);
            self.dispatch(now)
        }
    }
}
