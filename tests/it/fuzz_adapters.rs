//! Fuzz harnesses for every tool adapter: the captured outputs (tests/fixtures/tools) mutated one
//! edit at a time. Properties: the parser never panics, never stores a value that is not finite,
//! and never returns success with a figure that is not in the input:
//! - a number replaced by text that is not one (`nan`, `n/a`, `""`, ...): every figure of a success
//!   is the figure the intact output gives under that name (nothing slides into another's place,
//!   nothing defaults to 0), none of those is missing (a bad field fails, it is not skipped) unless
//!   the edit renamed a metric (its label held the number), and a figure under a new name is in the
//!   input;
//! - output cut at any byte: success only with exactly the intact output's figures;
//! - any other edit (another number, a flipped byte, a line deleted, doubled or swapped): every
//!   figure is a number of the input (times a unit factor) or one the adapter derives from others.

use crate::adapters_common::{fixture, read, DIR};
use crate::fuzz_common::fuzz;
use perflab::workload::exec::adapters::text::Metrics;
use perflab::workload::exec::adapters::{by_name, stress_ng, ParseError, ToolOutput};
use perflab::workload::WorkloadResult;
use proptest::prelude::*;
use proptest::sample::Index;

type Parse = Box<dyn Fn(&ToolOutput) -> Result<WorkloadResult, ParseError>>;

/// Text that is not a number, put where a number was.
const GARBAGE: &[&str] = &[
    "nan", "-nan", "NaN", "n/a", "", "-", "inf", "-inf", "1e999", "abc", "0x1F", "1,5", "+-1", "1.2.3", "12abc", "\"n/a\"", "null", "true",
    "\"12\"", "[]", "{}", "?", "N/A",
];

/// The same for JSON reports: text that keeps the document valid, so the parser reads it.
const JSON_GARBAGE: &[&str] = &["\"n/a\"", "null", "true", "\"12\"", "[]", "{}", "\"\"", "\"nan\"", "1e999"];

/// JSON values that are not numbers.
const JSON_VALUES: &[&str] = &["\"n/a\"", "null", "true", "\"12\"", "[]", "{}", "\"\"", "\"nan\""];

/// Bytes a flip may write.
const BYTES: &[u8] = b"0123456789.-+eE %()[]:,/\n\t xk\"{}";

#[derive(Clone, Debug)]
enum Edit {
    Garbage {
        nth: Index,
        text: usize,
    },
    /// In a JSON report: the nth number of the document replaced by a value that is not one.
    JsonLeaf {
        nth: Index,
        text: usize,
    },
    Renumber {
        nth: Index,
        value: u32,
        style: u8,
    },
    Truncate {
        at: Index,
    },
    Flip {
        at: Index,
        byte: usize,
    },
    DeleteLine {
        at: Index,
    },
    DoubleLine {
        at: Index,
    },
    SwapLines {
        a: Index,
        b: Index,
    },
}

#[derive(Clone, Debug)]
struct Case {
    input: Index,
    stderr: bool,
    edit: Edit,
}

fn edits() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<Index>(), 0..GARBAGE.len()).prop_map(|(nth, text)| Edit::Garbage { nth, text }),
        3 => (any::<Index>(), 0..JSON_VALUES.len()).prop_map(|(nth, text)| Edit::JsonLeaf { nth, text }),
        2 => (any::<Index>(), any::<u32>(), any::<u8>()).prop_map(|(nth, value, style)| Edit::Renumber { nth, value, style }),
        3 => any::<Index>().prop_map(|at| Edit::Truncate { at }),
        1 => (any::<Index>(), 0..BYTES.len()).prop_map(|(at, byte)| Edit::Flip { at, byte }),
        1 => any::<Index>().prop_map(|at| Edit::DeleteLine { at }),
        1 => any::<Index>().prop_map(|at| Edit::DoubleLine { at }),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Edit::SwapLines { a, b }),
    ]
}

fn cases() -> impl Strategy<Value = Case> {
    (any::<Index>(), proptest::bool::weighted(0.25), edits()).prop_map(|(input, stderr, edit)| Case { input, stderr, edit })
}

