//! Four classic experiments written as plans (tests/fixtures/plans), and the annotated example of
//! docs/plan.md: each parses, expands to the known number of trials, and every trial's workload table
//! is accepted by the workload registry. Plus the locations the runner relies on.

use perflab::plan::{self, Order, Plan, Repetitions};
use perflab::util::command::CommandLine;
use perflab::workload::registry::{self, Locator};
use std::path::Path;

use crate::common;
use common::free_port;

fn fixture(name: &str) -> Plan {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plans").join(name);
    let text = std::fs::read_to_string(&path).expect("fixture");
    let text = text.replace("18080", &free_port().to_string());
    plan::parse_str(&text, name).unwrap_or_else(|e| panic!("{name}: {e:#}"))
}

struct At<'a>(&'a Plan);

impl Locator for At<'_> {
    fn at(&self, key: Option<&str>) -> String {
        self.0.locate_workload_key(key)
    }
}

/// Every trial's substituted workload table builds (http only: exec checks that the tool is installed).
fn workloads_build(p: &Plan) {
    if p.workload.kind != "http" {
        return;
    }
    for t in plan::expand(p) {
        if let Err(e) = registry::build(&p.workload.kind, &t.workload, &At(p)) {
            panic!("{} trial {}: {e:#}", p.name, t.index);
        }
    }
}

#[test]
fn seed_000_variants_with_hooks_and_long_phases() {
    let p = fixture("seed000_apache_mpm.toml");
    assert_eq!(p.points.len(), 6, "2 variants × 3 concurrencies");
    assert_eq!(plan::expand(&p).len(), 18);
    assert!(p.notes.is_empty(), "every parameter is used: {:?}", p.notes);
    assert_eq!(p.phases.baseline, std::time::Duration::from_secs(300));
    assert_eq!(
        p.variants["prefork"].setup,
        ["echo enabling prefork"],
        "${{variant}} is substituted in hooks"
    );
    assert_eq!(p.variants["prefork"].teardown, ["echo disabling prefork"]);
    assert!(p.variants["event"].teardown.is_empty());
    assert!(p.points.iter().all(|pt| pt.target.is_none()));
    workloads_build(&p);
}

#[test]
fn seed_001_adaptive_shuffled_before_after() {
    let p = fixture("seed001_swappiness.toml");
    assert_eq!(
        p.repetitions,
        Repetitions::Adaptive {
            min: 3,
            max: 10,
            ci_pct: 5.0,
            metric: "duration_s".into()
        }
    );
    assert_eq!(p.order, Order::Shuffled);
    assert_eq!(p.seed, 6215);
    let t = plan::expand(&p);
    assert_eq!(t.len(), 6, "min repetitions × 2 variants");
    assert_eq!(p.variants.keys().collect::<Vec<_>>(), ["after"]);
    assert!(p.phases.warmup.is_zero());
}

#[test]
fn seed_002_cores_are_honoured_or_skipped_with_a_note() {
    let p = fixture("seed002_cores.toml");
    let online = perflab::util::cpus::online_cpus().len();
    let cores_ok = [1, 2, 4].iter().filter(|c| **c <= online).count();
    assert_eq!(p.points.len(), cores_ok * 3);
    assert_eq!(p.notes.len(), (3 - cores_ok) * 3, "each skipped point is noted: {:?}", p.notes);
    let t = p.points[0].target.as_ref().expect("a target");
    assert_eq!(t.limits.memory, Some(1 << 30));
    assert_eq!(t.command, CommandLine::Shell(format!("./server --port {}", port_of(t))));
    assert_eq!(p.points[0].workload.get("requests"), Some(&toml::Value::Integer(10)));
    workloads_build(&p);
}

fn port_of(t: &plan::ResolvedTarget) -> String {
    match &t.ready {
        plan::Ready::Tcp { addr, .. } => addr.rsplit(':').next().unwrap_or("").to_string(),
        other => panic!("tcp ready expected, got {other:?}"),
    }
}

#[test]
fn seed_003_pool_vs_threads_with_exclude_and_string_thresholds() {
    let p = fixture("seed003_pool_vs_threads.toml");
    assert_eq!(p.points.len(), 2 * 2 * 6 - 2, "exclude removes (10 MB, c=20) for both models");
    assert_eq!(plan::expand(&p).len(), 66);
    assert_eq!(p.thresholds.len(), 2);
    assert_eq!(p.thresholds[1].metric, "error_rate_pct");
    let t = p.points[0].target.as_ref().expect("a target");
    match &t.command {
        CommandLine::Argv(a) => assert_eq!(a[5], "pool"),
        other => panic!("argv expected, got {other:?}"),
    }
    assert_eq!(t.stop_signal, libc::SIGTERM);
    workloads_build(&p);
}

#[test]
fn the_annotated_example_in_docs_parses() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/plan.md")).expect("docs/plan.md");
    let start = doc.find("```toml\n").expect("a toml block") + "```toml\n".len();
    let len = doc[start..].find("```").expect("closed");
    let text = doc[start..start + len].replace("18080", &free_port().to_string());
    let p = plan::parse_str(&text, "docs/plan.md").unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(p.name, "pool-vs-threads");
    assert_eq!(p.points.len(), 14, "as the text under the example says");
    assert_eq!(plan::expand(&p).len(), 42);
    workloads_build(&p);
}

#[test]
fn workload_keys_are_located_for_the_runner() {
    // Line 7, column 1: the registry reports an unknown workload key there.
    let src = "name = \"t\"\n\n[workload]\ntype = \"http\"\nurl = \"http://127.0.0.1:9/\"\n\nconections = 4\n";
    let p = plan::parse_str(src, "plan.toml").expect("workload keys are the registry's to check");
    assert_eq!(p.locate_workload_key(Some("conections")), "plan.toml:7:1");
    assert_eq!(p.locate_workload_key(None), "plan.toml:3:2");
    let e = match registry::build("http", &p.workload.table, &At(&p)) {
        Err(e) => perflab::error::one_line(&e),
        Ok(_) => panic!("conections is rejected"),
    };
    assert!(
        e.starts_with("plan.toml:7:1: unknown key `conections`") && e.contains("did you mean `connections`"),
        "{e}"
    );
    let at = src.find("conections").expect("in source");
    assert_eq!(plan::locate(&p, at..at + 10), (7, 1));
    assert_eq!(p.locate_key(&["workload", "url"]), "plan.toml:5:1");
}
