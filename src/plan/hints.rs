//! Plans that are valid but probably not what their author meant, said as notes by the dry run: a matrix parameter named like a top-level key (in TOML, every key
//! after `[matrix]` belongs to it, so `thresholds = [...]` written there becomes a parameter), an
//! http `duration` beside `[phases] load`, an exec command whose run time is the load phase; and
//! how `requests = N` and an exec command shape the estimated duration.

use super::{Matrix, Phases};
use crate::util::duration::format as fmt;

/// The top-level keys of a plan.
const TOP_LEVEL: &[&str] = &[
    "name",
    "description",
    "repetitions",
    "order",
    "seed",
    "skip_unsupported",
    "thresholds",
    "target",
    "workload",
    "matrix",
    "phases",
    "probes",
    "report",
    "hosts",
];

/// The notes for a plan's matrix, workload (`kind` and its table as written) and phases.
pub fn notes(m: &Matrix, kind: &str, workload: &toml::Table, phases: &Phases) -> Vec<String> {
    let mut out = Vec::new();
    for (k, _) in &m.params {
        if TOP_LEVEL.contains(&k.as_str()) {
            out.push(format!(
                "matrix parameter `{k}` has the name of a top-level key: in TOML every key after [matrix] belongs to the matrix; if `{k}` is meant for the plan, move it above [matrix]"
            ));
        }
    }
    let load = fmt(phases.load);
    if kind == "http" {
        if let Some(d) = workload.get("duration") {
            out.push(format!(
                "[workload] duration = {d} beside [phases] load = {load}: the load phase bounds every trial, so the shorter of the two applies (duration only matters with requests)"
            ));
        }
        if let Some(n) = workload.get("requests") {
            out.push(format!(
                "[workload] requests = {n}: a trial stops after {n} responses or at the end of its load phase ({load}), whichever comes first; the estimate counts the full load phase, so the run can be shorter"
            ));
        }
    }
    if kind == "exec" {
        let timeout = workload.get("timeout").map_or("1h".to_string(), |t| t.to_string());
        out.push(format!(
            "exec runs its command to completion and that time is the load phase: a command that runs longer than [phases] load = {load} makes each trial longer (up to timeout = {timeout}) than the estimate, which counts {load}; size the tool's own duration to the load phase"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use toml::Value;

    #[test]
    fn says_what_is_probably_not_meant() {
        let m = Matrix {
            params: vec![("thresholds".into(), vec![Value::Integer(1), Value::Integer(2)])],
            ..Matrix::default()
        };
        let phases = Phases::default();
        let mut w = toml::Table::new();
        w.insert("duration".into(), Value::String("30s".into()));
        let n = notes(&m, "http", &w, &phases);
        assert!(n[0].contains("`thresholds` has the name of a top-level key"), "{n:?}");
        assert!(n[1].contains("duration = \"30s\" beside [phases] load"), "{n:?}");
        let n = notes(&Matrix::default(), "exec", &toml::Table::new(), &phases);
        assert!(n[0].contains("runs its command to completion"), "{n:?}");
        assert!(notes(&Matrix::default(), "http", &toml::Table::new(), &phases).is_empty());
    }
}
