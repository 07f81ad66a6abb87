//! Fuzz harness for the plan parser (`perflab::plan::parse_str`): the example plans, the plan
//! fixtures and the annotated plan of docs/plan.md, with a value replaced by an odd one (huge or
//! negative numbers, `1e20`, `"18446744073709551615s"`, `"0-99999999999"`, lists, tables, ...), a
//! key inserted, the text cut, a byte flipped or a line deleted or doubled. Properties: no panic,
//! and an error is one line that names the place (`file:line:col`) and no Rust type (`untagged
//! enum`, `struct`, `::`).

use crate::fuzz_common::fuzz;
use proptest::prelude::*;
use proptest::sample::Index;

/// Values put in a plan: each is valid TOML, most are wrong somewhere.
const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "9223372036854775807",
    "-9223372036854775808",
    "99999999999",
    "4294967296",
    "0.0",
    "-0.5",
    "1e20",
    "1e308",
    "nan",
    "inf",
    "-inf",
    "1.5",
    "true",
    "\"\"",
    "\"18446744073709551615s\"",
    "\"1e20\"",
    "\"1e20s\"",
    "\"0-99999999999\"",
    "\"99999999999\"",
    "\"0-1,3\"",
    "\"3-1\"",
    "\"-1s\"",
    "\"1h30m\"",
    "\"500ms\"",
    "\"9223372036854775807ns\"",
    "\"4294967296s\"",
    "\"abc\"",
    "\"${x}\"",
    "\"${\"",
    "\"${concurrency}\"",
    "\"SIGTERM\"",
    "\"99999999999999999999T\"",
    "\"1e400M\"",
    "\"0.0000001\"",
    "\"keep\"",
    "\"shuffled\"",
    "\"127.0.0.1:0\"",
    "\"http://127.0.0.1:1/\"",
    "\"latency_p99_ms < 1e400\"",
    "\"x <\"",
    "[]",
    "[1, 2]",
    "[\"a\", 1]",
    "[[1]]",
    "[1e20]",
    "[-1]",
    "[99999999999]",
    "[\"0-99999999999\"]",
    "{}",
    "{ a = 1 }",
    "{ tcp = \"127.0.0.1:1\", timeout = \"1e20\" }",
    "{ delay = 1e20 }",
    "{ signal = 99, grace = \"18446744073709551615s\" }",
    "{ min = 0, max = 99999999999, ci_pct = -1.0 }",
    "{ min = 3, max = 2 }",
];

/// Keys a plan may hold (and a few it may not).
const KEYS: &[&str] = &[
    "name",
    "repetitions",
    "order",
    "seed",
    "skip_unsupported",
    "thresholds",
    "type",
    "command",
    "cwd",
    "env",
    "ready",
    "stop",
    "cpus",
    "cpu_quota",
    "memory",
    "restart",
    "timeout",
    "baseline",
    "warmup",
    "load",
    "recovery",
    "interval",
    "exclude",
    "setup",
    "teardown",
    "skip_unless",
    "concurrency",
    "nonsense",
];

#[derive(Clone, Debug)]
enum Edit {
    Value { line: Index, value: usize },
    Insert { line: Index, key: usize, value: usize },
    Truncate { at: Index },
    Flip { at: Index, byte: u8 },
    DeleteLine { line: Index },
    DoubleLine { line: Index },
}

fn edits() -> impl Strategy<Value = Edit> {
    prop_oneof![
        6 => (any::<Index>(), 0..VALUES.len()).prop_map(|(line, value)| Edit::Value { line, value }),
        3 => (any::<Index>(), 0..KEYS.len(), 0..VALUES.len()).prop_map(|(line, key, value)| Edit::Insert { line, key, value }),
        1 => any::<Index>().prop_map(|at| Edit::Truncate { at }),
        1 => (any::<Index>(), prop::sample::select(b"=[]{}\"'#,.\n 0-9az$".to_vec())).prop_map(|(at, byte)| Edit::Flip { at, byte }),
        1 => any::<Index>().prop_map(|line| Edit::DeleteLine { line }),
        1 => any::<Index>().prop_map(|line| Edit::DoubleLine { line }),
    ]
}

/// Apply 1..=3 edits to `text`.
fn apply(text: &str, edits: &[Edit]) -> String {
    let mut t = text.to_string();
    for e in edits {
        let lines: Vec<&str> = t.split_inclusive('\n').collect();
        let keyed: Vec<usize> = (0..lines.len())
            .filter(|&i| {
                let l = lines[i].trim_start();
                l.contains(" = ") && !l.starts_with('#') && !l.starts_with('[')
            })
            .collect();
        t = match e {
            Edit::Value { line, value } if !keyed.is_empty() => {
                let i = keyed[line.index(keyed.len())];
                let key = lines[i].split(" = ").next().unwrap_or_default();
                let mut v = lines.clone();
                let replaced = format!("{key} = {}\n", VALUES[*value]);
                v[i] = &replaced;
                v.concat()
            }
            Edit::Insert { line, key, value } => {
                let i = line.index(lines.len() + 1);
                let new = format!("{} = {}\n", KEYS[*key], VALUES[*value]);
                let mut v = lines.clone();
                v.insert(i, &new);
                v.concat()
            }
            Edit::Truncate { at } => {
                let mut i = at.index(t.len() + 1);
                while !t.is_char_boundary(i) {
                    i -= 1;
                }
                t[..i].to_string()
            }
            Edit::Flip { at, byte } if !t.is_empty() => {
                let mut i = at.index(t.len());
                while !t.is_char_boundary(i) {
                    i -= 1;
                }
                let next = t[i..].chars().next().map_or(0, char::len_utf8);
                format!("{}{}{}", &t[..i], *byte as char, &t[i + next..])
            }
            Edit::DeleteLine { line } if !lines.is_empty() => {
                let i = line.index(lines.len());
                lines.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, l)| *l).collect()
            }
            Edit::DoubleLine { line } if !lines.is_empty() => {
                let i = line.index(lines.len());
                let mut v = lines.clone();
                v.insert(i, lines[i]);
                v.concat()
            }
            _ => t.clone(),
        };
    }
    t
}

