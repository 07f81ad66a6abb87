//! Latency probes: small, regular measurements of how long a target takes to answer, taken before,
//! during and after load (as flent's RRUL test takes ping and UDP round trips beside its load).
//!
//! Kinds, one file each: `icmp` (echo requests), `tcp` (time to connect), `http` (a GET timed in
//! parts as `curl -w` does), `udp` (isochronous echo with sequence numbers and send timestamps in
//! the payload, as irtt does) and `command` (any command, timed to its exit).
//!
//! A kind says how to take one measurement through one of two small traits: `Exchange` (send,
//! then wait for the answer: tcp, http, command) or `Datagram` (sends and replies apart, so a
//! slow reply never delays the next send: icmp, udp). The engine (`engine.rs`) owns the rest: the
//! absolute schedule (a send every `interval`; slots missed by more than a whole interval are
//! skipped and counted, never sent in a burst), the timeout (no answer within it is a loss, recorded
//! as a sample), the bounds (count, duration, and at most [`spec::MAX_PROBES`] / [`spec::MAX_DURATION`]),
//! and the phase tag each sample takes from the caller's phase function at its send time.
//!
//! ```no_run
//! use perflab::probe::{Kind, PhaseTag, ProbeSet, ProbeSpec};
//! use std::sync::Arc;
//! let idle = PhaseTag::new("baseline");
//! let running = ProbeSet::start(vec![ProbeSpec::new(Kind::Tcp, "127.0.0.1:8080")], Arc::new(move || idle.clone()))?;
//! // ... the load runs ...
//! for r in running.stop() {
//!     println!("{}: {:?}", r.spec.label(), r.summary().rtt.median_ms);
//! }
//! # Ok::<(), anyhow::Error>(())
//! ```

pub mod cli;
mod clock;
mod command;
mod engine;
pub mod figures;
mod guard;
mod http;
mod icmp;
mod poller;
mod result;
mod sched;
pub mod spec;
mod summary;
mod sys;
mod tcp;
mod udp;

pub use result::ProbeResult;
pub use spec::{IcmpSocket, Kind, ProbeSpec, Target};
pub use summary::{Stats, Summary, Traffic};

use crate::util::cut::{Cut, Why};
use clock::Instant;
use std::io;
use std::os::fd::RawFd;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The phase a sample was sent in (`baseline`, `load`, ...), as the caller's phase function said.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PhaseTag(Arc<str>);

impl PhaseTag {
    pub fn new(name: &str) -> PhaseTag {
        PhaseTag(Arc::from(name))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for PhaseTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl serde::Serialize for PhaseTag {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// Says which phase it is now; called once per probe, at its send time.
pub type PhaseFn = Arc<dyn Fn() -> PhaseTag + Send + Sync>;

/// Told of each sample as soon as its outcome is known: (index of the probe in the set, sample).
pub type Observer = Arc<dyn Fn(usize, &Sample) + Send + Sync>;

/// What became of one probe.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// An answer, after this round trip.
    Reply { rtt: Duration },
    /// An answer that says failure (a command's non-zero exit, 128 + N for signal N; an HTTP status
    /// >= 400), after this time. Counted as failed, not in the latency figures.
    Failed { rtt: Duration, status: i32 },
    /// No answer within the timeout: a loss.
    Timeout,
    /// The probe could not be made or was refused (connection refused, port unreachable, a DNS
    /// failure): a loss, with the reason.
    Error(String),
}

impl Outcome {
    /// The round trip of a reply.
    pub fn rtt(&self) -> Option<Duration> {
        match self {
            Outcome::Reply { rtt } => Some(*rtt),
            _ => None,
        }
    }

    /// The name in JSON and CSV: reply, failed, timeout, error.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Reply { .. } => "reply",
            Outcome::Failed { .. } => "failed",
            Outcome::Timeout => "timeout",
            Outcome::Error(_) => "error",
        }
    }
}

