//! What a bottleneck rule is, as data: its id, what it names, whom it blames, and its condition
//! over one monitor sample as a small expression ([`Cond`] over [`Val`]). The rules themselves are
//! declared once in `rules.rs`; the evaluation (`eval.rs`), the gate (`gate.rs`), the read set
//! (`stream.rs`), the knee's saturation test (`knee.rs`) and the docs table (`docs.rs`) all read
//! these declarations.

use super::Kind;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The family of a rule id: `R` (monitor samples), `E` (errors along the sweep), `P` (probes),
/// `D` (diagnoses from the workload's own figures and the other findings).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    R,
    E,
    P,
    D,
}

/// A rule's id, e.g. `R12`: ordered by family (R, E, P), then by number (so R2 < R12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RuleId {
    pub family: Family,
    pub n: u16,
}

impl RuleId {
    pub const fn r(n: u16) -> RuleId {
        RuleId { family: Family::R, n }
    }
    pub const fn e(n: u16) -> RuleId {
        RuleId { family: Family::E, n }
    }
    pub const fn p(n: u16) -> RuleId {
        RuleId { family: Family::P, n }
    }
    pub const fn d(n: u16) -> RuleId {
        RuleId { family: Family::D, n }
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let letter = match self.family {
            Family::R => 'R',
            Family::E => 'E',
            Family::P => 'P',
            Family::D => 'D',
        };
        write!(f, "{letter}{}", self.n)
    }
}

impl std::str::FromStr for RuleId {
    type Err = String;
    fn from_str(s: &str) -> Result<RuleId, String> {
        let mut chars = s.chars();
        let family = match chars.next() {
            Some('R') => Family::R,
            Some('E') => Family::E,
            Some('P') => Family::P,
            Some('D') => Family::D,
            _ => return Err(format!("not a rule id: {s:?}")),
        };
        let n = chars.as_str().parse::<u16>().map_err(|_| format!("not a rule id: {s:?}"))?;
        Ok(RuleId { family, n })
    }
}

impl Serialize for RuleId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RuleId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RuleId, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl PartialEq<&str> for RuleId {
    fn eq(&self, other: &&str) -> bool {
        other.parse::<RuleId>().is_ok_and(|o| o == *self)
    }
}

/// Whom a finding blames, in the order findings are ranked: errors and the target's own limits
/// first, then the system under test's resources, then the load generator and the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Culprit {
    /// The workload's errors, or the target killed for lack of memory.
    Errors,
    /// A limit the plan set on the target (its CPU set or quota), used up.
    TargetLimit,
    /// A resource of the system under test (CPU, disk, memory, network, its responsiveness).
    System,
    /// The load generator, which then measures itself.
    LoadGenerator,
    /// Others on the host (steal, other processes).
    Host,
    /// The load's own shape: its concurrency and the round trip set the throughput.
    Load,
    /// Nobody: nothing was stressed at this load.
    Nobody,
}

impl Culprit {
    pub fn as_str(self) -> &'static str {
        match self {
            Culprit::Errors => "errors",
            Culprit::TargetLimit => "the target's limits",
            Culprit::System => "the system under test",
            Culprit::LoadGenerator => "the load generator",
            Culprit::Host => "the host",
            Culprit::Load => "the load's concurrency",
            Culprit::Nobody => "nobody (headroom)",
        }
    }
}

/// A comparison of a [`Test`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Ge,
    Gt,
    Lt,
    Le,
}

impl Op {
    pub fn holds(self, v: f64, th: f64) -> bool {
        match self {
            Op::Ge => v >= th,
            Op::Gt => v > th,
            Op::Lt => v < th,
            Op::Le => v <= th,
        }
    }
    /// As `report.json` writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Ge => ">=",
            Op::Gt => ">",
            Op::Lt => "<",
            Op::Le => "<=",
        }
    }
    /// As the report and the docs print it.
    pub fn sign(self) -> &'static str {
        match self {
            Op::Ge => "≥",
            Op::Gt => ">",
            Op::Lt => "<",
            Op::Le => "≤",
        }
    }
}

/// A fact of the run a rule may compare with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtxVal {
    /// The CPUs the run could use on the host judged.
    Ncpu,
    /// The NIC line rate given, Mbit/s (absent unless given).
    LineRate,
    /// The cores given to the load generator (absent unless given).
    LoadgenCores,
    /// 1 when the host judged is the load generator's own machine although its samples do not
    /// have the load generator (a host in a network namespace of this machine), else 0.
    LoadgenUnsampled,
}

