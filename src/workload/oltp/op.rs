//! One OLTP worker: its connection and one call = one transaction of the scenario.
//!
//! - A deadlock or serialization failure (SQLite: busy) rolls the transaction back and runs it
//!   again, with new arguments (sysbench does the same), up to [`MAX_RETRIES`] times or the end of
//!   the run; each is counted as an error of its class and as a retry.
//! - Any other error rolls back and fails this transaction, counted by class.
//! - A lost connection drops it; the next call connects again (a reconnect, counted). A connection
//!   refused (too many connections, server gone) fails the call; the worker tries again after
//!   [`CONNECT_BACKOFF`] (waiting between calls, untimed, in the closed model; failing the calls in
//!   between at once in the open model), so that the trial completes and the errors say why.
//! - Errors are counted by class once per event: one per transaction that failed, one per
//!   connection lost, one per stretch of refused connection attempts of a worker (a thread the
//!   server never lets in is one `too_many_connections`, however often it tries again). Every failed
//!   call is also a failed transaction of the driver's count.

use super::backend::{Arg, Conn, Database, DbError, ErrorClass, Stmt};
use super::config::{Settings, MAX_ID};
use super::scenario::{groups, Group, Rng};
use super::stats::{stmt_index, Committed, OltpStats};
use crate::workload::driver::clock::us;
use crate::workload::driver::ops::{Operation, Until};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Deadlock retries of one transaction before it counts as failed.
pub const MAX_RETRIES: u32 = 100;

/// The pause after a failed connection attempt before this worker tries again.
pub const CONNECT_BACKOFF: Duration = Duration::from_millis(50);

pub struct OltpOp {
    db: Arc<dyn Database>,
    conn: Option<Box<dyn Conn>>,
    s: Arc<Settings>,
    groups: Vec<Group>,
    rng: Rng,
    until: Until,
    /// The next id of an insert of a new row (oltp_insert): unique per worker and run.
    next_new_id: i64,
    step: i64,
    connected_once: bool,
    pub stats: OltpStats,
    /// The last call ended without a connection (the server was gone or refused it): the class
    /// of the error that left it so.
    pub disconnected: Option<ErrorClass>,
    /// The error that left this worker without a connection has been counted (in the measured
    /// phase): the attempts that fail after it are not counted again.
    down_counted: bool,
    /// The last failed connection attempt: when, and its error (the calls before the next attempt
    /// fail with it).
    refused: Option<(Instant, String)>,
}

impl OltpOp {
    pub fn new(db: Arc<dyn Database>, s: Arc<Settings>, worker: usize, until: Until) -> OltpOp {
        let mut rng = Rng::new(s.seed.wrapping_mul(1_000_003).wrapping_add(worker as u64));
        // New rows go above the loaded ids, at a base that differs between runs (kept tables).
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let span = (MAX_ID - s.table_size) / 2;
        let base = s.table_size as i64 + 1 + ((nanos ^ rng.next_u64()) % span.max(1)) as i64;
        OltpOp {
            db,
            conn: None,
            groups: groups(s.scenario, &s.mix),
            next_new_id: base + worker as i64,
            step: s.threads as i64,
            s,
            rng,
            until,
            connected_once: false,
            stats: OltpStats::default(),
            disconnected: None,
            down_counted: false,
            refused: None,
        }
    }

    /// Connect if there is no connection; a refusal is this call's error.
    fn ensure_conn(&mut self, measured: bool) -> Result<(), String> {
        if self.conn.is_some() {
            return Ok(());
        }
        if let Some((at, e)) = &self.refused {
            if at.elapsed() < CONNECT_BACKOFF {
                return Err(e.clone());
            }
        }
        match self.db.connect() {
            Ok(c) => {
                self.conn = Some(c);
                if self.connected_once && measured {
                    self.stats.reconnects += 1;
                }
                self.connected_once = true;
                self.disconnected = None;
                self.down_counted = false;
                self.refused = None;
                Ok(())
            }
            Err(e) => {
                self.disconnected = Some(e.class);
                self.count_down(measured, &e);
                self.refused = Some((Instant::now(), e.to_string()));
                Err(e.to_string())
            }
        }
    }

    /// Count the error that left this worker without a connection, once per stretch.
    fn count_down(&mut self, measured: bool, e: &DbError) {
        if measured && !self.down_counted {
            self.stats.error(e.class, &e.message);
            self.down_counted = true;
        }
    }

    /// One transaction (retried on deadlocks).
    fn transaction(&mut self, measured: bool) -> Result<(), String> {
        let mut attempt = 0;
        loop {
            let Some(conn) = self.conn.as_mut() else {
                return Err("no connection".into());
            };
            let mut ctx = Txn {
                conn: conn.as_mut(),
                s: &self.s,
                rng: &mut self.rng,
                stats: &mut self.stats,
                measured,
                pending: [Committed::default(); Stmt::ALL.len()],
                next_new_id: &mut self.next_new_id,
                step: self.step,
            };
            let r = ctx.run(&self.groups);
            match r {
                Ok(()) => {
                    if measured {
                        self.stats.transactions += 1;
                    }
                    return Ok(());
                }
                Err(e) => {
                    if e.class == ErrorClass::ConnectionLost {
                        self.conn = None;
                        self.disconnected = Some(e.class);
                        self.down_counted = false;
                        self.count_down(measured, &e);
                        return Err(e.to_string());
                    }
                    if measured {
                        self.stats.error(e.class, &e.message);
                    }
                    if self.conn.as_mut().is_some_and(|c| c.rollback().is_ok()) && self.s.in_transaction() && measured {
                        self.stats.other += 1;
                    }
                    attempt += 1;
                    if e.class != ErrorClass::Deadlock || attempt > MAX_RETRIES || self.until.reached() {
                        return Err(e.to_string());
                    }
                    if measured {
                        self.stats.retries += 1;
                    }
                }
            }
        }
    }
}

