//! Plans that are valid but probably not what their author meant, said by the dry run: a matrix
//! parameter named like a top-level key (in TOML, every key after `[matrix]` belongs to it, so
//! `thresholds = [...]` written there becomes a parameter), an http `duration` beside `[phases]
//! load`, an exec command whose tool runs past (or stops before) the load phase; and the length of
//! a trial the estimate counts (an exec command's run time *is* its trial's load phase).

use super::tool_durations::{exec_times, RunTime};
use super::{Plan, Point};
use crate::util::duration::format as fmt;
use std::time::Duration;

/// A line of the dry run: `note: ...`, or `warning: ...` for a plan that will not do what it says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hint {
    pub warning: bool,
    pub text: String,
}

impl std::fmt::Display for Hint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", if self.warning { "warning" } else { "note" }, self.text)
    }
}

fn note(text: String) -> Hint {
    Hint { warning: false, text }
}

fn warning(text: String) -> Hint {
    Hint { warning: true, text }
}

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

/// The dry run's notes and warnings for a plan.
pub fn notes(plan: &Plan) -> Vec<Hint> {
    let mut out = Vec::new();
    for (k, _) in &plan.matrix.params {
        if TOP_LEVEL.contains(&k.as_str()) {
            out.push(note(format!(
                "matrix parameter `{k}` has the name of a top-level key: in TOML every key after [matrix] belongs to the matrix; if `{k}` is meant for the plan, move it above [matrix]"
            )));
        }
    }
    let load = fmt(plan.phases.load);
    match plan.workload.kind.as_str() {
        "http" => {
            if let Some(d) = values_of(plan, "duration") {
                out.push(note(format!(
                    "[workload] duration = {d} beside [phases] load = {load}: the load phase bounds every trial, so the shorter of the two applies (duration only matters with requests)"
                )));
            }
            if let Some(n) = values_of(plan, "requests") {
                out.push(note(format!(
                    "[workload] requests = {n}: a trial stops after that many responses or at the end of its load phase ({load}), whichever comes first; the estimate counts the full load phase, so the run can be shorter"
                )));
            }
        }
        "exec" => exec_hints(plan, &mut out),
        _ => {}
    }
    out
}

/// The values `[workload] key` takes at the plan's points, `${name}` substituted: `1000`, or
/// `10, 100 or 1000 (by point)` when they differ; None when no point sets it.
fn values_of(plan: &Plan, key: &str) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    for v in plan.points.iter().filter_map(|p| p.workload.get(key)) {
        let shown = match v {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if !seen.contains(&shown) {
            seen.push(shown);
        }
    }
    match seen.split_last()? {
        (one, []) => Some(one.clone()),
        (last, rest) => Some(format!("{} or {last} (by point)", rest.join(", "))),
    }
}

/// How far two durations may differ and still be "the same" length: a few per cent.
fn same_length(a: Duration, b: Duration) -> bool {
    a.abs_diff(b).as_secs_f64() <= 0.03 * a.max(b).as_secs_f64()
}

/// An exec command's tool against the load phase: the longest over the matrix points.
fn exec_hints(plan: &Plan, out: &mut Vec<Hint>) {
    let load = plan.phases.load;
    let (ls, points) = (fmt(load), plan.points.iter().filter_map(|p| Some((p, exec_times(&p.workload)?))));
    let points: Vec<_> = points.collect();
    if let Some((_, t)) = points.iter().find(|(_, t)| t.command.time == RunTime::Unknown) {
        out.push(note(format!(
            "{}: how long it runs cannot be read from its command, so each trial's load phase lasts until it exits; the estimate counts [phases] load = {ls}",
            t.command.what
        )));
    }
    let known = points.iter().filter_map(|(p, t)| Some((*p, t, t.command.bound()?)));
    let Some((p, t, d)) = known.clone().max_by_key(|(_, _, d)| *d) else {
        return;
    };
    let at = if known.clone().any(|(_, _, other)| other != d) {
        format!(" (at {})", p.label)
    } else {
        String::new()
    };
    let what = format!("{}{at}", t.command.what);
    let (ds, counted) = (fmt(d), fmt(d.min(t.timeout)));
    let exact = matches!(t.command.time, RunTime::Exactly(_));
    if exact && d >= t.timeout {
        out.push(warning(format!(
            "{what} runs at least as long as timeout = {}: perflab stops it then and every trial fails; make timeout longer than the tool's own duration",
            fmt(t.timeout)
        )));
    }
    if same_length(d, load) {
        return;
    }
    out.push(match (d > load, exact) {
        (true, true) => warning(format!(
            "{what} runs past [phases] load = {ls}: each trial's load phase lasts {ds}, not {ls}, and the estimate counts {counted}"
        )),
        (true, false) => warning(format!(
            "{what} can run past [phases] load = {ls}: each trial's load phase lasts until it exits, up to {ds}, and the estimate counts {counted}"
        )),
        (false, true) => note(format!(
            "{what} ends before [phases] load = {ls}: the load phase ends when it exits (after {ds}) and the recovery starts then; the estimate counts {ds}"
        )),
        (false, false) => note(format!(
            "{what} stops within {ds}, before [phases] load = {ls}: the load phase ends when it exits and the recovery starts then; the estimate counts {ds}"
        )),
    });
}

