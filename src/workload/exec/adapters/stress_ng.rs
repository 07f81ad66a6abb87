//! stress-ng: the `--yaml FILE` metrics (preferred) or the `--metrics-brief` / `--metrics` text
//! (stderr). Per stressor S: `S_bogo_ops`, `S_bogo_ops_per_s` (real time), `S_bogo_ops_per_cpu_s`
//! (usr+sys time), `S_wall_time_s`, `S_user_time_s`, `S_system_time_s`; from YAML also
//! `S_cpu_usage_pct` (per instance), `S_max_rss_mb` and the stressor's extra metrics (stream:
//! `S_memory_read_rate_mib_per_s`, ... — stress-ng's "MB" is 2^20 bytes).

use super::text::{snake, Metrics};
use super::{Adapter, ParseError, ToolOutput};
use crate::workload::exec::process::Exit;
use crate::workload::{Better, Primary, WorkloadResult};

pub struct StressNg;

/// stress-ng's exit codes (stress-ng.h).
fn exit_meaning(code: i32) -> &'static str {
    match code {
        1 => "error",
        2 => "one or more stressors failed",
        3 => "a stressor ran out of a resource",
        4 => "a stressor is not implemented here",
        5 => "killed by a signal",
        6 => "a stressor called exit",
        7 => "metrics untrustworthy",
        _ => "unknown failure",
    }
}

impl Adapter for StressNg {
    fn name(&self) -> &'static str {
        "stress-ng"
    }
    fn programs(&self) -> &[&'static str] {
        &["stress-ng"]
    }
    fn debian_package(&self) -> &'static str {
        "stress-ng"
    }
    fn primary(&self) -> Primary {
        Primary {
            throughput: &["*_bogo_ops_per_s"],
            latency: &[],
            latency_histogram: None,
        }
    }

    fn output_files(&self, args: &[String]) -> Vec<String> {
        super::option(args, "--yaml", Some("-Y")).into_iter().collect()
    }

    fn parse(&self, out: &ToolOutput) -> Result<WorkloadResult, ParseError> {
        let text = out.all_text();
        if let Exit::Code(c) = out.exit {
            if c != 0 {
                let msg = super::text::error_message(&text, &["error", "fail", "unrecognized", "invalid", "FAIL"]);
                return Err(ParseError::with_raw(format!("exit status {c} ({}): {msg}", exit_meaning(c)), &text));
            }
        }
        let mut m = Metrics::default();
        if let Some(file) = out.option("--yaml", Some("-Y")) {
            parse_yaml(&out.read_file(&file)?, &mut m);
            return m.finish("stress-ng metrics (metrics: list in the YAML file)", &text);
        }
        parse_text(&text, &mut m);
        m.finish("stress-ng metrics (run it with --metrics-brief or --yaml FILE)", &text)
    }
}

/// The `metrics:` list of stress-ng's YAML: `- stressor: cpu` then `key: value` lines.
pub fn parse_yaml(yaml: &str, m: &mut Metrics) {
    let mut in_metrics = false;
    let mut stressor: Option<String> = None;
    for line in yaml.lines() {
        if !line.starts_with(' ') && !line.starts_with('-') && !line.trim().is_empty() {
            in_metrics = line.trim_end() == "metrics:";
            stressor = None;
            continue;
        }
        if !in_metrics {
            continue;
        }
        let l = line.trim().trim_start_matches("- ");
        let Some((key, value)) = l.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim().trim_matches(['\'', '"']));
        if key == "stressor" {
            stressor = Some(snake(value));
            continue;
        }
        let (Some(s), Ok(v)) = (&stressor, value.parse::<f64>()) else {
            continue;
        };
        let (name, unit, better) = match key {
            "bogo-ops" => ("bogo_ops".to_string(), "ops", Better::Higher),
            "bogo-ops-per-second-real-time" => ("bogo_ops_per_s".into(), "ops/s", Better::Higher),
            "bogo-ops-per-second-usr-sys-time" => ("bogo_ops_per_cpu_s".into(), "ops/s", Better::Higher),
            "wall-clock-time" => ("wall_time_s".into(), "s", Better::Neither),
            "user-time" => ("user_time_s".into(), "s", Better::Neither),
            "system-time" => ("system_time_s".into(), "s", Better::Neither),
            "cpu-usage-per-instance" => ("cpu_usage_pct".into(), "%", Better::Neither),
            "max-rss" => {
                m.push(format!("{s}_max_rss_mb"), "MB", v / 1024.0, Better::Lower);
                continue;
            }
            other => misc_name(other),
        };
        m.push(format!("{s}_{name}"), unit, v, better);
    }
}

/// A stressor's own metric (`memory-read-rate-mb-per-sec`) → name, unit, direction.
fn misc_name(key: &str) -> (String, &'static str, Better) {
    let k = snake(key);
    if let Some(base) = k.strip_suffix("_mb_per_sec") {
        // stress-ng's MB is 2^20 bytes (`#define MB (1ULL << 20)`).
        return (format!("{base}_mib_per_s"), "MiB/s", Better::Higher);
    }
    if let Some(base) = k.strip_suffix("_per_sec") {
        return (format!("{base}_per_s"), "1/s", Better::Higher);
    }
    (k, "", Better::Neither)
}

/// `stress-ng: metrc: [PID] cpu 13355 5.00 9.96 0.00 2670.03 1340.53` lines (also `info:` in older
/// versions). The header lines and non-numeric rows are skipped.
pub fn parse_text(text: &str, m: &mut Metrics) {
    for line in text.lines() {
        let Some(rest) = line.split_once("] ").map(|(_, r)| r) else {
            continue;
        };
        if !(line.contains("metrc:") || line.contains("info:")) {
            continue;
        }
        let mut words = rest.split_whitespace();
        let Some(name) = words.next() else { continue };
        let vals: Vec<f64> = words.map_while(|w| w.parse::<f64>().ok()).collect();
        if name.parse::<f64>().is_ok() || vals.len() < 6 {
            continue;
        }
        let s = snake(name);
        m.push(format!("{s}_bogo_ops"), "ops", vals[0], Better::Higher);
        m.push(format!("{s}_wall_time_s"), "s", vals[1], Better::Neither);
        m.push(format!("{s}_user_time_s"), "s", vals[2], Better::Neither);
        m.push(format!("{s}_system_time_s"), "s", vals[3], Better::Neither);
        m.push(format!("{s}_bogo_ops_per_s"), "ops/s", vals[4], Better::Higher);
        m.push(format!("{s}_bogo_ops_per_cpu_s"), "ops/s", vals[5], Better::Higher);
    }
}
