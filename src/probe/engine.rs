//! The engine every kind shares: the absolute send schedule, the timeouts, the bounds, the phase
//! tag of each sample, and the loops that drive an [`Exchange`] or a [`Datagram`].

use super::clock::Instant;
use super::result::ProbeResult;
use super::sys::Stop;
use super::{Datagram, Exchange, Exchanged, Observer, Outcome, PhaseFn, PhaseTag, ProbeSpec, Received, Sample, Traffic};
use crate::util::cut::cut_here;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

/// How long a probe in flight may still wait for its answer after the probe's end (its duration,
/// or a stop): with no answer by then it is a loss, however long its timeout.
pub(crate) const END_GRACE: Duration = Duration::from_secs(1);

/// What a probe's thread is given.
pub(crate) struct Ctx {
    pub index: usize,
    pub spec: ProbeSpec,
    pub phase: PhaseFn,
    pub stop: Arc<Stop>,
    pub observer: Option<Observer>,
}

/// Run one exchange probe (a command) on the calling thread to its end (count, duration or
/// stop) and return what it measured.
pub(crate) fn run(ctx: Ctx, mut ex: Box<dyn Exchange>, detail: String, parts: &'static [&'static str]) -> ProbeResult {
    let started_unix_s = crate::util::time::unix_now();
    let mut rec = Recorder::new(ctx.index, &ctx.spec, ctx.observer.clone());
    let mut sched = Schedule::new(rec.start, &ctx.spec);
    exchange_loop(&ctx, ex.as_mut(), &mut sched, &mut rec);
    rec.result(ctx.spec, &sched, detail, parts, started_unix_s)
}

/// Room for the samples a probe will take, so that its vector does not grow (and copy) while it
/// runs: its count, or its duration over its interval, at most 65 536 (~8 MiB of address space,
/// whose pages are touched only as samples fill them; a longer probe grows by doubling past that).
pub(crate) fn expected_samples(spec: &ProbeSpec) -> usize {
    let by_time = spec.max_duration().as_nanos() / spec.interval.as_nanos().max(1) + 1;
    (spec.max_count() as u128).min(by_time).min(1 << 16) as usize
}

/// Sends at start + k × interval. A slot missed by more than a whole interval is skipped (and
/// counted) rather than sent late in a burst; one missed by less is sent at once. A probe bounded by
/// its count alone (no duration) skips nothing: its count is what was asked, so after a miss the
/// schedule starts again from now (the next probe at once, the others an interval apart).
pub(crate) struct Schedule {
    start: Instant,
    /// The interval in nanoseconds (at least 1), for the slots' arithmetic in 64 bits.
    interval_ns: u64,
    slot: u64,
    sent: u64,
    count: u64,
    /// Slots are tied to the clock (a duration bounds the probe): missed ones are skipped.
    timed: bool,
    pub end: Instant,
    pub skipped: u64,
}

impl Schedule {
    pub fn new(start: Instant, spec: &ProbeSpec) -> Schedule {
        Schedule {
            start,
            interval_ns: spec.interval.as_nanos().clamp(1, u64::MAX as u128) as u64,
            slot: 0,
            sent: 0,
            count: spec.max_count(),
            timed: spec.duration.is_some() || spec.count.is_none(),
            end: start + spec.max_duration(),
            skipped: 0,
        }
    }

    fn at(&self, slot: u64) -> Instant {
        self.start.add_nanos(self.interval_ns.saturating_mul(slot))
    }

    /// The time the next probe is due, or None when the count or the duration is reached.
    pub fn next_due(&mut self, now: Instant) -> Option<Instant> {
        if self.sent >= self.count {
            return None;
        }
        // Slot `slot` begins `back` after the start; it is missed once a whole interval has passed.
        let back = self.interval_ns.saturating_mul(self.slot);
        let since = now.nanos_since(self.start);
        if since >= back.saturating_add(self.interval_ns) {
            if self.timed {
                let k = since / self.interval_ns;
                self.skipped += k.saturating_sub(self.slot);
                self.slot = k.max(self.slot);
            } else {
                // Slot `slot` is due now: start = now − slot × interval (never before the start).
                self.start = now.sub_nanos(back).max(self.start);
            }
        }
        let due = self.at(self.slot);
        (due < self.end).then_some(due)
    }

    /// A probe was sent for the current slot.
    pub fn sent(&mut self) {
        self.sent += 1;
        self.slot += 1;
    }
}

