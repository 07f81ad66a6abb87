//! A rule's condition over the samples of one table: compiled once per table (every metric name
//! resolved to its column, every pattern to the columns it matches), then judged row by row with
//! index lookups only.

use super::rule::{Cond, CtxVal, Op, Pattern, Role, Test, Val};
use super::Context;
use crate::analysis::table::SampleTable;
use std::cell::Cell;
use std::collections::BTreeMap;

/// A value with its metrics resolved.
enum CVal {
    Col(usize),
    Absent,
    K(f64),
    /// A baseline mean (None: no baseline for it); reading it is noted.
    Base(Option<f64>),
    Bin(Bin, Box<CVal>, Box<CVal>),
}

#[derive(Clone, Copy)]
enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
    Else,
}

/// A metric a test quotes when it holds: its name and column.
struct Quoted {
    name: String,
    col: Option<usize>,
}

/// A condition with its metrics resolved.
enum CCond {
    T {
        lhs: CVal,
        op: Op,
        rhs: CVal,
        source: &'static str,
        role: Role,
        /// The left side's metrics (empty for a guard); when there are several (a sum), only
        /// those not zero in the sample are quoted.
        quoted: Vec<Quoted>,
    },
    All(Vec<CCond>),
    Any(Vec<CCond>),
    /// [`CCond::Any`] over the instances whose pattern metric (column) the sample has.
    Each(Vec<(usize, CCond)>),
}

/// One quoted metric of a sample where the rule held: (metric, op, threshold, source).
pub(crate) struct Quote<'c> {
    pub metric: &'c str,
    pub op: Op,
    pub threshold: f64,
    pub source: &'static str,
}

/// A rule's condition compiled against one table.
pub(crate) struct Compiled {
    cond: CCond,
}

/// What compiling needs: the table, the point's baseline means and the run's facts.
pub(crate) struct Scope<'a> {
    pub table: &'a SampleTable,
    pub baseline: &'a BTreeMap<String, f64>,
    pub ctx: &'a Context,
}

/// `name` with `{}` replaced by the bound part.
pub(crate) fn bind(name: &str, part: Option<&str>) -> String {
    match part {
        Some(p) => name.replace("{}", p),
        None => name.to_string(),
    }
}

/// A fact of the run as a number, None where it is not known.
pub(crate) fn ctx_value(ctx: &Context, v: CtxVal) -> Option<f64> {
    match v {
        CtxVal::Ncpu => Some(ctx.ncpu.max(1) as f64),
        CtxVal::LineRate => ctx.line_rate_mbitps.filter(|r| *r > 0.0),
        CtxVal::LoadgenCores => ctx.loadgen_cores.filter(|c| *c > 0.0),
        CtxVal::LoadgenUnsampled => Some(if ctx.loadgen_unsampled { 1.0 } else { 0.0 }),
    }
}

fn compile_val(v: &Val, part: Option<&str>, s: &Scope) -> CVal {
    let bin = |b: Bin, x: &Val, y: &Val| CVal::Bin(b, Box::new(compile_val(x, part, s)), Box::new(compile_val(y, part, s)));
    match v {
        Val::M(n) => s.table.col(&bind(n, part)).map_or(CVal::Absent, CVal::Col),
        Val::Base(n) => CVal::Base(s.baseline.get(&bind(n, part)).copied()),
        Val::K(k) => CVal::K(*k),
        Val::Ctx(c) => ctx_value(s.ctx, *c).map_or(CVal::Absent, CVal::K),
        Val::Add(a, b) => bin(Bin::Add, a, b),
        Val::Sub(a, b) => bin(Bin::Sub, a, b),
        Val::Mul(a, b) => bin(Bin::Mul, a, b),
        Val::Div(a, b) => bin(Bin::Div, a, b),
        Val::Min(a, b) => bin(Bin::Min, a, b),
        Val::Max(a, b) => bin(Bin::Max, a, b),
        Val::Else(a, b) => bin(Bin::Else, a, b),
    }
}

/// The metrics a left side names (its `M` leaves, bound), for quoting.
fn quoted(v: &Val, part: Option<&str>, t: &SampleTable, out: &mut Vec<Quoted>) {
    match v {
        Val::M(n) => {
            let name = bind(n, part);
            let col = t.col(&name);
            out.push(Quoted { name, col });
        }
        Val::Base(_) | Val::K(_) | Val::Ctx(_) => {}
        Val::Add(a, b) | Val::Sub(a, b) | Val::Mul(a, b) | Val::Div(a, b) | Val::Min(a, b) | Val::Max(a, b) | Val::Else(a, b) => {
            quoted(a, part, t, out);
            quoted(b, part, t, out);
        }
    }
}

fn compile_cond(c: &Cond, part: Option<&str>, s: &Scope) -> CCond {
    match c {
        Cond::T(Test {
            lhs,
            op,
            rhs,
            source,
            role,
        }) => {
            let mut q = Vec::new();
            if *role != Role::Guard {
                quoted(lhs, part, s.table, &mut q);
            }
            CCond::T {
                lhs: compile_val(lhs, part, s),
                op: *op,
                rhs: compile_val(rhs, part, s),
                source,
                role: *role,
                quoted: q,
            }
        }
        Cond::All(cs) => CCond::All(cs.iter().map(|c| compile_cond(c, part, s)).collect()),
        Cond::Any(cs) => CCond::Any(cs.iter().map(|c| compile_cond(c, part, s)).collect()),
        Cond::Each(p, inner) => CCond::Each(
            s.table
                .names()
                .iter()
                .enumerate()
                .filter(|(_, n)| p.middle(n).is_some())
                .map(|(c, n)| (c, compile_cond(inner, p.middle(n), s)))
                .collect(),
        ),
    }
}