/// Byte ranges of the numbers in `s`: a digit, then digits and dots.
fn number_spans(s: &str) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Apply `edit` to `s`.
fn apply(edit: &Edit, s: &str, json: bool) -> String {
    let lines: Vec<&str> = s.split_inclusive('\n').collect();
    match edit {
        Edit::Garbage { nth, text } => match number_spans(s) {
            v if v.is_empty() => s.to_string(),
            v => {
                let (a, b) = v[nth.index(v.len())];
                let garbage = if json {
                    JSON_GARBAGE[text % JSON_GARBAGE.len()]
                } else {
                    GARBAGE[*text]
                };
                format!("{}{garbage}{}", &s[..a], &s[b..])
            }
        },
        Edit::JsonLeaf { nth, text } if json => json_leaf(s, nth, text),
        Edit::JsonLeaf { nth, text } => apply(&Edit::Garbage { nth: *nth, text: *text }, s, false),
        Edit::Renumber { nth, value, style } => match number_spans(s) {
            v if v.is_empty() => s.to_string(),
            v => {
                let (a, b) = v[nth.index(v.len())];
                let n = match style % 4 {
                    0 => value.to_string(),
                    1 => format!("{}.{:02}", value / 100, value % 100),
                    2 => format!("{}", value % 10),
                    _ => format!("{}e{}", value % 1000, style % 7),
                };
                format!("{}{n}{}", &s[..a], &s[b..])
            }
        },
        Edit::Truncate { at } => s[..floor_boundary(s, at.index(s.len() + 1))].to_string(),
        Edit::Flip { at, byte } if !s.is_empty() => {
            let i = floor_boundary(s, at.index(s.len()));
            let next = s[i..].chars().next().map_or(0, char::len_utf8);
            format!("{}{}{}", &s[..i], BYTES[*byte] as char, &s[i + next..])
        }
        Edit::DeleteLine { at } if !lines.is_empty() => {
            let i = at.index(lines.len());
            lines.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, l)| *l).collect()
        }
        Edit::DoubleLine { at } if !lines.is_empty() => {
            let i = at.index(lines.len());
            let mut v = lines.clone();
            v.insert(i, lines[i]);
            v.concat()
        }
        Edit::SwapLines { a, b } if !lines.is_empty() => {
            let mut v = lines.clone();
            v.swap(a.index(lines.len()), b.index(lines.len()));
            v.concat()
        }
        _ => s.to_string(),
    }
}

/// The JSON document `s` with its nth number replaced by `JSON_VALUES[text]`.
fn json_leaf(s: &str, nth: &Index, text: &usize) -> String {
    use serde_json::Value;
    /// Visit the numbers in document order; replace the one numbered `*k` (counting down).
    fn walk(v: &mut Value, k: &mut Option<usize>, with: &Value) -> usize {
        match v {
            Value::Number(_) => {
                if *k == Some(0) {
                    *v = with.clone();
                }
                *k = k.and_then(|n| n.checked_sub(1));
                1
            }
            Value::Array(a) => a.iter_mut().map(|e| walk(e, k, with)).sum(),
            Value::Object(o) => o.values_mut().map(|e| walk(e, k, with)).sum(),
            _ => 0,
        }
    }
    let Ok(mut doc) = serde_json::from_str::<Value>(s) else {
        return s.to_string();
    };
    let with: Value = serde_json::from_str(JSON_VALUES[*text]).expect("a JSON value");
    let count = walk(&mut doc, &mut None, &with);
    if count == 0 {
        return s.to_string();
    }
    walk(&mut doc, &mut Some(nth.index(count)), &with);
    serde_json::to_string_pretty(&doc).expect("serialises")
}

/// Every number written in `s` with its sign, read leniently (`2.0003s` → 2.0003, `43.62MB` →
/// 43.62).
fn numbers_in(s: &str) -> Vec<f64> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() || (b[i] == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b"+-.eE".contains(&b[i])) {
                i += 1;
            }
            let signed = start > 0 && b"-+".contains(&b[start - 1]);
            let mut tok = &s[start - usize::from(signed)..i];
            while !tok.is_empty() {
                if let Ok(v) = tok.parse::<f64>() {
                    out.push(v);
                    break;
                }
                tok = &tok[..tok.len() - 1];
            }
        } else {
            i += 1;
        }
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12)
}

/// A value is the input's number `x` times a unit factor (ns → µs, bytes → MiB, KiB → MiB, ...).
fn from_input(v: f64, numbers: &[f64]) -> bool {
    const SCALES: &[f64] = &[
        1.0,
        1e-3,
        1e3,
        1e-6,
        1e6,
        1e-9,
        1e9,
        1.0 / 1024.0,
        1024.0,
        1.0 / 1048576.0,
        1048576.0,
        1073741824.0,
        1099511627776.0,
        60e3,
        3600e3,
    ];
    numbers.iter().any(|x| SCALES.iter().any(|s| close(v, x * s))) || (v == 0.0 && numbers.contains(&0.0))
}