/// A number in one sample. A metric the sample lacks is absent, and so is every value made from it
/// (except through [`Val::Else`]).
#[derive(Clone, Copy, Debug)]
pub enum Val {
    /// A metric; `{}` in the name is the part bound by the enclosing [`Cond::Each`].
    M(&'static str),
    /// The metric's baseline-phase mean at the point (all its trials).
    Base(&'static str),
    K(f64),
    Ctx(CtxVal),
    Add(&'static Val, &'static Val),
    Sub(&'static Val, &'static Val),
    Mul(&'static Val, &'static Val),
    Div(&'static Val, &'static Val),
    Min(&'static Val, &'static Val),
    Max(&'static Val, &'static Val),
    /// The first, or the second where the first is absent.
    Else(&'static Val, &'static Val),
}

/// What a [`Test`] that holds does besides counting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The finding quotes the left side's metrics against the right side's value.
    Quote,
    /// Quoted, and one of the signals the knee's saturation test looks for.
    Knee,
    /// A condition only: never quoted.
    Guard,
}

/// `lhs op rhs`, with the source of the threshold.
#[derive(Clone, Copy, Debug)]
pub struct Test {
    pub lhs: Val,
    pub op: Op,
    pub rhs: Val,
    pub source: &'static str,
    pub role: Role,
}

/// Which names a [`Pattern`]'s middle part may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Any,
    /// Digits only (a CPU number).
    Digits,
    /// Anything but the loopback interface `lo`.
    NotLoopback,
}

/// Metrics named `{prefix}{middle}{suffix}` with a non-empty middle.
#[derive(Clone, Copy, Debug)]
pub struct Pattern {
    pub prefix: &'static str,
    pub suffix: &'static str,
    pub part: Part,
    /// How the docs name one of them: "a disk D" (the letter stands for the middle part).
    pub noun: &'static str,
    pub letter: &'static str,
}

impl Pattern {
    /// The middle part of `name`, if it matches.
    pub fn middle<'n>(&self, name: &'n str) -> Option<&'n str> {
        let mid = name.strip_prefix(self.prefix)?.strip_suffix(self.suffix)?;
        let ok = !mid.is_empty()
            && match self.part {
                Part::Any => true,
                Part::Digits => mid.bytes().all(|b| b.is_ascii_digit()),
                Part::NotLoopback => mid != "lo",
            };
        ok.then_some(mid)
    }
}