/// The middle parts of the names matching a pattern, in name order, without repeats.
pub(crate) fn middles<'n>(p: &Pattern, names: impl Iterator<Item = &'n str>) -> Vec<&'n str> {
    let mut out: Vec<&str> = Vec::new();
    for n in names {
        if let Some(m) = p.middle(n) {
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    out
}

impl Compiled {
    pub fn new(cond: &Cond, s: &Scope) -> Compiled {
        Compiled {
            cond: compile_cond(cond, None, s),
        }
    }

    /// Judge row `row`: Some(true) when it holds (its quotes pushed to `out`), Some(false) when it
    /// fails, None when the row's metrics do not decide it. `used_baseline` is set when a baseline
    /// mean was read.
    pub fn judge<'c>(&'c self, t: &SampleTable, row: usize, used_baseline: &Cell<bool>, out: &mut Vec<Quote<'c>>) -> Option<bool> {
        judge(&self.cond, t, row, used_baseline, out)
    }

    /// Every knee signal ([`Role::Knee`]) that holds in row `row` on its own, whatever the tests
    /// around it: its quote and the metric's value.
    pub fn knee_signals<'c>(&'c self, t: &SampleTable, row: usize, out: &mut Vec<(Quote<'c>, f64)>) {
        holding(&self.cond, t, row, out);
    }
}

fn value(v: &CVal, t: &SampleTable, row: usize, used: &Cell<bool>) -> Option<f64> {
    match v {
        CVal::Col(c) => t.value(row, *c),
        CVal::Absent => None,
        CVal::K(k) => Some(*k),
        CVal::Base(b) => {
            used.set(true);
            *b
        }
        CVal::Bin(Bin::Else, a, b) => value(a, t, row, used).or_else(|| value(b, t, row, used)),
        CVal::Bin(op, a, b) => {
            let (x, y) = (value(a, t, row, used)?, value(b, t, row, used)?);
            Some(match op {
                Bin::Add => x + y,
                Bin::Sub => x - y,
                Bin::Mul => x * y,
                Bin::Div => x / y,
                Bin::Min => x.min(y),
                Bin::Max => x.max(y),
                Bin::Else => unreachable!("handled above"),
            })
        }
    }
}

fn judge<'c>(c: &'c CCond, t: &SampleTable, row: usize, used: &Cell<bool>, out: &mut Vec<Quote<'c>>) -> Option<bool> {
    match c {
        CCond::T {
            lhs,
            op,
            rhs,
            source,
            quoted,
            ..
        } => {
            let (l, r) = (value(lhs, t, row, used)?, value(rhs, t, row, used)?);
            let holds = op.holds(l, r);
            if holds {
                let several = quoted.len() > 1;
                for q in quoted {
                    let v = q.col.and_then(|c| t.value(row, c));
                    if v.is_some_and(|v| !several || v != 0.0) {
                        out.push(Quote {
                            metric: &q.name,
                            op: *op,
                            threshold: r,
                            source,
                        });
                    }
                }
            }
            Some(holds)
        }
        CCond::All(cs) => {
            let mark = out.len();
            let mut undecided = false;
            for c in cs {
                match judge(c, t, row, used, out) {
                    Some(true) => {}
                    Some(false) => {
                        out.truncate(mark);
                        return Some(false);
                    }
                    None => undecided = true,
                }
            }
            if undecided {
                out.truncate(mark);
                None
            } else {
                Some(true)
            }
        }
        CCond::Any(cs) => any(cs.iter(), t, row, used, out),
        CCond::Each(cs) => any(
            cs.iter().filter(|(col, _)| t.value(row, *col).is_some()).map(|(_, c)| c),
            t,
            row,
            used,
            out,
        ),
    }
}

/// Holds when one holds (the quotes of each that holds kept), fails when one fails and none holds.
fn any<'c>(cs: impl Iterator<Item = &'c CCond>, t: &SampleTable, row: usize, used: &Cell<bool>, out: &mut Vec<Quote<'c>>) -> Option<bool> {
    let mut result = None;
    for c in cs {
        let mark = out.len();
        match judge(c, t, row, used, out) {
            Some(true) => result = Some(true),
            other => {
                out.truncate(mark);
                if other == Some(false) && result.is_none() {
                    result = Some(false);
                }
            }
        }
    }
    result
}

fn holding<'c>(c: &'c CCond, t: &SampleTable, row: usize, out: &mut Vec<(Quote<'c>, f64)>) {
    match c {
        CCond::T {
            lhs,
            op,
            rhs,
            source,
            role,
            quoted,
        } => {
            if *role != Role::Knee {
                return;
            }
            let used = Cell::new(false);
            let (Some(l), Some(r)) = (value(lhs, t, row, &used), value(rhs, t, row, &used)) else {
                return;
            };
            if op.holds(l, r) {
                if let [q] = quoted.as_slice() {
                    out.push((
                        Quote {
                            metric: &q.name,
                            op: *op,
                            threshold: r,
                            source,
                        },
                        l,
                    ));
                }
            }
        }
        CCond::All(cs) | CCond::Any(cs) => cs.iter().for_each(|c| holding(c, t, row, out)),
        CCond::Each(cs) => cs
            .iter()
            .filter(|(col, _)| t.value(row, *col).is_some())
            .for_each(|(_, c)| holding(c, t, row, out)),
    }
}