/// One probe.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// 0, 1, 2, ... in send order.
    pub seq: u64,
    /// Send time, seconds since the probe started ([`ProbeResult::started_unix_s`] is its wall clock).
    pub t_s: f64,
    /// The phase at the send time.
    pub phase: PhaseTag,
    pub outcome: Outcome,
    /// The parts of the time, for kinds that time parts (http: see [`ProbeResult::part_names`]);
    /// they add up to the total. Empty otherwise.
    pub parts: Parts,
    /// This probe's own traffic.
    pub traffic: Traffic,
}

/// The parts of one probe's time (at most [`Parts::MAX`]), held in place and small: a probe
/// allocates nothing (an allocation is malloc's code, several more pages for each probe to run
/// after its idle; docs/probes.md, Cost), and a [`Sample`] stays small enough to be moved without
/// a call to memcpy (a test checks it). A part is kept to the nanosecond up to 2.1 s, to the
/// microsecond (what reports show) up to 35 minutes, and as 35 minutes past that.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Parts {
    /// Each part as [`Parts::encode`] keeps it; the parts end at the first `ABSENT`.
    kept: [u32; Parts::MAX],
}

impl Parts {
    /// The most parts a kind times (http's five: dns, connect, tls, first byte, transfer).
    pub const MAX: usize = 5;

    /// No parts (the kinds that time none, and a probe without an answer).
    pub const NONE: Parts = Parts {
        kept: [Parts::ABSENT; Parts::MAX],
    };

    /// Where the parts end.
    const ABSENT: u32 = u32::MAX;
    /// Set in a part kept in microseconds.
    const MICROS: u32 = 1 << 31;

    /// Nanoseconds below 2^31, else microseconds with the top bit set (at most 2^31 - 2 of them).
    fn encode(d: Duration) -> u32 {
        let ns = d.as_nanos();
        if ns < u128::from(Parts::MICROS) {
            ns as u32
        } else {
            Parts::MICROS | (d.as_micros().min(u128::from(Parts::MICROS - 2)) as u32)
        }
    }

    fn decode(k: u32) -> Duration {
        if k & Parts::MICROS == 0 {
            Duration::from_nanos(u64::from(k))
        } else {
            Duration::from_micros(u64::from(k & !Parts::MICROS))
        }
    }

    pub fn len(&self) -> usize {
        self.iter().count()
    }

    pub fn is_empty(&self) -> bool {
        self.kept[0] == Parts::ABSENT
    }

    /// The parts in order.
    pub fn iter(&self) -> impl Iterator<Item = Duration> + '_ {
        self.kept.iter().take_while(|&&k| k != Parts::ABSENT).map(|&k| Parts::decode(k))
    }

    /// Part `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<Duration> {
        self.iter().nth(i)
    }
}

/// As a list of durations.
impl std::fmt::Debug for Parts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Default for Parts {
    fn default() -> Parts {
        Parts::NONE
    }
}

/// The first [`Parts::MAX`] of the durations given (a kind never times more).
impl FromIterator<Duration> for Parts {
    fn from_iter<I: IntoIterator<Item = Duration>>(it: I) -> Parts {
        let mut p = Parts::NONE;
        for (slot, d) in p.kept.iter_mut().zip(it) {
            *slot = Parts::encode(d);
        }
        p
    }
}

/// The result of one exchange (see [`Exchange`]).
#[derive(Clone, Debug)]
pub(crate) struct Exchanged {
    pub outcome: Outcome,
    pub parts: Parts,
    pub traffic: Traffic,
}

/// A kind that sends one probe and waits for its answer, blocking its thread (command).
pub(crate) trait Exchange: Send {
    /// Take one measurement, waiting at most `timeout` for it.
    fn exchange(&mut self, timeout: Duration) -> Exchanged;
}

/// What a datagram kind received.
#[derive(Clone, Debug)]
pub(crate) enum Received {
    /// The reply to probe `seq`: when userspace saw it, the kernel's receive time (ns since the
    /// epoch) where known, and its size.
    Reply {
        seq: u64,
        at: Instant,
        kernel_ns: Option<i64>,
        bytes: u64,
    },
    /// An error that answers the newest probe in flight (e.g. port unreachable).
    Error(String),
    /// Something that is not a reply to us.
    Stray,
}

