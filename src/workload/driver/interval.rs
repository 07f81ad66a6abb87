//! One second of one worker's measured operations, sent to the coordinator, and the second of the
//! whole run the coordinator makes of them ([`Tick`]).

use hdrhistogram::Histogram;
use std::sync::mpsc::Sender;
use std::time::Instant;

/// One second of one worker's measured operations.
pub struct Interval {
    pub sec: u32,
    pub latency: Histogram<u64>,
    pub responses: u64,
    pub errors: u64,
}

impl Interval {
    /// An empty interval for second `sec` of the measured phase.
    pub fn new(sec: u32) -> Interval {
        Interval {
            sec,
            latency: crate::workload::result::latency_histogram(),
            responses: 0,
            errors: 0,
        }
    }
}

/// Sends each finished second of measurement to the coordinator (`last`: and the partial one),
/// leaving `iv` the interval of the second under way; nothing before `measure_from`.
pub fn flush(iv: &mut Interval, measure_from: Instant, now: Instant, last: bool, tx: &Sender<Message>) {
    if now < measure_from {
        return;
    }
    let elapsed = now.duration_since(measure_from).as_secs() as u32;
    while iv.sec < elapsed || last {
        let next = Interval::new(iv.sec + 1);
        let done = std::mem::replace(iv, next);
        let _ = tx.send(Message::Interval(done));
        if last {
            break;
        }
    }
}

/// What a worker thread tells the coordinator.
pub enum Message {
    Interval(Interval),
    Finished,
}

/// One second of the whole run: every worker's interval of that second merged.
#[derive(Clone, Debug)]
pub struct Tick {
    pub t_s: f64,
    /// The interval's length: 1 s, less for the last one.
    pub span_s: f64,
    pub responses: u64,
    pub errors: u64,
    pub requests_per_s: f64,
    /// The second's median and p99 latency (ms; NaN without a response).
    pub p50_ms: f64,
    pub p99_ms: f64,
}
