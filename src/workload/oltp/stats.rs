//! What one OLTP worker counts (and all of them merged): statements by kind with their latency,
//! queries by sysbench's classes, errors by class with the first message of each, retries,
//! reconnects, rows read. Counts of the measured phase only, except `committed_all`, which also
//! holds the warm-up's (what the tables went through).

use super::backend::{ErrorClass, Stmt};
use crate::workload::result::latency_histogram;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// The index of a statement kind in [`Stmt::ALL`].
pub fn stmt_index(s: Stmt) -> usize {
    s.slot()
}

/// The name of a statement kind in metric and histogram names (`stmt_point_select`).
pub fn stmt_name(s: Stmt) -> &'static str {
    match s {
        Stmt::PointSelect => "point_select",
        Stmt::SimpleRange => "simple_range",
        Stmt::SumRange => "sum_range",
        Stmt::OrderRange => "order_range",
        Stmt::DistinctRange => "distinct_range",
        Stmt::IndexUpdate => "index_update",
        Stmt::NonIndexUpdate => "non_index_update",
        Stmt::Delete => "delete",
        Stmt::Insert => "insert",
    }
}

/// One statement kind.
#[derive(Clone, Debug)]
pub struct StmtStat {
    /// Executed without an error (in the measured phase).
    pub ok: u64,
    /// Latency of each execution, µs (errors included).
    pub latency: Histogram<u64>,
}

impl Default for StmtStat {
    fn default() -> StmtStat {
        StmtStat {
            ok: 0,
            latency: latency_histogram(),
        }
    }
}

/// Committed effects of one statement kind: executions and rows they changed or read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Committed {
    pub executions: u64,
    pub rows: u64,
}

/// Errors of one class.
#[derive(Clone, Debug, Default)]
pub struct ClassCount {
    pub count: u64,
    pub first: String,
}

#[derive(Clone, Debug)]
pub struct OltpStats {
    pub stmts: Vec<StmtStat>,
    /// BEGIN, COMMIT and ROLLBACK that succeeded (sysbench's "other" queries).
    pub other: u64,
    /// Transactions committed (in autocommit: events whose statements all succeeded).
    pub transactions: u64,
    pub errors: BTreeMap<ErrorClass, ClassCount>,
    /// Deadlocks (and SQLite busy) retried.
    pub retries: u64,
    /// Connections opened again after one was lost.
    pub reconnects: u64,
    pub rows_read: u64,
    /// Committed effects per statement kind, warm-up included.
    pub committed_all: Vec<Committed>,
}

impl Default for OltpStats {
    fn default() -> OltpStats {
        OltpStats {
            stmts: vec![StmtStat::default(); Stmt::ALL.len()],
            other: 0,
            transactions: 0,
            errors: BTreeMap::new(),
            retries: 0,
            reconnects: 0,
            rows_read: 0,
            committed_all: vec![Committed::default(); Stmt::ALL.len()],
        }
    }
}

impl OltpStats {
    pub fn error(&mut self, class: ErrorClass, message: &str) {
        let e = self.errors.entry(class).or_default();
        e.count += 1;
        if e.first.is_empty() {
            e.first = message.to_string();
        }
    }

    pub fn errors_total(&self) -> u64 {
        self.errors.values().map(|c| c.count).sum()
    }

    pub fn errors_of(&self, class: ErrorClass) -> u64 {
        self.errors.get(&class).map_or(0, |c| c.count)
    }

    /// Queries as sysbench counts them: (read, write, other).
    pub fn queries(&self) -> (u64, u64, u64) {
        let (mut r, mut w) = (0, 0);
        for (s, st) in Stmt::ALL.iter().zip(&self.stmts) {
            if s.is_read() {
                r += st.ok;
            } else {
                w += st.ok;
            }
        }
        (r, w, self.other)
    }

    pub fn committed(&self, s: Stmt) -> Committed {
        self.committed_all[stmt_index(s)]
    }

    pub fn merge(&mut self, o: &OltpStats) {
        for (a, b) in self.stmts.iter_mut().zip(&o.stmts) {
            a.ok += b.ok;
            let _ = a.latency.add(&b.latency);
        }
        for (a, b) in self.committed_all.iter_mut().zip(&o.committed_all) {
            a.executions += b.executions;
            a.rows += b.rows;
        }
        self.other += o.other;
        self.transactions += o.transactions;
        self.retries += o.retries;
        self.reconnects += o.reconnects;
        self.rows_read += o.rows_read;
        for (class, c) in &o.errors {
            let e = self.errors.entry(*class).or_default();
            e.count += c.count;
            if e.first.is_empty() {
                e.first = c.first.clone();
            }
        }
    }
}