/// One adapter under fuzz: how to parse, its inputs, and the figures it derives from others.
struct Target {
    /// The report is JSON: garbage keeps it valid JSON.
    json: bool,
    parse: Parse,
    inputs: Vec<ToolOutput>,
    derived: fn(&WorkloadResult, &str, f64) -> bool,
}

fn no_derived(_: &WorkloadResult, _: &str, _: f64) -> bool {
    false
}

/// The captured runs of `tool` (every `<name>.cmd`).
fn runs(tool: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(format!("{DIR}/{tool}"))
        .expect("fixture dir")
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".cmd").map(str::to_string))
        .collect();
    names.sort();
    names
}

fn adapter_target(name: &'static str, tool: &str, derived: fn(&WorkloadResult, &str, f64) -> bool) -> Target {
    let a = by_name(name).expect("adapter");
    Target {
        json: false,
        parse: Box::new(move |out| a.parse(out)),
        inputs: runs(tool).iter().map(|n| fixture(tool, n)).collect(),
        derived,
    }
}

fn target(name: &str) -> Target {
    match name {
        "fio" => {
            // The JSON report on stdout instead of in the --output file.
            let mut t = adapter_target("fio", "fio", fio_derived);
            t.json = true;
            for (out, run) in t.inputs.iter_mut().zip(runs("fio")) {
                out.stdout = read(&format!("{DIR}/fio/{run}.json"));
                out.args = ["fio", "--output-format=json"].map(String::from).to_vec();
            }
            t
        }
        "stress-ng" => {
            let mut t = adapter_target("stress-ng", "stress-ng", no_derived);
            for out in &mut t.inputs {
                out.args.retain(|a| a != "--yaml" && !a.ends_with(".yaml"));
            }
            t
        }
        "stress-ng-yaml" => {
            let parse: Parse = Box::new(|out: &ToolOutput| {
                let mut m = Metrics::default();
                stress_ng::parse_yaml(&out.stdout, &mut m).map_err(ParseError::new)?;
                m.finish("stress-ng metrics", &out.stdout)
            });
            let inputs = ["cpu", "vm_stream"]
                .iter()
                .map(|n| {
                    let mut out = fixture("stress-ng", n);
                    out.stdout = read(&format!("{DIR}/stress-ng/{n}.yaml"));
                    out.stderr.clear();
                    out
                })
                .collect();
            Target {
                json: false,
                parse,
                inputs,
                derived: no_derived,
            }
        }
        "sysbench" => adapter_target("sysbench", "sysbench", |r, name, v| {
            name == "events_per_s"
                && matches!((r.metric("events"), r.metric("total_time_s")), (Some(e), Some(t)) if close(v, e.value / t.value))
        }),
        "memtester" => adapter_target("memtester", "memtester", |_, name, v| {
            name.starts_with("memtest_") && v >= 0.0 && v.fract() == 0.0
        }),
        "wrk" => adapter_target("wrk", "wrk", |r, name, v| match name {
            "socket_errors" => close(v, r.errors.iter().map(|e| e.1 as f64).sum::<f64>()) || v == 0.0,
            "non_2xx_3xx_responses" => v == 0.0,
            _ => false,
        }),
        "ab" => adapter_target("ab", "ab", |_, name, v| name == "non_2xx_responses" && v == 0.0),
        "iperf3" => Target {
            json: true,
            ..adapter_target("iperf3", "iperf3", no_derived)
        },
        other => adapter_target(by_name(other).expect("adapter").name(), other, no_derived),
    }
}

/// fio's totals: the sum of the jobs' figures.
fn fio_derived(r: &WorkloadResult, name: &str, v: f64) -> bool {
    let Some((dir, what)) = name.split_once('_') else { return false };
    if !["read", "write", "trim"].contains(&dir) || !["iops", "bw_mibps"].contains(&what) {
        return false;
    }
    let suffix = format!("_{name}");
    let sum: f64 = r.metrics.iter().filter(|m| m.name.ends_with(&suffix)).map(|m| m.value).sum();
    close(v, sum)
}

