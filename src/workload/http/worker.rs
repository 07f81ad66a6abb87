//! One worker thread: an epoll loop (mio) over its share of the connections, driving the closed or the
//! open model, recording into its own histograms. Nothing is allocated per request: responses are
//! read into one buffer per worker, and the clock is read once per event.

use super::conn::{Conn, ErrorClass, State, BUF};
use super::pace::Pace;
use super::response::{Fed, HeadCache};
use super::shared::us;
pub use super::shared::{Interval, Message, Shared, Stats, LATE_TOLERANCE};
use super::sys;
use super::timer::Timer;
use mio::{Events, Interest, Poll, Token};
use std::io::Read;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Worker {
    poll: Poll,
    conns: Vec<Conn>,
    idle: Vec<usize>,
    /// The schedule, the figures and the per-second intervals.
    p: Pace,
    inflight: usize,
    max_inflight: usize,
    /// Some connection may be down (waiting to reconnect); when false the scan is skipped.
    any_down: bool,
    /// The worker's read buffer, shared by its connections.
    rbuf: Box<[u8]>,
    /// The last response head, to recognise the next one without parsing it.
    heads: HeadCache,
    /// Open model: wakes the loop at the next send time.
    timer: Option<Timer>,
}

const TIMER: Token = Token(usize::MAX - 1);

/// Run one worker with `n` connections until the run ends.
pub fn run(sh: Arc<Shared>, id: usize, n: usize, max_inflight: usize, tx: Sender<Message>) -> std::io::Result<Stats> {
    let now = Instant::now();
    let poll = Poll::new()?;
    let timer = match sh.cfg.rate {
        Some(_) => Some(Timer::new(poll.registry(), TIMER)?),
        None => None,
    };
    let mut w = Worker {
        poll,
        timer,
        conns: (0..n).map(|_| Conn::new(now)).collect(),
        idle: Vec::with_capacity(n),
        inflight: 0,
        max_inflight,
        any_down: true,
        rbuf: vec![0u8; BUF].into_boxed_slice(),
        heads: HeadCache::default(),
        p: Pace::new(sh, id, tx),
    };
    w.main_loop()?;
    Ok(w.p.stats)
}

impl Worker {
    fn main_loop(&mut self) -> std::io::Result<()> {
        let mut events = Events::with_capacity(1024);
        let mut last_scan = Instant::now();
        loop {
            let now = Instant::now();
            if self.p.sh.stop.load(Ordering::Relaxed) || self.p.sh.deadline.is_some_and(|d| now >= d) {
                break;
            }
            if self.p.exhausted && self.inflight == 0 {
                break;
            }
            self.reconnect_due(now);
            self.p.arrivals(now);
            self.dispatch(now);
            self.p.flush_interval(now, false);
            let busy_poll = self.p.sh.cfg.busy_poll;
            let timeout = if busy_poll { Duration::ZERO } else { self.p.timeout(now) };
            // epoll waits in whole ms (rounded up): the timerfd wakes the loop when a send is due.
            if let (Some(a), Some(t)) = (self.p.next_arrival, self.timer.as_mut()) {
                t.arm(a);
            }
            let polled = busy_poll.then(Instant::now);
            match self.poll.poll(&mut events, Some(timeout)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            if let (Some(t), true) = (polled, events.is_empty()) {
                // Nothing yet: let whatever else shares this core run (the target, perhaps), then
                // poll again. This time is not work, and the thread's busy figure leaves it out.
                // SAFETY: sched_yield takes no arguments, touches no memory of ours and cannot fail
                // on Linux.
                unsafe { libc::sched_yield() };
                self.p.stats.spin += t.elapsed();
            }
            for ev in events.iter() {
                let i = ev.token().0;
                if i == TIMER.0 {
                    if let Some(t) = self.timer.as_mut() {
                        t.fired();
                    }
                    continue;
                }
                self.on_event(i, ev.is_readable(), ev.is_writable() || ev.is_error(), ev.is_read_closed());
            }
            if now.duration_since(last_scan) >= Duration::from_millis(50) {
                last_scan = now;
                self.timeouts(Instant::now());
            }
        }
        let end = Instant::now();
        let unanswered = self.conns.iter().filter(|c| c.state == State::Busy && c.measured).count();
        self.p.finish(end, unanswered as u64);
        Ok(())
    }

    fn dispatch(&mut self, now: Instant) {
        while self.inflight < self.max_inflight {
            let Some(i) = self.idle.pop() else { break };
            if self.conns[i].state != State::Idle {
                continue;
            }
            if !self.send(i, now) {
                self.idle.push(i);
                break;
            }
        }
    }

    /// Start the next request on idle connection `i` (`now`: this event's clock reading); false when
    /// there is nothing to send.
    fn send(&mut self, i: usize, now: Instant) -> bool {
        let intended = if self.p.sh.cfg.rate.is_some() {
            match self.p.queue.pop_front() {
                Some(t) => t,
                None => return false,
            }
        } else {
            if self.p.exhausted {
                return false;
            }
            if now >= self.p.sh.measure_from && !self.p.sh.claim() {
                self.p.exhausted = true;
                return false;
            }
            now
        };
        let c = &mut self.conns[i];
        c.intended = intended;
        c.sent = now;
        c.measured = intended >= self.p.sh.measure_from;
        c.first_byte = false;
        c.written = 0;
        c.head.clear();
        c.parser.reset(self.p.sh.cfg.method == "HEAD");
        c.state = State::Busy;
        self.inflight += 1;
        if c.measured && now.duration_since(intended) > LATE_TOLERANCE {
            self.p.stats.late += 1;
        }
        self.write(i);
        true
    }

    fn write(&mut self, i: usize) {
        let req = &self.p.sh.cfg.request;
        let c = &mut self.conns[i];
        let Some(s) = c.stream.as_mut() else { return };
        while c.written < req.len() {
            match sys::send(s, &req[c.written..]) {
                Ok(n) => c.written += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let class = ErrorClass::of_io(&e, false);
                    self.fail(i, class, &e.to_string());
                    return;
                }
            }
        }
    }

