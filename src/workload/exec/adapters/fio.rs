//! fio `--output-format=json` (read from `--output=FILE` when given, else from stdout after any
//! notes). Per job J (the job name, `J_<n>` when names repeat) and direction D (read, write, trim)
//! that did I/O: `J_D_iops`, `J_D_bw_mibps`, `J_D_clat_mean_us`, `J_D_clat_p50_us`, `_p99_us`,
//! `_p99_9_us`, the same for `lat` (slat+clat) when `--lat_percentiles=1`; `J_usr_cpu_pct`,
//! `J_sys_cpu_pct`. Totals over jobs: `D_iops`, `D_bw_mibps`; with a single job also `D_clat_*` and
//! `D_lat_*` without the job prefix (percentiles of several jobs cannot be merged from fio's JSON).

use super::text::{snake, Metrics};
use super::{Adapter, ParseError, ToolOutput};
use crate::workload::{Better, Primary, WorkloadResult};
use serde_json::Value;

pub struct Fio;

const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];
const PERCENTILES: [(&str, &str); 4] = [
    ("50.000000", "p50"),
    ("95.000000", "p95"),
    ("99.000000", "p99"),
    ("99.900000", "p99_9"),
];

impl Adapter for Fio {
    fn name(&self) -> &'static str {
        "fio"
    }
    fn programs(&self) -> &[&'static str] {
        &["fio"]
    }
    fn debian_package(&self) -> &'static str {
        "fio"
    }
    fn primary(&self) -> Primary {
        Primary {
            throughput: &["read_iops", "write_iops", "trim_iops"],
            latency: &["read_clat_p99_us", "write_clat_p99_us", "trim_clat_p99_us"],
            latency_histogram: None,
        }
    }

    fn output_files(&self, args: &[String]) -> Vec<String> {
        super::option(args, "--output", None).into_iter().collect()
    }

    fn parse(&self, out: &ToolOutput) -> Result<WorkloadResult, ParseError> {
        let json_text = match out.option("--output", None) {
            Some(f) => out.read_file(&f)?,
            None => out.stdout.clone(),
        };
        let Some(doc) = first_json(&json_text) else {
            let msg = super::text::error_message(&out.all_text(), &["fio: ", "error"]);
            return Err(ParseError::with_raw(
                format!("no JSON report found (run fio with --output-format=json): {msg}"),
                &format!("{json_text}\n{}", out.stderr),
            ));
        };
        let Some(jobs) = doc.get("jobs").and_then(Value::as_array) else {
            return Err(ParseError::with_raw("the JSON report has no `jobs` list", &json_text));
        };
        let errors: Vec<String> = jobs
            .iter()
            .filter(|j| j.get("error").and_then(Value::as_i64).unwrap_or(0) != 0)
            .map(|j| format!("job {} error {}", j["jobname"].as_str().unwrap_or("?"), j["error"]))
            .collect();
        if !errors.is_empty() {
            let msg = super::text::error_message(&out.stderr, &["err=", "error"]);
            return Err(ParseError::with_raw(format!("{}: {msg}", errors.join(", ")), &out.stderr));
        }
        let names = job_names(jobs);
        let mut m = Metrics::default();
        let mut totals = [(0.0, 0.0, false); 3];
        for (job, name) in jobs.iter().zip(&names) {
            for (d, dir) in DIRECTIONS.iter().enumerate() {
                let Some(x) = job.get(*dir) else { continue };
                if num(x, "total_ios").unwrap_or(0.0) == 0.0 && num(x, "io_bytes").unwrap_or(0.0) == 0.0 {
                    continue;
                }
                let iops = num(x, "iops");
                let bw = num(x, "bw_bytes").map(|b| b / 1048576.0);
                m.opt(format!("{name}_{dir}_iops"), "IO/s", iops, Better::Higher);
                m.opt(format!("{name}_{dir}_bw_mibps"), "MiB/s", bw, Better::Higher);
                totals[d].0 += iops.unwrap_or(0.0);
                totals[d].1 += bw.unwrap_or(0.0);
                totals[d].2 = true;
                for prefix in [name.clone(), String::new()] {
                    if prefix.is_empty() && jobs.len() != 1 {
                        continue;
                    }
                    let p = if prefix.is_empty() { String::new() } else { format!("{prefix}_") };
                    latencies(&mut m, &format!("{p}{dir}"), x);
                }
            }
            m.opt(format!("{name}_usr_cpu_pct"), "%", num(job, "usr_cpu"), Better::Lower);
            m.opt(format!("{name}_sys_cpu_pct"), "%", num(job, "sys_cpu"), Better::Lower);
        }
        for (d, dir) in DIRECTIONS.iter().enumerate() {
            if totals[d].2 {
                m.push(format!("{dir}_iops"), "IO/s", totals[d].0, Better::Higher);
                m.push(format!("{dir}_bw_mibps"), "MiB/s", totals[d].1, Better::Higher);
            }
        }
        m.finish("fio job figures", &json_text)
    }
}

/// clat and lat (ns in the JSON) → mean and percentiles in µs.
fn latencies(m: &mut Metrics, prefix: &str, x: &Value) {
    for kind in ["clat", "lat"] {
        let Some(l) = x.get(format!("{kind}_ns")) else {
            continue;
        };
        if num(l, "N").unwrap_or(0.0) == 0.0 {
            continue;
        }
        m.opt(
            format!("{prefix}_{kind}_mean_us"),
            "us",
            num(l, "mean").map(|v| v / 1000.0),
            Better::Lower,
        );
        if let Some(p) = l.get("percentile") {
            for (key, label) in PERCENTILES {
                m.opt(
                    format!("{prefix}_{kind}_{label}_us"),
                    "us",
                    num(p, key).map(|v| v / 1000.0),
                    Better::Lower,
                );
            }
        }
    }
}

fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

/// Job names as metric prefixes; a repeated name (numjobs > 1) gets `_0`, `_1`, ...
fn job_names(jobs: &[Value]) -> Vec<String> {
    let raw: Vec<String> = jobs.iter().map(|j| snake(j["jobname"].as_str().unwrap_or("job"))).collect();
    let mut seen = std::collections::HashMap::new();
    raw.iter()
        .map(|n| {
            if raw.iter().filter(|x| *x == n).count() == 1 {
                return n.clone();
            }
            let i = seen.entry(n.clone()).or_insert(0);
            *i += 1;
            format!("{n}_{}", *i - 1)
        })
        .collect()
}

/// The first JSON object in `text` (fio may print notes before it on stdout).
pub fn first_json(text: &str) -> Option<Value> {
    let mut from = 0;
    while let Some(off) = text[from..].find('{') {
        let start = from + off;
        let mut it = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        if let Some(Ok(v)) = it.next() {
            if v.is_object() {
                return Some(v);
            }
        }
        from = start + 1;
    }
    None
}
