//! A net worker's measured seconds: the bytes (or datagrams) of each whole second of the measured
//! phase, sent to the driver's coordinator as an interval whose `responses` count them, so that the
//! live line and the series are per-second rates.

use crate::workload::driver::interval::{Interval, Message};
use std::sync::mpsc::Sender;
use std::time::Instant;

pub struct Seconds {
    measure_from: Instant,
    sec: u32,
    /// This second's count so far.
    pub count: u64,
}

impl Seconds {
    pub fn new(measure_from: Instant) -> Seconds {
        Seconds {
            measure_from,
            sec: 0,
            count: 0,
        }
    }

    /// Send the seconds that have ended by `now`; true when at least one did.
    pub fn tick(&mut self, now: Instant, tx: &Sender<Message>) -> bool {
        if now < self.measure_from {
            return false;
        }
        let elapsed = now.duration_since(self.measure_from).as_secs() as u32;
        let mut closed = false;
        while self.sec < elapsed {
            self.send(tx);
            closed = true;
        }
        closed
    }

    /// Send the last, partial second (if the measured phase began).
    pub fn finish(&mut self, tx: &Sender<Message>) {
        if Instant::now() >= self.measure_from {
            self.send(tx);
        }
    }

    fn send(&mut self, tx: &Sender<Message>) {
        let mut iv = Interval::new(self.sec);
        iv.responses = std::mem::take(&mut self.count);
        let _ = tx.send(Message::Interval(iv));
        self.sec += 1;
    }
}
