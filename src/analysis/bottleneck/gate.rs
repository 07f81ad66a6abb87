//! Which points need their samples read at all: a rule can fire at a point only if its condition
//! held in some load sample, and the per-phase summaries stored with each trial (the highest value
//! under load, the mean and the number of samples) bound every metric's load values. [`may_fire`]
//! judges each rule's declared condition over those bounds (interval arithmetic: a test may hold
//! when some values within the bounds satisfy it) and is false only when no rule can hold in any
//! load sample of the trial; the findings then need nothing of it.

use super::eval::{bind, ctx_value, middles};
use super::rule::{Cond, Op, Rule, Val};
use super::rules::sampled;
use super::Context;
use crate::analysis::phases::PhaseStats;

/// Could any rule hold in some load sample of a trial with these summaries (sorted by metric, as
/// the store gives them)? False only when none can.
pub fn may_fire(summaries: &[PhaseStats], ctx: &Context) -> bool {
    sampled().any(|r| may_hold(r, summaries, ctx))
}

/// Could `rule`'s condition hold in some load sample of a trial with these summaries?
pub fn may_hold(rule: &Rule, summaries: &[PhaseStats], ctx: &Context) -> bool {
    let b = Bounds { summaries, ctx };
    rule.cond().is_some_and(|c| b.cond(c, None))
}

/// The bounds of every value: [lowest, highest] it can take in a load sample.
type Range = (f64, f64);

const ANY: Range = (f64::NEG_INFINITY, f64::INFINITY);

struct Bounds<'a> {
    summaries: &'a [PhaseStats],
    ctx: &'a Context,
}

impl Bounds<'_> {
    fn stats(&self, m: &str) -> Option<&PhaseStats> {
        self.summaries
            .binary_search_by(|s| s.metric.as_str().cmp(m))
            .ok()
            .map(|i| &self.summaries[i])
            .filter(|s| s.n_load > 0)
    }

    /// A metric's load range: at most its peak; at least n·mean − (n−1)·peak (less a margin for
    /// the rounding of the stored mean). A missing figure leaves that side open.
    fn metric(&self, m: &str) -> Option<Range> {
        let s = self.stats(m)?;
        let hi = s.peak.unwrap_or(f64::INFINITY);
        let lo = match (s.under_load, s.peak) {
            (Some(mean), Some(high)) => {
                let n = s.n_load as f64;
                n * mean - (n - 1.0) * high - 1e-9 * n * high.abs().max(mean.abs())
            }
            _ => f64::NEG_INFINITY,
        };
        Some(if lo.is_nan() || hi.is_nan() { ANY } else { (lo.min(hi), hi) })
    }

    fn val(&self, v: &Val, part: Option<&str>) -> Option<Range> {
        let two = |a: &Val, b: &Val| Some((self.val(a, part)?, self.val(b, part)?));
        Some(match v {
            Val::M(n) => return self.metric(&bind(n, part)),
            // The point's baseline (every trial's) is not known from one trial.
            Val::Base(_) => ANY,
            Val::K(k) => (*k, *k),
            Val::Ctx(c) => return ctx_value(self.ctx, *c).map(|k| (k, k)),
            Val::Add(a, b) => {
                let (x, y) = two(a, b)?;
                (x.0 + y.0, x.1 + y.1)
            }
            Val::Sub(a, b) => {
                let (x, y) = two(a, b)?;
                (x.0 - y.1, x.1 - y.0)
            }
            Val::Mul(a, b) => {
                let (x, y) = two(a, b)?;
                hull4([x.0 * y.0, x.0 * y.1, x.1 * y.0, x.1 * y.1])
            }
            Val::Div(a, b) => {
                let (x, y) = two(a, b)?;
                if y.0 <= 0.0 && y.1 >= 0.0 {
                    ANY
                } else {
                    hull4([x.0 / y.0, x.0 / y.1, x.1 / y.0, x.1 / y.1])
                }
            }
            Val::Min(a, b) => {
                let (x, y) = two(a, b)?;
                (x.0.min(y.0), x.1.min(y.1))
            }
            Val::Max(a, b) => {
                let (x, y) = two(a, b)?;
                (x.0.max(y.0), x.1.max(y.1))
            }
            // Where the first is present in some samples, either may be the value.
            Val::Else(a, b) => match (self.val(a, part), self.val(b, part)) {
                (Some(x), Some(y)) => (x.0.min(y.0), x.1.max(y.1)),
                (x, y) => return x.or(y),
            },
        })
    }

    fn cond(&self, c: &Cond, part: Option<&str>) -> bool {
        match c {
            Cond::T(t) => {
                let (Some(l), Some(r)) = (self.val(&t.lhs, part), self.val(&t.rhs, part)) else {
                    return false;
                };
                match t.op {
                    Op::Ge => l.1 >= r.0,
                    Op::Gt => l.1 > r.0,
                    Op::Lt => l.0 < r.1,
                    Op::Le => l.0 <= r.1,
                }
            }
            Cond::All(cs) => cs.iter().all(|c| self.cond(c, part)),
            Cond::Any(cs) => cs.iter().any(|c| self.cond(c, part)),
            Cond::Each(p, inner) => {
                let names = self.summaries.iter().filter(|s| s.n_load > 0).map(|s| s.metric.as_str());
                middles(p, names).iter().any(|m| self.cond(inner, Some(m)))
            }
        }
    }
}

/// The range of four products or quotients (any NaN, from 0 × ∞: unbounded).
fn hull4(v: [f64; 4]) -> Range {
    if v.iter().any(|x| x.is_nan()) {
        return ANY;
    }
    (
        v.iter().copied().fold(f64::INFINITY, f64::min),
        v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    )
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
