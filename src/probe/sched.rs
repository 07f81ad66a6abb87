//! The probe scheduler: every icmp, udp, tcp and http probe of a set on one thread, driven by one
//! poller (epoll, see [`Poller`]) over all their sockets and the stop flag, whose wait ends at the
//! earliest send or deadline to the nanosecond (a timer set only while an answer is awaited). Each probe keeps its own
//! absolute schedule, timeouts and samples (the engine's [`Schedule`] and [`Recorder`]); the thread
//! sleeps until the earliest thing any probe is due to do, or until a socket is ready. With
//! nothing awaited and the next send at most 50 ms away, the sleep is a plain `clock_nanosleep`
//! to that instant (no wait on the epoll set, which costs more per probe), and the stop flag is
//! read on waking: a stop then takes effect within those 50 ms.
//!
//! A datagram probe (icmp, udp) has one socket for the whole run, in the poller only while a reply
//! is awaited that the thread wakes for, and never while it sends (see [`Dgram::send`]); a flow
//! probe (tcp, http) registers each probe's new socket (unless its exchange ended within its first
//! system calls: a connect to this machine), whose close takes it out of the poller again, except
//! a socket that only awaits its reply (an http request sent within its connect), which each wait
//! polls beside the epoll set ([`Poller::also`]) and which never enters it.
//! The epoll set is edge-triggered: a readiness is read or written until the socket would block (a
//! datagram socket's up to the reply to the newest probe, see [`Drain::ToNewest`]).
//!
//! A datagram probe whose replies the kernel stamps with their arrival time, sent at least every
//! [`LAZY_UP_TO`], reads its replies (and its errors, a port unreachable) just before its next
//! send instead of waking up for each: the round trip is the kernel's stamp less the send time
//! either way, and the thread wakes once per probe instead of twice (a reply the kernel had ready
//! within the send, as an icmp echo to this machine, is still read at once). Its socket enters the
//! poller once it has sent its last probe, for the replies still awaited.

use super::clock::Instant;
use super::engine::{self, Drain, Flight, Recorder, Schedule, END_GRACE};
use super::poller::{self, Poller};
use super::result::ProbeResult;
use super::sys::{self, Stop};
use super::{
    Begun, Datagram, Driver, Exchanged, Flow, Observer, Opened, Outcome, Parts, PhaseFn, PhaseTag, ProbeSpec, Ready, Sample, Traffic,
};
use std::collections::VecDeque;
use std::os::fd::RawFd;

const STOP: usize = usize::MAX;
/// The longest sleep taken in `clock_nanosleep` rather than in the poller: with nothing awaited,
/// only the stop flag could end the sleep sooner, and it is read on waking, so a stop waits at
/// most this long. A sleep in `ppoll` over the epoll descriptor measured 6-7 % more CPU per probe
/// than this one at 100 Hz (udp and tcp on loopback, docs/probes.md).
const NAP_NS: u64 = 50_000_000;
/// The longest interval at which a datagram probe reads its replies at its next send (its samples
/// reach an observer that much later).
const LAZY_UP_TO: std::time::Duration = std::time::Duration::from_millis(100);

/// A probe of the set, opened, for the scheduler's thread.
pub(crate) struct Member {
    pub index: usize,
    pub spec: ProbeSpec,
    pub opened: Opened,
}

/// Run the members to their ends (count, duration, stop) on the calling thread; their results in
/// the order given.
pub(crate) fn run(members: Vec<Member>, phase: &PhaseFn, stop: &Stop, observer: Option<&Observer>) -> Vec<ProbeResult> {
    let started_unix_s = crate::util::time::unix_now();
    let mut probes: Vec<Probe> = members.into_iter().map(|m| Probe::new(m, observer)).collect();
    if let Err(e) = drive(&mut probes, phase, stop) {
        for p in probes.iter_mut().filter(|p| !p.finished) {
            p.fail(&format!("the probes' poller: {e}"));
        }
    }
    probes.into_iter().map(|p| p.result(started_unix_s)).collect()
}