    fn connect(&mut self, i: usize) {
        let now = Instant::now();
        let c = &mut self.conns[i];
        c.connect_started = now;
        match mio::net::TcpStream::connect(self.p.sh.cfg.addr) {
            Ok(mut s) => {
                let _ = s.set_nodelay(true);
                if self
                    .poll
                    .registry()
                    .register(&mut s, Token(i), Interest::READABLE | Interest::WRITABLE)
                    .is_err()
                {
                    c.state = State::Down(now + Duration::from_millis(10));
                    self.any_down = true;
                    return;
                }
                c.stream = Some(s);
                c.state = State::Connecting;
                self.p.stats.connections_opened += 1;
            }
            Err(e) => {
                c.state = State::Down(now + Duration::from_millis(10));
                self.any_down = true;
                self.p.connect_failed(ErrorClass::of_io(&e, true), &e.to_string());
            }
        }
    }

    fn reconnect_due(&mut self, now: Instant) {
        if !self.any_down {
            return;
        }
        self.any_down = false;
        for i in 0..self.conns.len() {
            if let State::Down(at) = self.conns[i].state {
                if at <= now {
                    self.connect(i);
                }
                if matches!(self.conns[i].state, State::Down(_)) {
                    self.any_down = true;
                }
            }
        }
    }

    /// Drop connection `i` and connect again (after `delay`).
    fn drop_conn(&mut self, i: usize, delay: Duration) {
        let c = &mut self.conns[i];
        // Closing the socket (its only descriptor) also removes it from the epoll set: no
        // EPOLL_CTL_DEL is needed.
        drop(c.stream.take());
        if c.state == State::Busy {
            self.inflight -= 1;
        }
        c.state = State::Down(Instant::now() + delay);
        self.any_down = true;
        c.responses = 0;
        if delay.is_zero() {
            self.connect(i);
        }
    }

    /// The request on connection `i` failed.
    fn fail(&mut self, i: usize, class: ErrorClass, msg: &str) {
        let c = &self.conns[i];
        if c.state == State::Busy && c.measured {
            self.p.count_error(class, msg);
        }
        self.p.stats.reconnects += 1;
        self.drop_conn(i, Duration::from_millis(1));
    }