impl Operation for OltpOp {
    fn call(&mut self) -> Result<(), String> {
        self.call_measured(true)
    }

    fn call_measured(&mut self, measured: bool) -> Result<(), String> {
        self.ensure_conn(measured)?;
        self.transaction(measured)
    }

    /// The closed model: after a failed connection attempt, wait (untimed) until the next one.
    fn between(&mut self, _now: Instant, _measured: bool) {
        let Some(next) = self.refused.as_ref().map(|(at, _)| *at + CONNECT_BACKOFF) else {
            return;
        };
        while Instant::now() < next && !self.until.reached() {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Whether a transaction of these groups writes.
fn writes(groups: &[Group]) -> bool {
    groups.iter().any(|g| match g {
        Group::Each(stmt, _) => !stmt.is_read(),
        Group::DeleteInsert(_) | Group::NewRow => true,
    })
}

/// One attempt at a transaction.
struct Txn<'a> {
    conn: &'a mut dyn Conn,
    s: &'a Settings,
    rng: &'a mut Rng,
    stats: &'a mut OltpStats,
    measured: bool,
    /// What this attempt changed, applied to the stats when it commits.
    pending: [Committed; Stmt::ALL.len()],
    next_new_id: &'a mut i64,
    step: i64,
}

impl Txn<'_> {
    fn run(&mut self, groups: &[Group]) -> Result<(), DbError> {
        let trx = self.s.in_transaction();
        if trx {
            if writes(groups) {
                self.conn.begin_write()?;
            } else {
                self.conn.begin()?;
            }
            self.other();
        }
        for g in groups {
            let table = self.rng.uniform(u64::from(self.s.tables)) as u32;
            match *g {
                Group::Each(stmt, n) => {
                    for _ in 0..n {
                        let (args, n) = self.args(stmt);
                        self.exec(table, stmt, &args[..n])?;
                    }
                }
                Group::DeleteInsert(n) => {
                    for _ in 0..n {
                        let id = self.id();
                        self.exec(table, Stmt::Delete, &[Arg::Int(id)])?;
                        let row = self.row(id);
                        self.exec(table, Stmt::Insert, &row)?;
                    }
                }
                Group::NewRow => {
                    let id = *self.next_new_id;
                    *self.next_new_id += self.step;
                    let row = self.row(id);
                    self.exec(table, Stmt::Insert, &row)?;
                }
            }
        }
        if trx {
            self.conn.commit()?;
            self.other();
        }
        for (a, b) in self.stats.committed_all.iter_mut().zip(&self.pending) {
            a.executions += b.executions;
            a.rows += b.rows;
        }
        Ok(())
    }

    fn other(&mut self) {
        if self.measured {
            self.stats.other += 1;
        }
    }

    fn id(&mut self) -> i64 {
        self.rng.id(self.s.rand, self.s.table_size)
    }

    fn row(&mut self, id: i64) -> [Arg; 4] {
        let k = self.id();
        [
            Arg::Int(id),
            Arg::Int(k),
            Arg::Text(self.rng.c_value()),
            Arg::Text(self.rng.pad_value()),
        ]
    }

    /// A statement's arguments (the first `n` of the array: no allocation but the text of `c`).
    fn args(&mut self, stmt: Stmt) -> ([Arg; 2], usize) {
        let id = self.id();
        match stmt {
            Stmt::SimpleRange | Stmt::SumRange | Stmt::OrderRange | Stmt::DistinctRange => {
                ([Arg::Int(id), Arg::Int(id + self.s.range_size as i64 - 1)], 2)
            }
            Stmt::NonIndexUpdate => ([Arg::Int(id), Arg::Text(self.rng.c_value())], 2),
            _ => ([Arg::Int(id), Arg::Int(0)], 1),
        }
    }

    fn exec(&mut self, table: u32, stmt: Stmt, args: &[Arg]) -> Result<(), DbError> {
        let t0 = Instant::now();
        let r = self.conn.exec(table, stmt, args);
        let i = stmt_index(stmt);
        if self.measured {
            let _ = self.stats.stmts[i].latency.record(us(t0.elapsed()));
        }
        let rows = r?;
        if self.measured {
            self.stats.stmts[i].ok += 1;
            if stmt.is_read() {
                self.stats.rows_read += rows;
            }
        }
        // In autocommit each statement commits by itself.
        let into = if self.s.in_transaction() {
            &mut self.pending[i]
        } else {
            &mut self.stats.committed_all[i]
        };
        into.executions += 1;
        into.rows += rows;
        Ok(())
    }
}