/// The samples and the counts they cannot hold.
pub(crate) struct Recorder {
    pub start: Instant,
    pub samples: Vec<Sample>,
    observer: Option<Observer>,
    index: usize,
    pub late: u64,
    pub duplicates: u64,
    pub stray: u64,
    pub failure: Option<String>,
}

impl Recorder {
    pub fn new(index: usize, spec: &ProbeSpec, observer: Option<Observer>) -> Recorder {
        Recorder {
            start: Instant::now(),
            samples: Vec::with_capacity(expected_samples(spec)),
            observer,
            index,
            late: 0,
            duplicates: 0,
            stray: 0,
            failure: None,
        }
    }

    pub fn t_s(&self, at: Instant) -> f64 {
        at.duration_since(self.start).as_secs_f64()
    }

    /// A sample for the probe sent at `at` in `phase`, settled with `done`.
    pub fn push(&mut self, at: Instant, phase: PhaseTag, done: Exchanged) {
        self.samples.push(Sample {
            seq: self.samples.len() as u64,
            t_s: self.t_s(at),
            phase,
            outcome: done.outcome,
            parts: done.parts,
            traffic: done.traffic,
        });
        self.settled(self.samples.len() as u64 - 1);
    }

    /// What the probe measured, once it has ended.
    pub fn result(
        self,
        spec: ProbeSpec,
        sched: &Schedule,
        detail: String,
        part_names: &'static [&'static str],
        started_unix_s: f64,
    ) -> ProbeResult {
        ProbeResult {
            detail,
            part_names,
            started_unix_s,
            elapsed: self.start.elapsed(),
            skipped: sched.skipped,
            late: self.late,
            duplicates: self.duplicates,
            stray: self.stray,
            failure: self.failure,
            samples: self.samples,
            spec,
        }
    }

    /// Tell the observer that sample `seq` is settled.
    pub fn settled(&self, seq: u64) {
        if let (Some(o), Some(s)) = (&self.observer, self.samples.get(seq as usize)) {
            o(self.index, s);
        }
    }
}

fn exchange_loop(ctx: &Ctx, ex: &mut dyn Exchange, sched: &mut Schedule, rec: &mut Recorder) {
    loop {
        let now = Instant::now();
        let Some(due) = sched.next_due(now) else { break };
        let stopped = if due > now { ctx.stop.wait(due - now) } else { ctx.stop.is_set() };
        if stopped {
            break;
        }
        let at = Instant::now();
        let phase = (ctx.phase)();
        // The probe's duration bounds its waits too: at most END_GRACE past its end.
        let timeout = ctx.spec.timeout.min((sched.end + END_GRACE).saturating_duration_since(at));
        let done = ex.exchange(timeout);
        if ctx.stop.is_aborted() {
            // Ended by the abort, not by its peer: no outcome to record.
            break;
        }
        // Cut at a stop (RunningProbes::stop) while still waiting: no answer by the end, a loss.
        let outcome = if cut_here().is_some() { Outcome::Timeout } else { done.outcome };
        sched.sent();
        rec.push(at, phase, Exchanged { outcome, ..done });
    }
}

/// A datagram probe awaiting its reply.
pub(crate) struct Flight {
    pub seq: u64,
    pub at: Instant,
    pub tx_ns: i64,
    pub deadline: Instant,
    pub done: bool,
}

/// The round trip: the kernel's receive time less the send time where the kernel stamped the
/// reply (no wake-up delay in it, as ping measures), else the time userspace saw it. A kernel time
/// that disagrees with the monotonic clock (a wall-clock step) is not used.
pub(crate) fn round_trip(f: &Flight, at: Instant, kernel_ns: Option<i64>) -> Duration {
    let mono = at.saturating_duration_since(f.at);
    match kernel_ns.map(|k| k - f.tx_ns) {
        Some(d) if d >= 0 && (d as u128) <= mono.as_nanos() + 1_000_000 => Duration::from_nanos(d as u64),
        _ => mono,
    }
}

/// How much of what waits on a datagram socket [`drain`] reads.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Drain {
    /// One datagram, if one is there (a look right after a send).
    One,
    /// Up to the reply to the newest probe in flight, or until none is left: in the usual case
    /// (one reply per probe, each before the next send) that is one read, without the read that
    /// finds the socket empty. Anything left behind (reordered replies, duplicates) is read at the
    /// next datagram's arrival or before any probe is declared lost.
    ToNewest,
    /// Until the socket is empty.
    All,
}

