//! The rules as docs/metrics.md and the report print them, from their declarations: the table of
//! rules (checked against docs/metrics.md by a test that prints the block to paste), what this
//! build cannot observe of some, and the caveats.

use super::rule::{Cond, CtxVal, Rule, Test, Val, When};
use super::rules::RULES;
use super::{fmt_num, CAVEATS};

/// A number as the docs print it.
fn num(k: f64) -> String {
    if k.is_infinite() {
        if k > 0.0 { "∞" } else { "−∞" }.to_string()
    } else {
        let s = fmt_num(k);
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }
}

fn is_sum(v: &Val) -> bool {
    matches!(v, Val::Add(..) | Val::Sub(..))
}

fn operand(v: &Val, letter: Option<&str>) -> String {
    let s = val(v, letter);
    if is_sum(v) {
        format!("({s})")
    } else {
        s
    }
}

/// A value in words and symbols: `` `cpu_busy_pct` ``, `100 / ncpu + 10`.
pub fn val(v: &Val, letter: Option<&str>) -> String {
    match v {
        Val::M(n) => format!("`{}`", n.replace("{}", letter.unwrap_or("X"))),
        Val::Base(n) => format!("the baseline mean of `{}`", n.replace("{}", letter.unwrap_or("X"))),
        Val::K(k) => num(*k),
        Val::Ctx(CtxVal::Ncpu) => "ncpu".into(),
        Val::Ctx(CtxVal::LineRate) => "the line rate".into(),
        Val::Ctx(CtxVal::LoadgenCores) => "the cores given to it".into(),
        Val::Ctx(CtxVal::LoadgenUnsampled) => "(the load generator's machine, unsampled: 1, else 0)".into(),
        Val::Add(a, b) => format!("{} + {}", val(a, letter), val(b, letter)),
        Val::Sub(a, b) => format!("{} − {}", val(a, letter), operand(b, letter)),
        Val::Mul(a, b) => format!("{} × {}", operand(a, letter), operand(b, letter)),
        Val::Div(a, b) => format!("{} / {}", operand(a, letter), operand(b, letter)),
        Val::Min(a, b) => format!("min({}, {})", val(a, letter), val(b, letter)),
        Val::Max(a, b) => format!("max({}, {})", val(a, letter), val(b, letter)),
        Val::Else(a, b) => format!("{} (else {})", val(a, letter), val(b, letter)),
    }
}

fn test(t: &Test, letter: Option<&str>) -> String {
    if let Val::Ctx(CtxVal::LoadgenUnsampled) = t.lhs {
        let on = t.op.holds(
            1.0,
            match t.rhs {
                Val::K(k) => k,
                _ => 0.5,
            },
        );
        let host = "a host that is the load generator's own machine without its processes in the samples";
        return if on { format!("on {host}") } else { format!("not on {host}") };
    }
    format!("{} {} {}", val(&t.lhs, letter), t.op.sign(), val(&t.rhs, letter))
}

/// A condition in words: `and`, `or`, "a disk D with (…)".
pub fn cond(c: &Cond, letter: Option<&str>) -> String {
    let inner = |c: &Cond, parent_all: bool| {
        let s = cond(c, letter);
        match c {
            Cond::All(cs) if !parent_all && cs.len() > 1 => format!("({s})"),
            Cond::Any(cs) if parent_all && cs.len() > 1 => format!("({s})"),
            _ => s,
        }
    };
    match c {
        Cond::T(t) => test(t, letter),
        Cond::All(cs) => cs.iter().map(|c| inner(c, true)).collect::<Vec<_>>().join(" and "),
        Cond::Any(cs) => cs.iter().map(|c| inner(c, false)).collect::<Vec<_>>().join(", or "),
        Cond::Each(p, c) => format!("{} with ({})", p.noun, cond(c, Some(p.letter))),
    }
}

/// When a rule fires, as its table row says.
pub fn fires_when(r: &Rule) -> String {
    match &r.when {
        When::Share(c) => cond(c, None),
        When::Event { cond: c, oom } => {
            let mut s = format!("in any sample: {}", cond(c, None));
            if *oom {
                s.push_str("; or the target's exit was an OOM kill (status 137, or SIGKILL)");
            }
            s
        }
        When::Outside(text) => text(),
    }
}

/// The table of rules of docs/metrics.md, then what this build cannot observe and the caveats.
pub fn table() -> String {
    let mut s = String::from(
        "| rule | finding | resource | USE kind | blames | fires when (per load sample) | thresholds from |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for r in RULES {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            r.id,
            r.title,
            r.resource,
            r.kind.as_str(),
            r.culprit.as_str(),
            fires_when(r),
            r.sources
        ));
    }
    s.push_str("\nWhat this build cannot observe, and what that means for the rules:\n");
    for (r, why) in blind() {
        s.push_str(&format!("- {} ({}): {why}.\n", r.id, r.title));
    }
    s.push_str("\nThe caveats printed with the findings:\n\n| caveat | printed with |\n|---|---|\n");
    for (i, c) in CAVEATS.iter().enumerate() {
        let with: Vec<String> = RULES.iter().filter(|r| r.caveats.contains(&i)).map(|r| r.id.to_string()).collect();
        s.push_str(&format!("| {c} | {} |\n", with.join(", ")));
    }
    s
}

/// The rules this build may not be able to fire, with why.
pub fn blind() -> impl Iterator<Item = (&'static Rule, &'static str)> {
    RULES.iter().filter_map(|r| r.blind.map(|b| (r, b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::bottleneck::RuleId;

    #[test]
    fn conditions_read_as_written() {
        let r1 = super::super::rule_of(RuleId::r(1)).unwrap();
        assert_eq!(
            fires_when(r1),
            "`cpu_busy_pct` ≥ 90 and (`procs_running` > ncpu, or `psi_cpu_some_avg10_pct` ≥ 10)"
        );
        let r3 = super::super::rule_of(RuleId::r(3)).unwrap();
        assert!(
            fires_when(r3).contains("a CPU N with (`cpuN_busy_pct` ≥ 90) and `cpu_busy_pct` ≤ 100 / ncpu + 10"),
            "{}",
            fires_when(r3)
        );
    }
}