/// The loop: each probe does what is due, the poller waits until the earliest next thing;
/// readiness goes to its probe, the stop flag to all.
fn drive(probes: &mut [Probe], phase: &PhaseFn, stop: &Stop) -> std::io::Result<()> {
    poller::exact_wakeups();
    let mut poll = Poller::new()?;
    poll.add(stop.fd(), STOP, false)?;
    let mut stopping = false;
    loop {
        let mut earliest: Option<Instant> = None;
        for (i, p) in probes.iter_mut().enumerate().filter(|(_, p)| !p.finished) {
            match p.tick(i, &poll, phase) {
                Some(at) => earliest = Some(earliest.map_or(at, |x| x.min(at))),
                None => p.finished = true,
            }
        }
        let Some(earliest) = earliest else {
            return Ok(());
        };
        // Waiting for an answer (most often it comes before the next send): the timer is set for
        // the send and the wait has no timeout; else the wait's own timeout is the sleep.
        let answer_due = probes.iter().any(|p| !p.finished && p.in_flight());
        if !answer_due && !stopping && earliest.nanos_since(Instant::now()) <= NAP_NS {
            // Nothing awaited and the next send close: a plain sleep, the stop flag read on waking.
            earliest.sleep_until();
            if stop.is_set() && on_stop(probes, stop, &mut stopping) {
                return Ok(());
            }
            continue;
        }
        for (i, p) in probes.iter().enumerate().filter(|(_, p)| !p.finished) {
            if let Some(fd) = p.polled() {
                poll.also(fd, i);
            }
        }
        for ev in poll.wait(Some(earliest), answer_due)? {
            match ev.token {
                STOP => {
                    if on_stop(probes, stop, &mut stopping) {
                        return Ok(());
                    }
                }
                i => {
                    let r = Ready {
                        readable: ev.is_readable() || ev.is_read_closed(),
                        writable: ev.is_writable(),
                        error: ev.is_error() || (ev.is_write_closed() && !ev.is_writable()),
                    };
                    if let Some(p) = probes.get_mut(i).filter(|p| !p.finished) {
                        p.ready(r);
                    }
                }
            }
        }
    }
}

/// The stop flag seen: every probe stops (once), or is abandoned if the stop is an abort; true
/// when the loop is over.
#[cold]
fn on_stop(probes: &mut [Probe], stop: &Stop, stopping: &mut bool) -> bool {
    if stop.is_aborted() {
        probes.iter_mut().for_each(Probe::abort);
        return true;
    }
    if !std::mem::replace(stopping, true) {
        probes.iter_mut().for_each(Probe::stop);
    }
    false
}

/// A flow probe's exchange in progress.
struct Current {
    at: Instant,
    phase: PhaseTag,
    deadline: Instant,
    /// Its socket, when it awaits the reply outside the epoll set ([`Poller::also`]).
    polled: Option<RawFd>,
}

enum Way {
    Flow {
        flow: Box<dyn Flow>,
        current: Option<Current>,
    },
    Datagram {
        dg: Box<dyn Datagram>,
        flights: VecDeque<Flight>,
        errors_in_a_row: u32,
        /// Whether reading right after a send finds the reply (loopback: it is there before the
        /// send returns), which saves a wait; tried again every 64 probes when it did not.
        look_pays: bool,
        /// Its replies are read at the next send, not at their arrival.
        lazy: bool,
        /// The socket is in the poller, which wakes for its replies: only while a reply is
        /// awaited, and never during a send (see [`Dgram::send`]).
        watching: bool,
    },
}

/// One probe on the scheduler's thread.
struct Probe {
    spec: ProbeSpec,
    detail: String,
    parts: &'static [&'static str],
    rec: Recorder,
    sched: Schedule,
    sending: bool,
    finished: bool,
    way: Way,
}

