//! fio `--output-format=json` (read from `--output=FILE` when given, else from stdout after any
//! notes). Per job J (the job name, `J_<n>` when names repeat) and direction D (read, write, trim)
//! that did I/O: `J_D_iops`, `J_D_bw_mibps`, `J_D_clat_mean_us`, `J_D_clat_p50_us`, `_p99_us`,
//! `_p99_9_us`, the same for `lat` (slat+clat) when `--lat_percentiles=1`; `J_usr_cpu_pct`,
//! `J_sys_cpu_pct`. Totals over jobs: `D_iops`, `D_bw_mibps`; with a single job also `D_clat_*` and
//! `D_lat_*` without the job prefix (percentiles of several jobs cannot be merged from fio's JSON).
//! A JSON report cut short, or a figure in it that is not a number, fails the trial.

use super::json::Report;
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
        // Declared once, with its key figures, in workload/figures.rs.
        crate::workload::figures::FIO.primary
    }

    fn output_files(&self, args: &[String]) -> Vec<String> {
        super::option(args, "--output", None).into_iter().collect()
    }

    fn parse(&self, out: &ToolOutput) -> Result<WorkloadResult, ParseError> {
        let json_text = match out.option("--output", None) {
            Some(f) => out.read_file(&f)?,
            None => out.stdout.clone(),
        };
        let doc = match super::json::document(&json_text) {
            Ok(Some(doc)) => doc,
            Ok(None) => {
                let msg = super::text::error_message(&out.all_text(), &["fio: ", "error"]);
                return Err(ParseError::with_raw(
                    format!("no JSON report found (run fio with --output-format=json): {msg}"),
                    &format!("{json_text}\n{}", out.stderr),
                ));
            }
            Err(e) => {
                return Err(ParseError::with_raw(
                    format!("fio: the JSON report is cut short or malformed: {e}"),
                    &format!("{json_text}\n{}", out.stderr),
                ))
            }
        };
        let rep = Report::new("fio", &json_text);
        let Some(jobs) = doc.get("jobs").and_then(Value::as_array) else {
            return Err(ParseError::with_raw("the JSON report has no `jobs` list", &json_text));
        };
        let names = job_names(jobs);
        let mut errors = Vec::new();
        for (job, name) in jobs.iter().zip(&names) {
            if rep.num(job, "error", &format!("job {name}"))?.is_some_and(|e| e != 0.0) {
                errors.push(format!("job {} error {}", job["jobname"].as_str().unwrap_or("?"), job["error"]));
            }
        }
        if !errors.is_empty() {
            let msg = super::text::error_message(&out.stderr, &["err=", "error"]);
            return Err(ParseError::with_raw(format!("{}: {msg}", errors.join(", ")), &out.stderr));
        }
        let mut m = Metrics::default();
        let mut totals = [(0.0, 0.0, false); 3];
        for (job, name) in jobs.iter().zip(&names) {
            for (d, dir) in DIRECTIONS.iter().enumerate() {
                let Some(x) = job.get(*dir) else { continue };
                let path = format!("job {name} {dir}");
                let ios = rep.num(x, "total_ios", &path)?;
                let bytes = rep.num(x, "io_bytes", &path)?;
                if ios.unwrap_or(0.0) == 0.0 && bytes.unwrap_or(0.0) == 0.0 {
                    continue; // no I/O in this direction
                }
                let iops = rep.need(x, "iops", &path)?;
                let bw = rep.need(x, "bw_bytes", &path)? / 1048576.0;
                m.push(format!("{name}_{dir}_iops"), "IO/s", iops, Better::Higher);
                m.push(format!("{name}_{dir}_bw_mibps"), "MiB/s", bw, Better::Higher);
                totals[d].0 += iops;
                totals[d].1 += bw;
                totals[d].2 = true;
                latencies(&rep, &mut m, &format!("{name}_{dir}"), x, &path)?;
                if jobs.len() == 1 {
                    latencies(&rep, &mut m, dir, x, &path)?;
                }
            }
            let path = format!("job {name}");
            m.opt(format!("{name}_usr_cpu_pct"), "%", rep.num(job, "usr_cpu", &path)?, Better::Lower);
            m.opt(format!("{name}_sys_cpu_pct"), "%", rep.num(job, "sys_cpu", &path)?, Better::Lower);
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
fn latencies(rep: &Report, m: &mut Metrics, prefix: &str, x: &Value, path: &str) -> Result<(), ParseError> {
    for kind in ["clat", "lat"] {
        let key = format!("{kind}_ns");
        let Some(l) = x.get(&key) else {
            continue;
        };
        let path = format!("{path}.{key}");
        if rep.num(l, "N", &path)?.unwrap_or(0.0) == 0.0 {
            continue; // not measured
        }
        let mean = rep.need(l, "mean", &path)?;
        m.push(format!("{prefix}_{kind}_mean_us"), "us", mean / 1000.0, Better::Lower);
        if let Some(p) = l.get("percentile") {
            let path = format!("{path}.percentile");
            for (key, label) in PERCENTILES {
                if let Some(v) = rep.num(p, key, &path)? {
                    m.push(format!("{prefix}_{kind}_{label}_us"), "us", v / 1000.0, Better::Lower);
                }
            }
        }
    }
    Ok(())
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
