//! One second of one worker's measured operations, sent to the coordinator, and the second of the
//! whole run the coordinator makes of them ([`Tick`]).

use hdrhistogram::Histogram;

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
    pub p99_ms: f64,
}
