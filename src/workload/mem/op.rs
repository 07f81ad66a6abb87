//! One `mem` worker's operation. In touch mode a call touches the next chunk of the region, then
//! (with `verify`) runs the next pattern test, then the worker holds the region idle to the end of the
//! load phase; in bandwidth mode a call is one STREAM iteration (method stream) or one pass over the
//! block (methods read and write); in latency mode a chase of
//! [`chase::ACCESSES`] loads.

use super::chase::{self, Chase};
use super::config::{Method, Mode};
use super::patterns::{Verifier, INJECT_ENV, PATTERNS};
use super::seq::{Dir, Sequential};
use super::stream::Stream;
use super::touch::Region;
use crate::workload::driver::ops::{Operation, Until};
use std::time::{Duration, Instant};

/// One pattern test's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct PatternResult {
    pub name: &'static str,
    /// Words found different; None when the run ended before the test.
    pub errors: Option<u64>,
    pub time: Duration,
}

pub enum MemOp {
    Touch {
        region: Region,
        verifier: Option<Verifier>,
        patterns: Vec<PatternResult>,
        until: Until,
    },
    Bandwidth {
        stream: Stream,
        measured: bool,
    },
    /// bandwidth with method read or write: one pass over the block per call.
    Sequential {
        seq: Sequential,
        measured: bool,
    },
    Latency {
        chase: Chase,
        measured: bool,
        /// ns per access of each measured chase.
        ns: Vec<f64>,
    },
}

impl MemOp {
    pub fn new(mode: &Mode, id: usize, until: Until) -> anyhow::Result<MemOp> {
        Ok(match mode {
            Mode::Touch { bytes, verify } => MemOp::Touch {
                region: Region::new(*bytes)?,
                verifier: verify.then(|| Verifier::new(id as u64 + 1, std::env::var(INJECT_ENV).ok())),
                patterns: Vec::new(),
                until,
            },
            Mode::Bandwidth {
                array_bytes,
                method: m @ (Method::Read | Method::Write),
                ..
            } => MemOp::Sequential {
                seq: Sequential::new(*array_bytes, if *m == Method::Read { Dir::Read } else { Dir::Write }),
                measured: false,
            },
            Mode::Bandwidth { array_bytes, .. } => MemOp::Bandwidth {
                stream: Stream::new((*array_bytes / 8) as usize),
                measured: false,
            },
            Mode::Latency { bytes } => MemOp::Latency {
                chase: Chase::new(*bytes, id as u64 + 7),
                measured: false,
                ns: Vec::new(),
            },
        })
    }
}

impl Operation for MemOp {
    fn call(&mut self) -> Result<(), String> {
        match self {
            MemOp::Touch {
                region,
                verifier,
                patterns,
                until,
            } => {
                if !region.fully_touched() {
                    region.touch_chunk();
                    return Ok(());
                }
                let Some(v) = verifier.as_mut() else { return Ok(()) };
                let i = patterns.len();
                if i >= PATTERNS.len() || until.reached() {
                    return Ok(());
                }
                let t = Instant::now();
                let (a, b) = region.halves();
                let stop = || until.reached();
                let found = v.run(i, a, b, &stop);
                patterns.push(PatternResult {
                    name: PATTERNS[i],
                    errors: found,
                    time: t.elapsed(),
                });
                let Some(errors) = found else { return Ok(()) };
                if errors > 0 {
                    return Err(format!("pattern {}: {errors} word(s) differ", PATTERNS[i]));
                }
                Ok(())
            }
            MemOp::Bandwidth { stream, measured } => {
                stream.iterate(*measured);
                Ok(())
            }
            MemOp::Sequential { seq, measured } => {
                seq.pass(*measured);
                Ok(())
            }
            MemOp::Latency { chase, measured, ns } => {
                let t = Instant::now();
                chase.run(chase::ACCESSES);
                if *measured {
                    ns.push(t.elapsed().as_nanos() as f64 / chase::ACCESSES as f64);
                }
                Ok(())
            }
        }
    }

    fn between(&mut self, _now: Instant, is_measured: bool) {
        match self {
            MemOp::Bandwidth { measured, .. } | MemOp::Sequential { measured, .. } | MemOp::Latency { measured, .. } => {
                *measured = is_measured
            }
            MemOp::Touch { .. } => {}
        }
    }

    fn idle(&self) -> bool {
        match self {
            MemOp::Touch {
                region,
                verifier,
                patterns,
                ..
            } => region.fully_touched() && (verifier.is_none() || patterns.len() >= PATTERNS.len()),
            _ => false,
        }
    }
}