/// A kind whose sends and replies are apart (icmp, udp): one socket, replies carry the sequence.
pub(crate) trait Datagram: Send {
    /// The descriptor to wait on for replies.
    fn fd(&self) -> RawFd;
    /// Send probe `seq`, stamped with `tx_ns` (wall clock ns); returns the traffic it made.
    fn send(&mut self, seq: u64, tx_ns: i64) -> io::Result<Traffic>;
    /// One received datagram without blocking; Ok(None) when nothing is waiting.
    fn recv(&mut self) -> io::Result<Option<Received>>;
    /// The kernel stamps each reply with its arrival time, so the round trip does not depend on
    /// when the reply is read.
    fn kernel_stamps(&self) -> bool {
        false
    }
}

/// What the poller saw on a [`Flow`]'s socket.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ready {
    pub readable: bool,
    pub writable: bool,
    /// An error or a hang-up (a refused connect shows as both).
    pub error: bool,
}

/// A kind whose probe is one non-blocking exchange on a socket of its own (tcp, http), driven by
/// the probe scheduler's poller: begun, advanced at each readiness of its socket, given up at its
/// deadline. One probe at a time.
pub(crate) trait Flow: Send {
    /// Begin one probe: the socket to watch (readable and writable, edge-triggered), or the outcome
    /// at once (a refusal, a name that does not resolve, a connect done within its call).
    fn begin(&mut self) -> Begun;
    /// The socket is ready: the outcome when the exchange is over (its socket closed), else None.
    fn ready(&mut self, r: Ready) -> Option<Exchanged>;
    /// The deadline passed without an answer: close the socket; a loss.
    fn give_up(&mut self) -> Exchanged;
}

/// What [`Flow::begin`] did.
pub(crate) enum Begun {
    /// The exchange goes on: the poller is to watch this socket (reading and writing).
    Wait(RawFd),
    /// The exchange goes on with nothing more to write: the poller is to watch this socket for
    /// reading (and its errors) only, so that its being writable wakes no wait; level-triggered
    /// (each wait polls it beside the epoll set), so the flow reads until it would block.
    Reading(RawFd),
    /// The exchange is over already.
    Done(Exchanged),
}

/// How a kind is driven.
pub(crate) enum Driver {
    /// On a thread of its own (command: its fork, exec and wait stay off the scheduler's thread).
    Exchange(Box<dyn Exchange>),
    /// On the probe scheduler's thread.
    Datagram(Box<dyn Datagram>),
    /// On the probe scheduler's thread.
    Flow(Box<dyn Flow>),
}

/// A kind opened for a spec: its driver, a few words on how it measures, its part names.
pub(crate) struct Opened {
    pub driver: Driver,
    pub detail: String,
    pub parts: &'static [&'static str],
}

fn open(spec: &ProbeSpec) -> anyhow::Result<Opened> {
    spec.check()?;
    match spec.kind {
        Kind::Icmp => icmp::open(spec),
        Kind::Tcp => tcp::open(spec),
        Kind::Http => http::open(spec),
        Kind::Udp => udp::open(spec),
        Kind::Command => command::open(spec),
    }
}

/// Probes checked and opened (sockets made, names resolved), ready to start.
pub struct ProbeSet {
    specs: Vec<ProbeSpec>,
    opened: Vec<Opened>,
}

impl ProbeSet {
    /// Check and open every probe; any problem is one line, and nothing is sent.
    pub fn open(specs: Vec<ProbeSpec>) -> anyhow::Result<ProbeSet> {
        let opened = specs.iter().map(open).collect::<anyhow::Result<_>>()?;
        Ok(ProbeSet { specs, opened })
    }

    /// Open `specs` and start them at once (see [`ProbeSet::run`]).
    pub fn start(specs: Vec<ProbeSpec>, phase: PhaseFn) -> anyhow::Result<RunningProbes> {
        ProbeSet::open(specs)?.run(phase, None)
    }

    /// How probe `index` measures, e.g. `echo to 127.0.0.1, raw socket, 56-byte payload`.
    pub fn detail(&self, index: usize) -> &str {
        self.opened.get(index).map_or("", |o| o.detail.as_str())
    }