fn check(t: &Target, base: &Result<WorkloadResult, ParseError>, input: &ToolOutput, edit: &Edit) -> Result<(), TestCaseError> {
    let r = match (t.parse)(input) {
        Err(e) => {
            prop_assert!(!e.reason.contains('\n'), "a reason is one line: {:?}", e.reason);
            return Ok(());
        }
        Ok(r) if r.failure.is_some() => return Ok(()), // the trial fails
        Ok(r) => r,
    };
    let numbers = numbers_in(&format!("{}\n{}", input.stdout, input.stderr));
    for m in &r.metrics {
        prop_assert!(m.value.is_finite(), "{} = {} is not finite", m.name, m.value);
    }
    for p in &r.series {
        prop_assert!(p.value.is_finite() && p.t_s.is_finite(), "series {p:?}");
        prop_assert!(from_input(p.value, &numbers), "series point {p:?} is not in the input");
    }
    let base = base.as_ref().ok();
    let in_base = |name: &str| base.and_then(|b| b.metric(name)).map(|m| m.value);
    match edit {
        Edit::Truncate { .. } if base.is_some() => {
            let b = base.expect("base");
            let names = |r: &WorkloadResult| r.metrics.iter().map(|m| (m.name.clone(), m.value)).collect::<Vec<_>>();
            prop_assert_eq!(names(&r), names(b), "output cut short passed with other figures");
            prop_assert_eq!(&r.series, &b.series);
        }
        Edit::Garbage { .. } | Edit::JsonLeaf { .. } => {
            // Nothing is skipped either, except where the garbage landed in a label: a JSON key
            // (fio's percentile keys, which fio's options choose) or a name a metric is named after
            // (memtester's `16-bit Writes`), which renames the metric.
            let in_json_key = t.json && matches!(edit, Edit::Garbage { .. });
            let renamed = base.is_some_and(|b| r.metrics.iter().any(|m| b.metric(&m.name).is_none()));
            if let (Some(b), false, false) = (base, in_json_key, renamed) {
                for m in &b.metrics {
                    prop_assert!(r.metric(&m.name).is_some(), "{} was skipped, not failed", m.name);
                }
            }
            for m in &r.metrics {
                match in_base(&m.name) {
                    Some(v) => prop_assert!(close(m.value, v), "{} = {} but the intact output gives {v}", m.name, m.value),
                    None => prop_assert!(
                        from_input(m.value, &numbers) || (t.derived)(&r, &m.name, m.value),
                        "{} = {} is not in the input",
                        m.name,
                        m.value
                    ),
                }
            }
        }
        _ => {
            for m in &r.metrics {
                prop_assert!(
                    from_input(m.value, &numbers) || (t.derived)(&r, &m.name, m.value),
                    "{} = {} is not in the input",
                    m.name,
                    m.value
                );
            }
        }
    }
    Ok(())
}

fn run(name: &str) {
    let t = target(name);
    assert!(!t.inputs.is_empty(), "{name}: no fixtures");
    let bases: Vec<_> = t.inputs.iter().map(|i| (t.parse)(i)).collect();
    assert!(bases.iter().any(Result::is_ok), "{name}: some fixture parses");
    fuzz(&format!("adapter {name}"), 1500, cases(), |c| {
        let i = c.input.index(t.inputs.len());
        let mut input = t.inputs[i].clone();
        let stream = if c.stderr { &mut input.stderr } else { &mut input.stdout };
        *stream = apply(&c.edit, stream, t.json && !c.stderr);
        check(&t, &bases[i], &input, &c.edit)
    });
}

#[test]
fn fio() {
    run("fio");
}

#[test]
fn iperf3() {
    run("iperf3");
}

#[test]
fn stress_ng_text() {
    run("stress-ng");
}

#[test]
fn stress_ng_yaml() {
    run("stress-ng-yaml");
}

#[test]
fn memtester() {
    run("memtester");
}

#[test]
fn sysbench() {
    run("sysbench");
}

#[test]
fn pgbench() {
    run("pgbench");
}

#[test]
fn ab() {
    run("ab");
}

#[test]
fn wrk() {
    run("wrk");
}

#[test]
fn numbers_are_found_and_matched_with_units() {
    let s = "a 12.5 b 7\nc 3\n";
    assert_eq!(number_spans(s), vec![(2, 6), (9, 10), (13, 14)]);
    assert_eq!(numbers_in("2.0003s 43.62MB (0.000%) 1e3 x7"), vec![2.0003, 43.62, 0.0, 1000.0, 7.0]);
    assert!(from_input(43.62 * 1048576.0, &[43.62]));
    assert!(!from_input(124.49, &[289.0]));
}
