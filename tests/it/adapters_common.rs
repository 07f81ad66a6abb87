//! Shared helpers of the adapter fixture tests: load a captured run, parse it, read metrics.

use perflab::workload::exec::adapters::{by_name, ToolOutput};
use perflab::workload::exec::process::Exit;
use perflab::workload::WorkloadResult;

pub const DIR: &str = "tests/fixtures/tools";

pub fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("fixture {path}: {e}"))
}

/// The captured run `tool/name`: its command words, stdout, stderr and exit status.
pub fn fixture(tool: &str, name: &str) -> ToolOutput {
    let base = format!("{DIR}/{tool}/{name}");
    let code: i32 = read(&format!("{base}.exit")).trim().parse().expect("exit code");
    ToolOutput {
        args: read(&format!("{base}.cmd")).split_whitespace().map(str::to_string).collect(),
        cwd: None,
        stdout: read(&format!("{base}.stdout")),
        stderr: read(&format!("{base}.stderr")),
        exit: Exit::Code(code),
    }
}

pub fn parse(adapter: &str, tool: &str, name: &str) -> WorkloadResult {
    let a = by_name(adapter).expect("adapter");
    a.parse(&fixture(tool, name))
        .unwrap_or_else(|e| panic!("{tool}/{name}: {e} {:?}", e.raw))
}

pub fn error(adapter: &str, tool: &str, name: &str) -> String {
    let a = by_name(adapter).expect("adapter");
    let e = a.parse(&fixture(tool, name)).expect_err("the tool's error fails the trial");
    assert!(!e.raw.is_empty(), "the tool's lines are kept");
    e.reason
}

pub fn v(r: &WorkloadResult, name: &str) -> f64 {
    r.metric(name)
        .unwrap_or_else(|| panic!("metric {name} missing from {:?}", names(r)))
        .value
}

pub fn names(r: &WorkloadResult) -> Vec<&str> {
    r.metrics.iter().map(|m| m.name.as_str()).collect()
}

pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}