    /// Run the probes until each reaches its count or duration or [`RunningProbes::stop`],
    /// telling `observer` (if any) of each sample as its outcome is known. Every icmp, udp, tcp and
    /// http probe runs on one thread, `probes`, driven by one poller; each command probe runs on
    /// a thread of its own (its fork, exec and wait never hold up the others).
    pub fn run(self, phase: PhaseFn, observer: Option<Observer>) -> anyhow::Result<RunningProbes> {
        let stop = Arc::new(sys::Stop::new()?);
        let cut = Cut::new();
        let done = Arc::new((Mutex::new(Done::default()), Condvar::new()));
        let mut running = RunningProbes {
            threads: Vec::new(),
            specs: self.specs.clone(),
            stop: stop.clone(),
            cut: cut.clone(),
            done: done.clone(),
        };
        let mut shared = Vec::new();
        for (index, (spec, o)) in self.specs.into_iter().zip(self.opened).enumerate() {
            let driver = match o.driver {
                Driver::Exchange(e) => e,
                d => {
                    shared.push(sched::Member {
                        index,
                        spec,
                        opened: Opened { driver: d, ..o },
                    });
                    continue;
                }
            };
            let ctx = engine::Ctx {
                index,
                spec,
                phase: phase.clone(),
                stop: stop.clone(),
                observer: observer.clone(),
            };
            let (detail, parts) = (o.detail, o.parts);
            let d = done.clone();
            let c = cut.clone();
            running.spawn(format!("probe-{index}"), vec![index], move || {
                // The command's process group, killed by an abort.
                let _in = c.enter();
                let r = engine::run(ctx, driver, detail, parts);
                finished(&d, 1);
                vec![r]
            })?;
        }
        if !shared.is_empty() {
            let indices = shared.iter().map(|m| m.index).collect();
            let n = shared.len();
            let (d, s) = (done.clone(), stop.clone());
            running.spawn("probes".into(), indices, move || {
                let r = sched::run(shared, &phase, &s, observer.as_ref());
                finished(&d, n);
                r
            })?;
        }
        Ok(running)
    }
}

/// `n` more probes have finished.
fn finished(done: &(Mutex<Done>, Condvar), n: usize) {
    let (m, cv) = done;
    m.lock().unwrap_or_else(|p| p.into_inner()).finished += n;
    cv.notify_all();
}

/// How many probes have finished, and whether a [`Bell`] rang.
#[derive(Default)]
struct Done {
    finished: usize,
    rung: bool,
}

/// Ends a [`RunningProbes::wait_finished`] early, e.g. from a thread that waits for Ctrl-C, so
/// that the waiting thread can sleep until something happens instead of waking up to look.
#[derive(Clone)]
pub struct Bell(Arc<(Mutex<Done>, Condvar)>);

impl Bell {
    pub fn ring(&self) {
        let (n, cv) = &*self.0;
        n.lock().unwrap_or_else(|p| p.into_inner()).rung = true;
        cv.notify_all();
    }
}

/// Probes running on their threads.
pub struct RunningProbes {
    /// Each thread with the indices of the probes it runs, which it returns in that order.
    threads: Vec<(JoinHandle<Vec<ProbeResult>>, Vec<usize>)>,
    specs: Vec<ProbeSpec>,
    stop: Arc<sys::Stop>,
    cut: Cut,
    done: Arc<(Mutex<Done>, Condvar)>,
}

impl RunningProbes {
    /// Wait up to `d` for every probe to reach its count or duration, or for the [`Bell`] to ring
    /// (once rung, it returns at once); true when all probes have finished.
    pub fn wait_finished(&self, d: Duration) -> bool {
        let (n, cv) = &*self.done;
        let guard = n.lock().unwrap_or_else(|p| p.into_inner());
        let (guard, _) = cv
            .wait_timeout_while(guard, d, |n| n.finished < self.specs.len() && !n.rung)
            .unwrap_or_else(|p| p.into_inner());
        guard.finished >= self.specs.len()
    }

    /// What ends a [`RunningProbes::wait_finished`] early.
    pub fn bell(&self) -> Bell {
        Bell(self.done.clone())
    }