/// Read datagrams waiting on the socket, as `how` says; returns how many were read. An error (a
/// socket's pending error comes once) does not end the reading, since the poller is
/// edge-triggered and says nothing more until new data comes; a socket that fails a thousand
/// times in a row ends the probe.
pub(crate) fn drain(
    dg: &mut dyn Datagram,
    rec: &mut Recorder,
    flights: &mut VecDeque<Flight>,
    errors_in_a_row: &mut u32,
    how: Drain,
) -> usize {
    let mut n = 0;
    loop {
        match dg.recv() {
            Ok(None) => break,
            Ok(Some(r)) => {
                *errors_in_a_row = 0;
                n += 1;
                let newest = flights.back().map(|f| f.seq);
                let answered = match &r {
                    Received::Reply { seq, .. } => Some(*seq),
                    _ => None,
                };
                settle(rec, flights, r);
                let last = answered.is_some() && answered == newest && flights.back().is_some_and(|f| f.done);
                if how == Drain::One || (how == Drain::ToNewest && last) {
                    break;
                }
            }
            Err(e) => {
                *errors_in_a_row += 1;
                if *errors_in_a_row > 1000 {
                    rec.failure = Some(format!("receiving replies: {e}"));
                    break;
                }
            }
        }
    }
    n
}

/// Match one received datagram to its probe.
pub(crate) fn settle(rec: &mut Recorder, flights: &mut VecDeque<Flight>, r: Received) {
    match r {
        Received::Stray => rec.stray += 1,
        Received::Error(what) => {
            if let Some(f) = flights.iter_mut().rev().find(|f| !f.done) {
                f.done = true;
                rec.samples[f.seq as usize].outcome = Outcome::Error(what);
                rec.settled(f.seq);
            } else {
                rec.stray += 1;
            }
        }
        Received::Reply { seq, at, kernel_ns, bytes } => {
            let Some(sample) = rec.samples.get_mut(seq as usize) else {
                rec.stray += 1;
                return;
            };
            sample.traffic += Traffic {
                packets_in: 1,
                bytes_in: bytes,
                ..Traffic::default()
            };
            let front = flights.front().map_or(u64::MAX, |f| f.seq);
            match flights.get_mut(seq.wrapping_sub(front) as usize) {
                Some(f) if !f.done => {
                    f.done = true;
                    sample.outcome = Outcome::Reply {
                        rtt: round_trip(f, at, kernel_ns),
                    };
                    rec.settled(seq);
                }
                Some(_) => rec.duplicates += 1,
                // Gone from the window: timed out (late) or answered before (duplicate).
                None if sample.outcome == Outcome::Timeout => rec.late += 1,
                None => rec.duplicates += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{Kind, PhaseTag};
    use std::sync::atomic::{AtomicU64, Ordering};

    fn spec(interval_ms: u64, count: u64) -> ProbeSpec {
        let mut s = ProbeSpec::new(Kind::Tcp, "127.0.0.1:1");
        s.interval = Duration::from_millis(interval_ms);
        s.count = Some(count);
        s
    }

    #[test]
    fn a_slot_missed_by_more_than_an_interval_is_skipped_not_burst() {
        let t0 = Instant::now();
        let mut timed = spec(10, 100);
        timed.duration = Some(Duration::from_secs(10));
        let mut s = Schedule::new(t0, &timed);
        assert_eq!(s.next_due(t0), Some(t0));
        s.sent();
        // 35 ms later: slot 1 (10 ms) is more than an interval late; slots 1 and 2 are skipped and
        // slot 3 (30 ms) is due at once.
        let due = s.next_due(t0 + Duration::from_millis(35)).unwrap();
        assert_eq!(due, t0 + Duration::from_millis(30));
        assert_eq!(s.skipped, 2);
        s.sent();
        // 45 ms: slot 4 (40 ms) is late by less than an interval: sent now, nothing skipped.
        assert_eq!(s.next_due(t0 + Duration::from_millis(45)).unwrap(), t0 + Duration::from_millis(40));
        assert_eq!(s.skipped, 2);
    }

    #[test]
    fn a_count_alone_skips_nothing_the_schedule_starts_again_after_a_miss() {
        // -c 3 every 200 ms, the first probe taking 20 s: 3 probes, none skipped, none in a burst.
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut s = Schedule::new(t0, &spec(200, 3));
        assert_eq!(s.next_due(t0), Some(t0));
        s.sent();
        let late = t0 + ms(20_000);
        assert_eq!(s.next_due(late), Some(late), "the next probe at once");
        s.sent();
        assert_eq!(s.next_due(late), Some(late + ms(200)), "the one after an interval later");
        s.sent();
        assert_eq!(s.next_due(late + ms(200)), None, "a count of 3 is 3");
        assert_eq!(s.skipped, 0);
        // Without a count or a duration (until Ctrl-C) the slots keep to the clock: skipped.
        let mut until = spec(200, 3);
        until.count = None;
        let mut s = Schedule::new(t0, &until);
        s.next_due(t0).unwrap();
        s.sent();
        assert_eq!(s.next_due(late), Some(late));
        assert_eq!(s.skipped, 99);
    }

    #[test]
    fn samples_are_reserved_for_the_count_or_the_duration_up_to_a_cap() {
        assert_eq!(expected_samples(&spec(10, 500)), 500);
        let mut d = spec(10, 1_000_000);
        d.duration = Some(Duration::from_secs(3));
        assert_eq!(expected_samples(&d), 301, "3 s at 10 ms: slots 0 to 300");
        d.duration = None;
        assert_eq!(expected_samples(&d), 1 << 16);
    }

    #[test]
    fn the_schedule_ends_at_its_count_and_its_duration() {
        let t0 = Instant::now();
        let mut s = Schedule::new(t0, &spec(10, 2));
        s.next_due(t0).unwrap();
        s.sent();
        s.next_due(t0).unwrap();
        s.sent();
        assert_eq!(s.next_due(t0), None);
        let mut d = spec(10, 100);
        d.duration = Some(Duration::from_millis(25));
        let mut s = Schedule::new(t0, &d);
        for _ in 0..3 {
            s.next_due(t0).unwrap();
            s.sent();
        }
        // Slot 3 would be at 30 ms, past the 25 ms duration.
        assert_eq!(s.next_due(t0), None);
    }

    /// An exchange that answers at once and moves a fake clock on by 10 ms: the time its probe took.
    struct Tick(Arc<AtomicU64>);
    impl Exchange for Tick {
        fn exchange(&mut self, _timeout: Duration) -> super::super::Exchanged {
            self.0.fetch_add(10, Ordering::SeqCst);
            super::super::Exchanged {
                outcome: Outcome::Reply {
                    rtt: Duration::from_micros(5),
                },
                parts: crate::probe::Parts::NONE,
                traffic: Traffic::default(),
            }
        }
    }

    #[test]
    fn samples_take_the_phase_of_their_send_time_from_a_fake_phase_clock() {
        // The fake clock reads 0 ms at the first send and 10 ms more after each probe; the phase
        // function says baseline before 30 ms, load before 70 ms, recovery after. Tagged at the
        // send, probe k reads 10k ms; tagged at its end it would read 10(k+1) and the tags would shift.
        let clock = Arc::new(AtomicU64::new(0));
        let calls = Arc::new(AtomicU64::new(0));
        let (c, n) = (clock.clone(), calls.clone());
        let phase: PhaseFn = Arc::new(move || {
            n.fetch_add(1, Ordering::SeqCst);
            PhaseTag::new(match c.load(Ordering::SeqCst) {
                0..30 => "baseline",
                30..70 => "load",
                _ => "recovery",
            })
        });
        let ctx = Ctx {
            index: 0,
            spec: spec(1, 10),
            phase,
            stop: Arc::new(Stop::new().unwrap()),
            observer: None,
        };
        let r = run(ctx, Box::new(Tick(clock.clone())), "fake".into(), &[]);
        assert_eq!(r.samples.len(), 10);
        assert_eq!(clock.load(Ordering::SeqCst), 100);
        assert_eq!(calls.load(Ordering::SeqCst), 10, "one phase call per probe");
        let tags: Vec<&str> = r.samples.iter().map(|s| s.phase.as_str()).collect();
        assert_eq!(
            tags,
            ["baseline", "baseline", "baseline", "load", "load", "load", "load", "recovery", "recovery", "recovery"]
        );
        let by: Vec<(String, u64)> = r.by_phase().into_iter().map(|(p, s)| (p.to_string(), s.n)).collect();
        assert_eq!(by, [("baseline".into(), 3), ("load".into(), 4), ("recovery".into(), 3)]);
        assert!(r.samples.windows(2).all(|w| w[0].t_s <= w[1].t_s && w[1].seq == w[0].seq + 1));
    }
}
