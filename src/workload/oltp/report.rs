//! What an OLTP run measured, as sysbench's summary reads (tps, qps read/write/other, latency,
//! errors by class with the first example), as JSON (`perflab.load.oltp/1`) and as a trial's
//! metrics (docs/load.md lists them).

use super::backend::{ErrorClass, Stmt};
use super::config::Settings;
use super::op::OltpOp;
use super::stats::{stmt_index, stmt_name, OltpStats};
use crate::workload::driver::interval::Tick;
use crate::workload::driver::ops::{OpStats, Run};
use crate::workload::result::quantile;
use crate::workload::{NamedHistogram, SeriesPoint, WorkloadResult};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// The JSON schema's name and version.
pub const SCHEMA: &str = "perflab.load.oltp/1";

/// Every error class, in report order.
pub const CLASSES: [ErrorClass; 5] = [
    ErrorClass::Deadlock,
    ErrorClass::DuplicateKey,
    ErrorClass::TooManyConnections,
    ErrorClass::ConnectionLost,
    ErrorClass::Other,
];

pub struct OltpReport {
    pub scenario: &'static str,
    /// The database, without its password.
    pub db: String,
    pub threads: usize,
    pub rate: Option<f64>,
    pub stats: OltpStats,
    /// The driver's counts: the latency histogram of the committed transactions (µs, retries
    /// included), committed and failed calls, late and dropped sends.
    pub calls: OpStats,
    pub series: Vec<Tick>,
    pub measured: Duration,
    /// This process's CPU time over the run.
    pub cpu_s: f64,
    /// Connections down at the end, with the class of the error that left each so.
    pub down: Vec<ErrorClass>,
    pub interrupted: bool,
}

impl OltpReport {
    pub fn new(s: &Settings, db: &str, run: Run<OltpOp>, interrupted: bool) -> OltpReport {
        let mut stats = OltpStats::default();
        for w in &run.workers {
            stats.merge(&w.stats.op.stats);
        }
        OltpReport {
            scenario: s.scenario.name(),
            db: super::redact_url(db),
            threads: s.threads,
            rate: s.rate,
            stats,
            down: run.workers.iter().filter_map(|w| w.stats.op.disconnected).collect(),
            calls: run.total,
            series: run.series,
            measured: run.measured,
            cpu_s: run.cpu.as_secs_f64(),
            interrupted,
        }
    }

    fn secs(&self) -> f64 {
        self.measured.as_secs_f64().max(1e-9)
    }

    pub fn tps(&self) -> f64 {
        self.stats.transactions as f64 / self.secs()
    }

    /// (total, read, write, other) queries per second.
    pub fn qps(&self) -> (f64, f64, f64, f64) {
        let (r, w, o) = self.stats.queries();
        let t = self.secs();
        ((r + w + o) as f64 / t, r as f64 / t, w as f64 / t, o as f64 / t)
    }

    /// A quantile of the transaction latency, ms.
    pub fn latency_ms(&self, q: f64) -> f64 {
        quantile(&self.calls.latency, q, 1000.0)
    }

    /// Why the trial failed, if it did: nothing committed, or connections lost and not regained.
    pub fn failure(&self) -> Option<String> {
        let first = |c: ErrorClass| self.stats.errors.get(&c).map(|e| e.first.clone()).unwrap_or_default();
        if let Some(c) = self.down.iter().find(|c| **c != ErrorClass::TooManyConnections) {
            return Some(format!(
                "{}: {} ({} of {} connection(s) down at the end)",
                c.name(),
                first(*c),
                self.down.len(),
                self.threads
            ));
        }
        if self.stats.transactions == 0 && !self.interrupted {
            let e = self.stats.errors.iter().next().map(|(c, e)| format!(": {}: {}", c.name(), e.first));
            return Some(format!("no transaction committed{}", e.unwrap_or_default()));
        }
        None
    }

    /// The summary a sysbench user recognises (from the document).
    pub fn summary(&self) -> String {
        self.document().summary()
    }