/// A condition over one sample. Three-valued: it holds, it does not, or the sample's metrics do not
/// decide it (a sample where no rule's condition is decided does not count for that rule).
#[derive(Clone, Copy, Debug)]
pub enum Cond {
    T(Test),
    /// Holds when all hold; fails when one fails; else undecided.
    All(&'static [Cond]),
    /// Holds when one holds; fails when one fails and none holds; else undecided.
    Any(&'static [Cond]),
    /// [`Cond::Any`] over the metrics matching the pattern, each binding `{}` in the names inside.
    Each(Pattern, &'static Cond),
}

/// How a rule is judged.
#[derive(Clone, Copy, Debug)]
pub enum When {
    /// Per load sample: fires when it holds in at least [`super::FIRE_FRACTION`] of the samples
    /// where it is decided.
    Share(Cond),
    /// An event: fires on any load sample it holds in, and, with `oom`, when the target was killed
    /// for lack of memory.
    Event { cond: Cond, oom: bool },
    /// Outside the monitor samples (its own module): what the docs say it fires on.
    Outside(fn() -> String),
}

/// A figure the finding's title names, per point: the load-phase mean of `metric` × `scale`,
/// printed with `unit` (`units` when it is not 1), e.g. "(1 CPU)".
#[derive(Clone, Copy, Debug)]
pub struct TitleFigure {
    pub metric: &'static str,
    pub scale: f64,
    pub unit: &'static str,
    pub units: &'static str,
}

/// One bottleneck rule, declared once.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    pub id: RuleId,
    /// e.g. "CPU saturated".
    pub title: &'static str,
    /// e.g. "CPU", "disk", "load generator".
    pub resource: &'static str,
    pub kind: Kind,
    pub culprit: Culprit,
    pub when: When,
    /// Where its thresholds come from, for the docs.
    pub sources: &'static str,
    /// Indexes into `CAVEATS`.
    pub caveats: &'static [usize],
    /// What this build cannot observe of it: why it may not fire here (the report's rule list and
    /// the docs say it).
    pub blind: Option<&'static str>,
    pub figure: Option<TitleFigure>,
}

/// The CPUs of the host judged.
pub const NCPU: Val = Val::Ctx(CtxVal::Ncpu);

// How `rules.rs` declares: the tests as macros (their expansions are constant expressions, so
// that `&` of them is `'static`), a rule's parts as constant functions.

/// One test of a metric against a value, in the role it plays in its rule.
macro_rules! rule_test {
    ($l:expr, $op:ident, $r:expr, $src:expr, $role:ident) => {
        $crate::analysis::bottleneck::rule::Cond::T($crate::analysis::bottleneck::rule::Test {
            lhs: $l,
            op: $crate::analysis::bottleneck::rule::Op::$op,
            rhs: $r,
            source: $src,
            role: $crate::analysis::bottleneck::rule::Role::$role,
        })
    };
}

/// `lhs op rhs`, quoted by the finding.
macro_rules! t {
    ($l:expr, $op:ident, $r:expr, $src:expr) => {
        $crate::analysis::bottleneck::rule::rule_test!($l, $op, $r, $src, Quote)
    };
}

/// Quoted, and one of the knee's saturation signals.
macro_rules! knee {
    ($l:expr, $op:ident, $r:expr, $src:expr) => {
        $crate::analysis::bottleneck::rule::rule_test!($l, $op, $r, $src, Knee)
    };
}

/// A condition only, never quoted.
macro_rules! guard {
    ($l:expr, $op:ident, $r:expr) => {
        $crate::analysis::bottleneck::rule::rule_test!($l, $op, $r, "", Guard)
    };
}

/// For some metric `{prefix}{middle}{suffix}`: the condition with `{}` bound to the middle.
macro_rules! each {
    ($prefix:expr, $suffix:expr, $part:ident, $noun:expr, $letter:expr, $c:expr) => {
        $crate::analysis::bottleneck::rule::Cond::Each(
            $crate::analysis::bottleneck::rule::Pattern {
                prefix: $prefix,
                suffix: $suffix,
                part: $crate::analysis::bottleneck::rule::Part::$part,
                noun: $noun,
                letter: $letter,
            },
            &$c,
        )
    };
}

pub(crate) use {each, guard, knee, rule_test, t};

/// A rule read from the monitor samples, judged on the share of load samples.
pub const fn rule(
    id: u16,
    title: &'static str,
    resource: &'static str,
    kind: Kind,
    culprit: Culprit,
    cond: Cond,
    sources: &'static str,
) -> Rule {
    Rule {
        id: RuleId::r(id),
        title,
        resource,
        kind,
        culprit,
        when: When::Share(cond),
        sources,
        caveats: &[],
        blind: None,
        figure: None,
    }
}

pub const fn with_caveats(mut r: Rule, caveats: &'static [usize]) -> Rule {
    r.caveats = caveats;
    r
}

pub const fn blind(mut r: Rule, why: &'static str) -> Rule {
    r.blind = Some(why);
    r
}

pub const fn outside(
    id: RuleId,
    title: &'static str,
    resource: &'static str,
    kind: Kind,
    culprit: Culprit,
    text: fn() -> String,
    sources: &'static str,
) -> Rule {
    Rule {
        id,
        title,
        resource,
        kind,
        culprit,
        when: When::Outside(text),
        sources,
        caveats: &[],
        blind: None,
        figure: None,
    }
}

/// Every metric name or `{}` pattern a value reads, in order.
pub fn val_metrics(v: &Val, out: &mut Vec<&'static str>) {
    match v {
        Val::M(n) | Val::Base(n) => out.push(n),
        Val::K(_) | Val::Ctx(_) => {}
        Val::Add(a, b) | Val::Sub(a, b) | Val::Mul(a, b) | Val::Div(a, b) | Val::Min(a, b) | Val::Max(a, b) | Val::Else(a, b) => {
            val_metrics(a, out);
            val_metrics(b, out);
        }
    }
}

/// Every test of a condition, with the pattern it is inside (if any).
pub fn tests(c: &Cond, within: Option<&Pattern>, out: &mut Vec<(Test, Option<Pattern>)>) {
    match c {
        Cond::T(t) => out.push((*t, within.copied())),
        Cond::All(cs) | Cond::Any(cs) => cs.iter().for_each(|c| tests(c, within, out)),
        Cond::Each(p, c) => tests(c, Some(p), out),
    }
}

/// The patterns a condition iterates over.
pub fn patterns(c: &Cond, out: &mut Vec<Pattern>) {
    match c {
        Cond::T(_) => {}
        Cond::All(cs) | Cond::Any(cs) => cs.iter().for_each(|c| patterns(c, out)),
        Cond::Each(p, c) => {
            out.push(*p);
            patterns(c, out);
        }
    }
}

impl Rule {
    /// The condition over samples, if the rule reads samples.
    pub fn cond(&self) -> Option<&Cond> {
        match &self.when {
            When::Share(c) | When::Event { cond: c, .. } => Some(c),
            When::Outside(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_print_parse_and_order_by_number() {
        let ids: Vec<RuleId> = ["R12", "R2", "P1", "E2", "R1", "E1"].iter().map(|s| s.parse().unwrap()).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        let back: Vec<String> = sorted.iter().map(|i| i.to_string()).collect();
        assert_eq!(back, ["R1", "R2", "R12", "E1", "E2", "P1"]);
        assert_eq!(serde_json::to_string(&RuleId::r(12)).unwrap(), "\"R12\"");
        assert_eq!(serde_json::from_str::<RuleId>("\"E2\"").unwrap(), RuleId::e(2));
        assert!("X1".parse::<RuleId>().is_err() && "R".parse::<RuleId>().is_err());
        assert!(RuleId::p(1) == "P1");
    }
}