/// How long one trial of `point` lasts, not counting the target's start and stop: the plan's
/// phases, with an exec command's own run time (when its command line says it) as the load phase
/// (and as the warm-up, when the warm-up runs a command).
pub fn trial_length(plan: &Plan, point: &Point) -> Duration {
    let ph = &plan.phases;
    let times = (plan.workload.kind == "exec").then(|| exec_times(&point.workload)).flatten();
    let Some(t) = times else {
        return ph.total();
    };
    let run = |tool: &super::tool_durations::ToolTime, otherwise: Duration| tool.bound().map_or(otherwise, |d| d.min(t.timeout));
    let warmup = t.warmup.as_ref().map_or(ph.warmup, |w| run(w, ph.warmup));
    ph.baseline
        .saturating_add(warmup)
        .saturating_add(run(&t.command, ph.load))
        .saturating_add(ph.recovery)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints(text: &str) -> Vec<String> {
        let plan = super::super::parse_str(&format!("name = \"t\"\n{text}"), "t.toml").unwrap_or_else(|e| panic!("{e:#}"));
        notes(&plan).iter().map(ToString::to_string).collect()
    }

    fn exec(command: &str, load: &str) -> String {
        format!("[workload]\ntype = \"exec\"\ncommand = {command}\n[phases]\nload = \"{load}\"\n")
    }

    #[test]
    fn says_what_is_probably_not_meant() {
        let n = hints("[workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:1/\"\nduration = \"30s\"\n[matrix]\nthresholds = [1, 2]\n");
        assert!(n[0].contains("`thresholds` has the name of a top-level key"), "{n:?}");
        assert!(n[1].contains("duration = 30s beside [phases] load"), "{n:?}");
        assert!(hints("[workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:1/\"\n").is_empty());
    }

    #[test]
    fn an_exec_tool_longer_than_the_load_phase_is_a_warning() {
        let n = hints(&exec(r#"["stress-ng", "--cpu", "1", "-t", "60s"]"#, "30s"));
        assert_eq!(
            n,
            ["warning: stress-ng -t 60s runs past [phases] load = 30s: each trial's load phase lasts 1m, not 30s, and the estimate counts 1m"]
        );
        // An upper bound says "can".
        let n = hints(&exec(r#"["fio", "--name=x", "--runtime=60"]"#, "10s"));
        assert!(
            n[0].starts_with("warning: fio --runtime=60 without --time_based can run past [phases] load = 10s"),
            "{n:?}"
        );
    }

    #[test]
    fn equal_shorter_and_unknown_durations() {
        assert!(hints(&exec(r#""stress-ng --cpu 1 --timeout 10s""#, "10s")).is_empty());
        let n = hints(&exec(r#"["sleep", "5"]"#, "10s"));
        assert_eq!(n.len(), 1);
        assert!(
            n[0].starts_with("note: sleep 5 ends before [phases] load = 10s: the load phase ends when it exits (after 5s)"),
            "{n:?}"
        );
        let n = hints(&exec(r#"["memtester", "64M", "1"]"#, "10s"));
        assert_eq!(n, ["note: memtester: how long it runs cannot be read from its command, so each trial's load phase lasts until it exits; the estimate counts [phases] load = 10s"]);
    }

    #[test]
    fn the_longest_matrix_point_counts_and_is_named() {
        let text = format!(
            "{}[matrix]\nsecs = [10, 40]\n",
            exec(r#"["stress-ng", "--cpu", "1", "-t", "${secs}"]"#, "10s")
        );
        let n = hints(&text);
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(
            n[0].starts_with("warning: stress-ng -t 40 (at secs=40) runs past [phases] load = 10s"),
            "{n:?}"
        );
    }

    #[test]
    fn a_tool_as_long_as_the_timeout_fails_every_trial() {
        let text = "[workload]\ntype = \"exec\"\ncommand = [\"sleep\", \"30\"]\ntimeout = \"20s\"\n[phases]\nload = \"30s\"\n";
        let n = hints(text);
        assert!(
            n[0].starts_with("warning: sleep 30 runs at least as long as timeout = 20s"),
            "{n:?}"
        );
    }

    #[test]
    fn the_trial_length_counts_the_tools_own_duration() {
        let text = "name = \"t\"\n[workload]\ntype = \"exec\"\ncommand = [\"sleep\", \"${s}\"]\nwarmup_run = true\n[matrix]\ns = [3, 20]\n[phases]\nbaseline = \"1s\"\nwarmup = \"5s\"\nload = \"10s\"\nrecovery = \"2s\"\n";
        let plan = super::super::parse_str(text, "t.toml").unwrap();
        let lengths: Vec<u64> = plan.points.iter().map(|p| trial_length(&plan, p).as_secs()).collect();
        // baseline + the command as warm-up + the command + recovery.
        assert_eq!(lengths, [1 + 3 + 3 + 2, 1 + 20 + 20 + 2]);
    }
}
