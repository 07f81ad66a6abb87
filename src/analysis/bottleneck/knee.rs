//! What saturated at a scaling knee: the rules' own saturation signals (the tests declared as
//! knee signals in `rules.rs`: CPU busy, one hot CPU, memory used, pressure, iowait, disk %util,
//! steal, the load generator's cores) judged on a point's load-phase means, each on its own.

use super::eval::{Compiled, Scope};
use super::rules::sampled;
use super::Context;
use crate::analysis::phases::LOAD;
use crate::analysis::table::SampleTable;
use std::collections::BTreeMap;

/// A saturation signal that held: the metric, its value, the threshold it reached and the rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Signal {
    pub metric: String,
    pub value: f64,
    /// e.g. ">=".
    pub op: &'static str,
    pub threshold: f64,
    /// e.g. "R1 CPU saturated".
    pub rule: String,
}

/// The signals that hold on these values (a point's load-phase means, by metric), each metric
/// once (its first rule's signal), in metric order.
pub fn signals(values: &[(String, f64)], ctx: &Context) -> Vec<Signal> {
    let mut t = SampleTable::new();
    t.push_row(0.0, LOAD, values.iter().map(|(k, v)| (k.as_str(), *v)));
    let baseline = BTreeMap::new();
    let scope = Scope {
        table: &t,
        baseline: &baseline,
        ctx,
    };
    let mut out: Vec<Signal> = Vec::new();
    for rule in sampled() {
        let Some(cond) = rule.cond() else { continue };
        let compiled = Compiled::new(cond, &scope);
        let mut held = Vec::new();
        compiled.knee_signals(&t, 0, &mut held);
        for (q, value) in held {
            if out.iter().any(|s| s.metric == q.metric) {
                continue;
            }
            out.push(Signal {
                metric: q.metric.to_string(),
                value,
                op: q.op.as_str(),
                threshold: q.threshold,
                rule: format!("{} {}", rule.id, rule.title),
            });
        }
    }
    out.sort_by(|a, b| a.metric.cmp(&b.metric));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(pairs: &[(&str, f64)]) -> Vec<(String, f64)> {
        pairs.iter().map(|(k, x)| (k.to_string(), *x)).collect()
    }

    #[test]
    fn the_rules_signals_on_means() {
        let ctx = Context::of(4);
        let s = signals(
            &v(&[
                ("cpu_busy_pct", 95.0),
                ("cpu3_busy_pct", 99.0),
                ("mem_used_pct", 50.0),
                ("disk_vda_util_pct", 97.0),
                ("proc_loadgen_cpu_pct", 350.0),
                ("proc_loadgen_threads", 4.0),
            ]),
            &ctx,
        );
        let names: Vec<&str> = s.iter().map(|s| s.metric.as_str()).collect();
        assert_eq!(names, ["cpu3_busy_pct", "cpu_busy_pct", "disk_vda_util_pct"]);
        assert_eq!(s[1].rule, "R1 CPU saturated");
        assert_eq!((s[1].op, s[1].threshold), (">=", 90.0));
        // The load generator's 4 threads on 4 CPUs: 360 % is its whole capacity.
        let s = signals(&v(&[("proc_loadgen_cpu_pct", 360.0), ("proc_loadgen_threads", 4.0)]), &ctx);
        assert_eq!(s[0].threshold, 360.0);
        assert!(signals(&v(&[("mem_used_pct", 91.0)]), &ctx)[0].rule.starts_with("R7"));
    }
}