    /// Stop sending, wait for the probes in flight (each at most its timeout, and at most a second:
    /// one still waiting then is a loss), and return one result per spec, in the order given.
    pub fn stop(self) -> Vec<ProbeResult> {
        self.stop.set();
        if !self.wait_finished(engine::END_GRACE) {
            self.cut.cut(Why::Deadline);
        }
        self.join()
    }

    /// Stop at once (Ctrl-C): the probes in flight are ended (their sockets shut, their commands'
    /// process groups killed) and left out of the samples, which hold only finished probes.
    pub fn abort(self) -> Vec<ProbeResult> {
        self.stop.abort();
        self.cut.cut(Why::Interrupted);
        self.join()
    }

    /// Start a thread that runs the probes `indices`; on failure, the threads started so far are
    /// stopped and joined.
    fn spawn(&mut self, name: String, indices: Vec<usize>, f: impl FnOnce() -> Vec<ProbeResult> + Send + 'static) -> anyhow::Result<()> {
        match std::thread::Builder::new().name(name).spawn(f) {
            Ok(t) => {
                self.threads.push((t, indices));
                Ok(())
            }
            Err(e) => {
                self.stop.abort();
                std::mem::take(&mut self.threads).into_iter().for_each(|(t, _)| drop(t.join()));
                Err(e.into())
            }
        }
    }

    fn join(mut self) -> Vec<ProbeResult> {
        let specs = std::mem::take(&mut self.specs);
        let mut out: Vec<Option<ProbeResult>> = vec![None; specs.len()];
        for (t, indices) in std::mem::take(&mut self.threads) {
            let results = t.join().unwrap_or_default();
            for (i, r) in indices
                .into_iter()
                .zip(results.into_iter().map(Some).chain(std::iter::repeat(None)))
            {
                out[i] = r;
            }
        }
        out.into_iter()
            .zip(specs)
            .map(|(r, spec)| r.unwrap_or_else(|| ProbeResult::failed(spec, "the probe's thread panicked")))
            .collect()
    }
}

/// Probes dropped without [`RunningProbes::stop`] stop sending too (their threads end on their own,
/// each within its timeout).
impl Drop for RunningProbes {
    fn drop(&mut self) {
        self.stop.set();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_keep_what_they_are_given_in_order_and_a_sample_moves_without_memcpy() {
        let given = [
            Duration::from_nanos(1),
            Duration::from_micros(250),
            Duration::ZERO,
            Duration::from_secs(7),
        ];
        let p: Parts = given.iter().copied().collect();
        assert_eq!((p.len(), p.is_empty()), (4, false));
        assert_eq!(p.iter().collect::<Vec<_>>(), given);
        assert_eq!((p.get(1), p.get(4)), (Some(given[1]), None));
        assert_eq!(format!("{p:?}"), format!("{given:?}"));
        assert!(Parts::NONE.is_empty() && Parts::default() == Parts::NONE && Parts::NONE.iter().next().is_none());
        // At most MAX, the first ones; a part past 584 years is kept just short of it.
        let six: Parts = (1..=6).map(Duration::from_secs).collect();
        assert_eq!(six.iter().collect::<Vec<_>>(), (1..=5).map(Duration::from_secs).collect::<Vec<_>>());
        // To the nanosecond below 2^31 ns, to the microsecond from there, at most ~35 minutes.
        let edge = Duration::from_nanos((1 << 31) - 1);
        let kept = |d: Duration| [d].into_iter().collect::<Parts>().iter().next().unwrap();
        assert_eq!(kept(edge), edge);
        assert_eq!(kept(edge + Duration::from_nanos(1)), Duration::from_micros(2_147_483));
        assert_eq!(kept(Duration::from_nanos(12_345_678_901)), Duration::from_micros(12_345_678));
        assert_eq!(kept(Duration::MAX), Duration::from_micros((1 << 31) - 2));
        // A sample of 128 bytes was pushed with a call to memcpy (x86-64, release build); of 120,
        // as it was with a vector of parts, without.
        assert!(std::mem::size_of::<Sample>() <= 120, "{}", std::mem::size_of::<Sample>());
    }
}