// What runs once or at an end (set-up, result, stop, abort, failure) is `#[cold]`: compiled out of
// the loop, whose code then spans fewer pages for each probe to run after its idle (docs/probes.md,
// Cost).
impl Probe {
    #[cold]
    fn new(m: Member, observer: Option<&Observer>) -> Probe {
        let rec = Recorder::new(m.index, &m.spec, observer.cloned());
        let sched = Schedule::new(rec.start, &m.spec);
        let way = match m.opened.driver {
            Driver::Flow(flow) => Way::Flow { flow, current: None },
            Driver::Datagram(dg) => Way::Datagram {
                lazy: dg.kernel_stamps() && m.spec.interval <= LAZY_UP_TO,
                watching: false,
                dg,
                flights: VecDeque::new(),
                errors_in_a_row: 0,
                look_pays: true,
            },
            Driver::Exchange(_) => unreachable!("exchange probes run on threads of their own"),
        };
        Probe {
            spec: m.spec,
            detail: m.opened.detail,
            parts: m.opened.parts,
            rec,
            sched,
            sending: true,
            finished: false,
            way,
        }
    }

    #[cold]
    fn result(self, started_unix_s: f64) -> ProbeResult {
        self.rec.result(self.spec, &self.sched, self.detail, self.parts, started_unix_s)
    }

    /// Send what is due and end what has passed its deadline; the next time this probe has
    /// something to do (a send or a deadline), or None once it has ended.
    fn tick(&mut self, token: usize, poll: &Poller, phase: &PhaseFn) -> Option<Instant> {
        match &mut self.way {
            Way::Flow { flow, current } => flow_tick(
                flow.as_mut(),
                current,
                &self.spec,
                &mut self.sched,
                &mut self.rec,
                &mut self.sending,
                token,
                poll,
                phase,
            ),
            Way::Datagram {
                dg,
                flights,
                errors_in_a_row,
                look_pays,
                lazy,
                watching,
            } => {
                let mut d = Dgram {
                    dg: dg.as_mut(),
                    flights,
                    errors_in_a_row,
                    look_pays,
                    lazy: *lazy,
                    watching,
                };
                d.tick(&self.spec, &mut self.sched, &mut self.rec, &mut self.sending, phase, (poll, token))
            }
        }
    }

    /// An exchange of this probe awaits its answer from the poller.
    fn in_flight(&self) -> bool {
        match &self.way {
            Way::Flow { current, .. } => current.is_some(),
            Way::Datagram { flights, watching, .. } => *watching && flights.iter().any(|f| !f.done),
        }
    }

    /// The socket that the next wait is to poll beside the epoll set for this probe.
    fn polled(&self) -> Option<RawFd> {
        match &self.way {
            Way::Flow { current: Some(c), .. } => c.polled,
            _ => None,
        }
    }

    /// Its socket is ready.
    fn ready(&mut self, r: Ready) {
        match &mut self.way {
            Way::Flow { flow, current } => {
                if let Some(c) = current.as_ref() {
                    if let Some(done) = flow.ready(r) {
                        let (at, phase) = (c.at, c.phase.clone());
                        *current = None;
                        self.sched.sent();
                        self.rec.push(at, phase, done);
                    }
                }
            }
            Way::Datagram {
                dg,
                flights,
                errors_in_a_row,
                ..
            } => {
                if r.readable || r.error {
                    engine::drain(dg.as_mut(), &mut self.rec, flights, errors_in_a_row, Drain::ToNewest);
                }
            }
        }
    }

    /// Stop sending; what is in flight gets at most [`END_GRACE`] more.
    #[cold]
    fn stop(&mut self) {
        self.sending = false;
        let bound = Instant::now() + END_GRACE;
        match &mut self.way {
            Way::Flow { current, .. } => {
                if let Some(c) = current.as_mut() {
                    c.deadline = c.deadline.min(bound);
                }
            }
            Way::Datagram { flights, .. } => {
                for f in flights.iter_mut() {
                    f.deadline = f.deadline.min(bound);
                }
            }
        }
    }