    /// The `perflab.load.oltp/1` document, typed.
    pub fn document(&self) -> OltpJson {
        let (r, w, o) = self.stats.queries();
        let (qt, qr, qw, qo) = self.qps();
        OltpJson {
            schema: SCHEMA,
            scenario: self.scenario,
            db: self.db.clone(),
            threads: self.threads,
            rate: self.rate,
            measured_s: self.measured.as_secs_f64(),
            interrupted: self.interrupted,
            transactions: self.stats.transactions,
            transactions_per_s: self.tps(),
            failed_transactions: self.calls.errors,
            queries: Queries {
                read: r,
                write: w,
                other: o,
                total: r + w + o,
            },
            queries_per_s: Queries {
                read: qr,
                write: qw,
                other: qo,
                total: qt,
            },
            latency_ms: LatencyMs {
                p50: self.latency_ms(0.5),
                p95: self.latency_ms(0.95),
                p99: self.latency_ms(0.99),
                max: self.calls.latency.max() as f64 / 1000.0,
            },
            statements: Stmt::ALL
                .iter()
                .zip(&self.stats.stmts)
                .filter(|(_, st)| !st.latency.is_empty())
                .map(|(k, st)| {
                    let ms = |q: f64| quantile(&st.latency, q, 1000.0);
                    let s = StatementJson {
                        ok: st.ok,
                        p50_ms: ms(0.5),
                        p99_ms: ms(0.99),
                    };
                    (stmt_name(*k), s)
                })
                .collect(),
            errors: self
                .stats
                .errors
                .iter()
                .map(|(c, e)| {
                    let e = ErrorJson {
                        count: e.count,
                        first: e.first.clone(),
                    };
                    (c.name(), e)
                })
                .collect(),
            retries: self.stats.retries,
            reconnects: self.stats.reconnects,
            rows_read: self.stats.rows_read,
            failure: self.failure(),
            latency_mean_ms: (!self.calls.latency.is_empty()).then(|| self.calls.latency.mean() / 1000.0),
            late: self.calls.late,
            dropped: self.calls.dropped,
            scheduled: self.calls.scheduled,
            client_cpu_s: self.cpu_s,
        }
    }

    /// The `perflab.load.oltp/1` JSON document, as printed (keys in alphabetical order).
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(self.document()).unwrap_or_default()
    }

    /// The trial's result: the document's metrics, and the histograms and series beside it.
    pub fn to_result(&self) -> WorkloadResult {
        let mut r = self.document().to_result();
        if !self.calls.latency.is_empty() {
            r.histograms.push(NamedHistogram {
                name: "latency".into(),
                hist: self.calls.latency.clone(),
            });
        }
        for k in Stmt::ALL {
            let st = &self.stats.stmts[stmt_index(k)];
            if !st.latency.is_empty() {
                r.histograms.push(NamedHistogram {
                    name: format!("stmt_{}", stmt_name(k)),
                    hist: st.latency.clone(),
                });
            }
        }
        for tick in &self.series {
            r.series.push(SeriesPoint {
                t_s: tick.t_s,
                name: "transactions_per_s".into(),
                value: tick.requests_per_s,
            });
        }
        r
    }
}

/// The characters of an error's first message kept in the summary and the trial's errors: enough
/// for the server's own words after a client's prefix (`cannot connect to <URL>: `).
pub const EXAMPLE_CHARS: usize = 300;

/// A first message as shown: on one line, cut at [`EXAMPLE_CHARS`] characters with "…".
pub(super) fn example(message: &str) -> String {
    crate::util::text::clip_to(message, EXAMPLE_CHARS)
}

/// The names of an oltp trial's metrics (`OltpReport::to_result`).
pub const METRICS: &[&str] = &[
    "transactions_per_s",
    "queries_per_s",
    "reads_per_s",
    "writes_per_s",
    "others_per_s",
    "transactions",
    "queries",
    "failed_transactions",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "latency_max_ms",
    "latency_mean_ms",
    "stmt_*_p99_ms",
    "stmt_*_per_s",
    "errors",
    "errors_*",
    "retries",
    "reconnects",
    "rows_read_per_s",
    "client_cpu_us_per_trx",
    "late_sends",
    "dropped_sends",
];