    fn timeouts(&mut self, now: Instant) {
        let limit = self.p.sh.cfg.timeout;
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            match c.state {
                State::Connecting if now.duration_since(c.connect_started) > limit => {
                    self.drop_conn(i, Duration::from_millis(10));
                    self.p
                        .connect_failed(ErrorClass::ConnectTimeout, "no connection within the timeout");
                }
                State::Busy if now.duration_since(c.sent) > limit => {
                    self.fail(i, ErrorClass::ReadTimeout, "no complete response within the timeout");
                }
                _ => {}
            }
        }
    }

    fn on_event(&mut self, i: usize, readable: bool, writable: bool, read_closed: bool) {
        match self.conns[i].state {
            State::Connecting => {
                let c = &mut self.conns[i];
                let Some(s) = c.stream.as_ref() else { return };
                match s.take_error() {
                    Ok(Some(e)) | Err(e) => {
                        self.drop_conn(i, Duration::from_millis(10));
                        self.p.connect_failed(ErrorClass::of_io(&e, true), &e.to_string());
                        return;
                    }
                    Ok(None) => {}
                }
                if s.peer_addr().is_err() {
                    return; // not connected yet
                }
                let now = Instant::now();
                if now >= self.p.sh.measure_from {
                    let _ = self.p.stats.connect.record(us(now - c.connect_started));
                }
                c.state = State::Idle;
                self.idle.push(i);
                self.dispatch(now);
            }
            State::Idle => {
                if readable || read_closed {
                    // The server closed an idle keep-alive connection: connect again, no error.
                    let mut probe = [0u8; 1];
                    let closed = matches!(
                        self.conns[i].stream.as_mut().map(|s| s.read(&mut probe)),
                        Some(Ok(0)) | Some(Err(_))
                    );
                    if closed {
                        self.idle.retain(|x| *x != i);
                        self.p.stats.reconnects += 1;
                        self.drop_conn(i, Duration::ZERO);
                    }
                }
            }
            State::Busy => {
                if writable && self.conns[i].written < self.p.sh.cfg.request.len() {
                    self.write(i);
                }
                if (readable || read_closed) && self.conns[i].state == State::Busy {
                    // One clock reading per event: it times the first byte, the end of the
                    // response and the send of the next request on this connection.
                    self.read(i, Instant::now());
                }
            }
            State::Down(_) => {}
        }
    }

    /// Read what has arrived on connection `i` into the worker's buffer and feed the parser.
    fn read(&mut self, i: usize, now: Instant) {
        loop {
            let c = &mut self.conns[i];
            let Some(s) = c.stream.as_mut() else { return };
            match sys::recv(s, &mut self.rbuf) {
                Ok(0) => {
                    let started = c.first_byte;
                    match c.parser.at_eof() {
                        Ok(()) => self.complete(i, true, now),
                        Err("body_short") => self.fail(i, ErrorClass::BodyShort, "the connection closed before the body's end"),
                        Err(_) if !started => self.fail(i, ErrorClass::Closed, "the connection closed before the response"),
                        Err(_) => self.fail(i, ErrorClass::Protocol, "the connection closed inside the response head"),
                    }
                    return;
                }
                Ok(n) => {
                    if !c.first_byte {
                        c.first_byte = true;
                        if c.measured {
                            let _ = self.p.stats.ttfb.record(us(now.saturating_duration_since(c.sent)));
                        }
                    }
                    let data = &self.rbuf[..n];
                    let fed = c.parser.feed_read(data, &mut c.head, &mut self.heads);
                    match fed {
                        Ok(Fed::Done { .. }) => {
                            self.complete(i, false, now);
                            return;
                        }
                        Ok(Fed::More) => {}
                        Err(e) => {
                            self.fail(i, ErrorClass::Protocol, &e);
                            return;
                        }
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let class = ErrorClass::of_io(&e, false);
                    self.fail(i, class, &e.to_string());
                    return;
                }
            }
        }
    }

    /// A whole response arrived on connection `i` at `now` (`eof`: its end was the connection's end).
    fn complete(&mut self, i: usize, eof: bool, now: Instant) {
        let c = &mut self.conns[i];
        c.responses += 1;
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
            self.drop_conn(i, Duration::ZERO);
        } else {
            c.state = State::Idle;
            self.idle.push(i);
            self.dispatch(now);
        }
    }
}