    /// End at once (Ctrl-C): what is in flight had neither its answer nor its timeout, and is no
    /// sample.
    #[cold]
    fn abort(&mut self) {
        self.finished = true;
        match &mut self.way {
            Way::Flow { flow, current } => {
                if current.take().is_some() {
                    drop(flow.give_up());
                }
            }
            Way::Datagram { flights, .. } => {
                let now = Instant::now();
                let unsettled: std::collections::HashSet<u64> =
                    flights.iter().filter(|f| !f.done && f.deadline > now).map(|f| f.seq).collect();
                self.rec.samples.retain(|s| !unsettled.contains(&s.seq));
            }
        }
    }

    /// The poller failed: what is in flight ends with that error.
    #[cold]
    fn fail(&mut self, why: &str) {
        self.rec.failure = Some(why.to_string());
        match &mut self.way {
            Way::Flow { flow, current } => {
                if let Some(c) = current.take() {
                    let gave_up = flow.give_up();
                    self.sched.sent();
                    self.rec.push(
                        c.at,
                        c.phase,
                        Exchanged {
                            outcome: Outcome::Error(why.to_string()),
                            ..gave_up
                        },
                    );
                }
            }
            Way::Datagram { flights, .. } => fail_flights(flights, &mut self.rec),
        }
    }
}

/// After a failure, the datagrams still in flight end with it.
#[cold]
fn fail_flights(flights: &VecDeque<Flight>, rec: &mut Recorder) {
    if let Some(why) = rec.failure.clone() {
        for f in flights.iter().filter(|f| !f.done) {
            rec.samples[f.seq as usize].outcome = Outcome::Error(why.clone());
            rec.settled(f.seq);
        }
    }
}

/// A flow probe's turn: its exchange given up at its deadline; the next one begun when due.
#[allow(clippy::too_many_arguments)]
fn flow_tick(
    flow: &mut dyn Flow,
    current: &mut Option<Current>,
    spec: &ProbeSpec,
    sched: &mut Schedule,
    rec: &mut Recorder,
    sending: &mut bool,
    token: usize,
    poll: &Poller,
    phase: &PhaseFn,
) -> Option<Instant> {
    loop {
        let now = Instant::now();
        if let Some(c) = current.as_ref() {
            if c.deadline > now {
                return Some(c.deadline);
            }
            let done = flow.give_up();
            let c = current.take()?;
            sched.sent();
            rec.push(c.at, c.phase, done);
            continue;
        }
        if !*sending {
            return None;
        }
        let Some(due) = sched.next_due(now) else {
            *sending = false;
            return None;
        };
        if due > now {
            return Some(due);
        }
        let at = Instant::now();
        let tag = phase();
        // The probe's duration bounds its wait too: at most END_GRACE past its end.
        let deadline = (at + spec.timeout).min(sched.end + END_GRACE);
        let begun = flow.begin();
        match begun {
            Begun::Wait(fd) => {
                if let Err(e) = poll.add(fd, token, true) {
                    let gave_up = flow.give_up();
                    sched.sent();
                    let outcome = Outcome::Error(format!("the probes' poller: {e}"));
                    rec.push(at, tag, Exchanged { outcome, ..gave_up });
                    continue;
                }
                *current = Some(Current {
                    at,
                    phase: tag,
                    deadline,
                    polled: None,
                });
            }
            Begun::Reading(fd) => {
                *current = Some(Current {
                    at,
                    phase: tag,
                    deadline,
                    polled: Some(fd),
                })
            }
            Begun::Done(done) => {
                sched.sent();
                rec.push(at, tag, done);
            }
        }
    }
}

/// A datagram probe's state, borrowed for its turn.
struct Dgram<'a> {
    dg: &'a mut dyn Datagram,
    flights: &'a mut VecDeque<Flight>,
    errors_in_a_row: &'a mut u32,
    look_pays: &'a mut bool,
    lazy: bool,
    watching: &'a mut bool,
}