impl crate::workload::driver::live::LoadOutcome for OltpReport {
    fn json(&self) -> serde_json::Value {
        OltpReport::json(self)
    }
    fn summary(&self) -> String {
        OltpReport::summary(self)
    }
    fn failed(&self) -> bool {
        self.failure().is_some() || self.calls.ops == 0
    }
}

/// The `perflab.load.oltp/1` document (docs/load.md): this struct is the schema. Serialized
/// through [`OltpReport::json`], its keys come out in alphabetical order.
#[derive(Clone, Debug, Serialize)]
pub struct OltpJson {
    pub schema: &'static str,
    pub scenario: &'static str,
    pub db: String,
    pub threads: usize,
    pub rate: Option<f64>,
    pub measured_s: f64,
    pub interrupted: bool,
    pub transactions: u64,
    pub transactions_per_s: f64,
    pub failed_transactions: u64,
    pub queries: Queries<u64>,
    pub queries_per_s: Queries<f64>,
    pub latency_ms: LatencyMs,
    /// Per statement kind that ran.
    pub statements: BTreeMap<&'static str, StatementJson>,
    /// Per error class that occurred.
    pub errors: BTreeMap<&'static str, ErrorJson>,
    pub retries: u64,
    pub reconnects: u64,
    pub rows_read: u64,
    pub failure: Option<String>,
    /// Not in the document (serde skips them): what the metrics and the summary read beside it.
    /// The mean transaction latency, ms; `None` when no transaction was measured.
    #[serde(skip)]
    pub latency_mean_ms: Option<f64>,
    /// The open model's late, dropped and intended sends.
    #[serde(skip)]
    pub late: u64,
    #[serde(skip)]
    pub dropped: u64,
    #[serde(skip)]
    pub scheduled: u64,
    /// This process's CPU time over the run, s.
    #[serde(skip)]
    pub client_cpu_s: f64,
}

/// Queries by sysbench's classes.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Queries<T> {
    pub read: T,
    pub write: T,
    pub other: T,
    pub total: T,
}

/// A transaction's latency.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct LatencyMs {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

/// One statement kind.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct StatementJson {
    pub ok: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

/// One error class: its count and first message.
#[derive(Clone, Debug, Serialize)]
pub struct ErrorJson {
    pub count: u64,
    pub first: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::result::{assert_json_documented, doc_section};

    #[test]
    fn every_key_of_the_json_is_documented() {
        let mut stats = OltpStats {
            transactions: 1,
            ..Default::default()
        };
        stats.stmts[0].ok = 1;
        stats.stmts[0].latency.record(100).expect("record");
        stats.errors.insert(
            ErrorClass::Deadlock,
            super::super::stats::ClassCount {
                count: 1,
                first: "deadlock".into(),
            },
        );
        let mut calls = OpStats::new();
        calls.latency.record(1000).expect("record");
        let r = OltpReport {
            scenario: "read_write",
            db: "sqlite:/tmp/x.db".into(),
            threads: 1,
            rate: None,
            stats,
            calls,
            series: Vec::new(),
            measured: Duration::from_secs(1),
            cpu_s: 0.1,
            down: Vec::new(),
            interrupted: false,
        };
        let j = crate::workload::driver::live::LoadOutcome::json(&r);
        assert_eq!(j["statements"]["point_select"]["ok"], 1);
        assert_eq!(j["errors"]["deadlock"]["count"], 1);
        assert_eq!(j["queries"]["total"], j["queries"]["read"]);
        let doc = doc_section(include_str!("../../../docs/load.md"), "perflab.load.oltp/1");
        assert_json_documented(&j, doc, &["statements", "errors"]);
    }
}