/// The plans to start from.
fn plans() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["examples", "tests/fixtures/plans"] {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .expect("plan dir")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        out.extend(files.iter().map(|p| std::fs::read_to_string(p).expect("plan")));
    }
    let doc = std::fs::read_to_string("docs/plan.md").expect("docs/plan.md");
    let block = doc
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a toml block");
    out.push(block.to_string());
    out
}

/// What is wrong with an error message, if anything.
fn message_fault(msg: &str) -> Option<&'static str> {
    if msg.contains('\n') {
        return Some("more than one line");
    }
    if !msg.starts_with("fuzz.toml:") {
        return Some("no file:line:col");
    }
    for rust in ["untagged enum", "struct ", "::", "Spanned", "RawPlan", "RawHooks", "variant of"] {
        if msg.contains(rust) {
            return Some("a Rust type name");
        }
    }
    let primitive = [
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32", "f64",
    ];
    if msg.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| primitive.contains(&w)) {
        return Some("a Rust type name");
    }
    None
}

#[test]
fn plans_never_panic_and_errors_are_one_located_line() {
    let plans = plans();
    // The seeds themselves: the examples are valid plans (so the edits below start from plans that
    // parse), and a fixture that is refused says so in one located line.
    let examples = std::fs::read_dir("examples")
        .expect("examples")
        .filter(|e| e.as_ref().is_ok_and(|e| e.path().extension().is_some_and(|x| x == "toml")))
        .count();
    let mut parsed = 0;
    for p in &plans {
        match perflab::plan::parse_str(p, "fuzz.toml") {
            Ok(_) => parsed += 1,
            Err(e) => {
                let msg = format!("{e:#}");
                assert_eq!(message_fault(&msg), None, "{msg}\n--- plan:\n{p}");
            }
        }
    }
    assert!(
        parsed >= examples,
        "only {parsed} of the {} seed plans parse ({examples} examples)",
        plans.len()
    );
    let strategy = (any::<Index>(), prop::collection::vec(edits(), 1..=3));
    fuzz("plan", 3000, strategy, |(plan, edits)| {
        let text = apply(&plans[plan.index(plans.len())], &edits);
        if let Err(e) = perflab::plan::parse_str(&text, "fuzz.toml") {
            let msg = format!("{e:#}");
            if let Some(fault) = message_fault(&msg) {
                return Err(TestCaseError::fail(format!("{fault}: {msg}\n--- plan:\n{text}")));
            }
        }
        Ok(())
    });
}

/// What the fuzzer found, kept as plain tests: each is one located line, never a panic.
#[test]
fn found_by_fuzzing_absurd_values_are_located_errors() {
    const BASE: &str = "name = \"t\"\n[workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:9/\"\n";
    let err = |src: String| {
        let e = perflab::plan::parse_str(&src, "plan.toml").expect_err("rejected");
        assert_eq!(perflab::error::exit_code(&e), 2, "bad input: {e:#}");
        format!("{e:#}")
    };
    assert_eq!(
        err(format!("{BASE}[phases]\nload = 1e20\n")),
        "plan.toml:6:8: [phases] load: 1e20 s is longer than the longest duration perflab accepts (365 days)"
    );
    assert_eq!(
        err(format!("{BASE}[phases]\nload = \"1e20\"\n")),
        "plan.toml:6:8: [phases] load: \"1e20\" is longer than the longest duration perflab accepts (365 days)"
    );
    assert!(err(format!("{BASE}[phases]\nload = \"18446744073709551615s\"\n")).starts_with("plan.toml:6:8: [phases] load: "));
    assert_eq!(
        err(format!("{BASE}[target]\ncommand = \"true\"\ncpus = \"0-99999999999\"\n")),
        "plan.toml:7:1: [target] cpus: CPU 99999999999 in \"0-99999999999\" is beyond the largest CPU number (8191)"
    );
    assert_eq!(
        err(format!("{BASE}[variant.a]\nsetup = 1\n[matrix]\nv = [\"a\"]\n")),
        "plan.toml:6:9: `variant.a.setup`: expected a shell command or a list of them"
    );
    assert_eq!(
        err(format!("seed = \"abc\"\n{BASE}")),
        "plan.toml:1:8: `seed`: expected a whole number, found \"abc\""
    );
    assert_eq!(
        err(format!("seed = 99223372036854775807\n{BASE}")),
        "plan.toml:1:8: `seed`: the integer 99223372036854775807 is out of range (TOML integers are 64-bit)"
    );
    assert_eq!(
        err(format!("{BASE}[matrix]\nsize = 9923372036854775807\n")),
        "plan.toml:6:8: the integer is out of range (TOML integers are 64-bit)"
    );
    assert_eq!(
        err(format!("{BASE}[target]\ncommand = \"true\"\nready = {{ log = \"[a\" }}\n")),
        "plan.toml:7:1: [target] ready: log pattern is not a regular expression: unclosed character class"
    );
}