impl Dgram<'_> {
    /// Send what is due (sends and replies apart: a slow reply never delays the next send); settle
    /// the flights whose deadline passed, once the socket has been read (a reply that came in time
    /// but is not read yet still counts). Once the last probe is sent, the poller wakes for the
    /// replies still awaited.
    fn tick(
        &mut self,
        spec: &ProbeSpec,
        sched: &mut Schedule,
        rec: &mut Recorder,
        sending: &mut bool,
        phase: &PhaseFn,
        (poll, token): (&Poller, usize),
    ) -> Option<Instant> {
        let mut due = None;
        loop {
            let now = Instant::now();
            if *sending {
                due = sched.next_due(now);
                *sending = due.is_some();
            }
            match due {
                Some(d) if d <= now => self.send(spec, sched, rec, phase, poll),
                _ => break,
            }
            if rec.failure.is_some() {
                break;
            }
        }
        let now = Instant::now();
        let mut read = false;
        while let Some(f) = self.flights.front() {
            if !f.done && f.deadline > now {
                break;
            }
            if !f.done && !read {
                read = true;
                engine::drain(self.dg, rec, self.flights, self.errors_in_a_row, Drain::All);
                continue;
            }
            if !f.done {
                rec.settled(f.seq);
            }
            self.flights.pop_front();
        }
        // A reply still awaited wakes the poller, unless it is read at the next send.
        let awaited = self.flights.iter().any(|f| !f.done) && (!self.lazy || !*sending);
        if awaited && !*self.watching {
            match poll.add(self.dg.fd(), token, false) {
                Ok(()) => *self.watching = true,
                Err(e) => rec.failure = Some(format!("the probes' poller: {e}")),
            }
        }
        if rec.failure.is_some() {
            fail_flights(self.flights, rec);
            return None;
        }
        let front = self.flights.front().map(|f| f.deadline);
        due.filter(|_| *sending).into_iter().chain(front).min()
    }

    /// Send the next probe. The socket is out of the poller while it sends: on loopback the echo
    /// and its reply are made within the send, and a socket in an epoll set calls into it when
    /// the send's buffer comes back, before the reply is stamped (1.7 µs on the round trip
    /// here, where ping's socket is in no set while it sends).
    fn send(&mut self, spec: &ProbeSpec, sched: &mut Schedule, rec: &mut Recorder, phase: &PhaseFn, poll: &Poller) {
        if std::mem::take(self.watching) {
            if let Err(e) = poll.remove(self.dg.fd()) {
                rec.failure = Some(format!("the probes' poller: {e}"));
                return;
            }
        }
        if self.flights.iter().any(|f| !f.done) {
            // The replies that came since the last send, before this one's.
            engine::drain(self.dg, rec, self.flights, self.errors_in_a_row, Drain::ToNewest);
        }
        let tag = phase();
        let at = Instant::now();
        let tx_ns = sys::realtime_ns();
        let seq = rec.samples.len() as u64;
        let (outcome, traffic, done) = match self.dg.send(seq, tx_ns) {
            Ok(t) => (Outcome::Timeout, t, false),
            Err(e) => (Outcome::Error(format!("send: {e}")), Traffic::default(), true),
        };
        sched.sent();
        rec.samples.push(Sample {
            seq,
            t_s: rec.t_s(at),
            phase: tag,
            outcome,
            parts: Parts::NONE,
            traffic,
        });
        self.flights.push_back(Flight {
            seq,
            at,
            tx_ns,
            deadline: (at + spec.timeout).min(sched.end + END_GRACE),
            done,
        });
        if done {
            rec.settled(seq);
        } else if *self.look_pays || seq.is_multiple_of(64) {
            let n = engine::drain(self.dg, rec, self.flights, self.errors_in_a_row, Drain::One);
            *self.look_pays = n > 0;
        }
    }
}

#[cfg(test)]
#[path = "sched_tests.rs"]
mod tests;
