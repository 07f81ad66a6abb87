//! stress-ng: the `--yaml FILE` metrics (preferred) or the `--metrics-brief` / `--metrics` text
//! (stderr). Per stressor S: `S_bogo_ops`, `S_bogo_ops_per_s` (real time), `S_bogo_ops_per_cpu_s`
//! (usr+sys time), `S_wall_time_s`, `S_user_time_s`, `S_system_time_s`; from YAML also
//! `S_cpu_usage_pct` (per instance), `S_max_rss_mb` (MiB) and the stressor's extra metrics (stream:
//! `S_memory_read_rate_mib_per_s`, ... — stress-ng's "MB" is 2^20 bytes — and
//! `S_memory_rate_mflop_per_s` in MFLOP/s). A figure that is not a number, a YAML file without its
//! closing `...` or a metrics table without the `successful run completed` line after it (output
//! cut short) fails the trial.

use super::text::{excerpt, number, snake, Metrics};
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
        // Declared once, with its key figures, in workload/figures.rs.
        crate::workload::figures::STRESS_NG.primary
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
            let yaml = out.read_file(&file)?;
            let kept = format!("{yaml}\n{text}");
            parse_yaml(&yaml, &mut m).map_err(|why| ParseError::with_raw(why, &kept))?;
            return m.finish("stress-ng metrics (metrics: list in the YAML file)", &kept);
        }
        parse_text(&text, &mut m).map_err(|why| ParseError::with_raw(why, &text))?;
        m.finish("stress-ng metrics (run it with --metrics-brief or --yaml FILE)", &text)
    }
}

/// The `metrics:` list of stress-ng's YAML: `- stressor: cpu` then `key: value` lines. Every value
/// must be a number, and the document must end with `...` (else it was cut short).
pub fn parse_yaml(yaml: &str, m: &mut Metrics) -> Result<(), String> {
    let mut in_metrics = false;
    let mut stressor: Option<String> = None;
    let mut ended = false;
    for line in yaml.lines() {
        if line.trim_end() == "..." {
            ended = true;
            break;
        }
        if !line.starts_with(' ') && !line.starts_with('-') && !line.trim().is_empty() {
            in_metrics = line.trim_end() == "metrics:";
            stressor = None;
            continue;
        }
        if !in_metrics || line.trim().is_empty() {
            continue;
        }
        let l = line.trim().trim_start_matches("- ");
        let Some((key, value)) = l.split_once(':') else {
            return Err(format!("stress-ng: unexpected line in the YAML metrics: `{}`", excerpt(l)));
        };
        let (key, value) = (key.trim(), value.trim());
        if key == "stressor" {
            stressor = Some(snake(value.trim_matches(['\'', '"'])));
            continue;
        }
        let Some(s) = &stressor else {
            return Err(format!("stress-ng: `{key}` before any `stressor:` in the YAML metrics"));
        };
        let Some(v) = number(value) else {
            return Err(format!("stress-ng: `{s}` `{key}` is not a number: `{}`", excerpt(value)));
        };
        let (name, unit, better) = match key {
            "bogo-ops" => ("bogo_ops".to_string(), "ops", Better::Higher),
            "bogo-ops-per-second-real-time" => ("bogo_ops_per_s".into(), "ops/s", Better::Higher),
            "bogo-ops-per-second-usr-sys-time" => ("bogo_ops_per_cpu_s".into(), "ops/s", Better::Higher),
            "wall-clock-time" => ("wall_time_s".into(), "s", Better::Neither),
            "user-time" => ("user_time_s".into(), "s", Better::Neither),
            "system-time" => ("system_time_s".into(), "s", Better::Neither),
            "cpu-usage-per-instance" => ("cpu_usage_pct".into(), "%", Better::Neither),
            // KiB in the YAML; the metric keeps its name and is MiB.
            "max-rss" => {
                m.push(format!("{s}_max_rss_mb"), "MiB", v / 1024.0, Better::Lower);
                continue;
            }
            other => misc_name(other),
        };
        m.push(format!("{s}_{name}"), unit, v, better);
    }
    if !ended {
        return Err("stress-ng: the YAML report is cut short (no closing `...`)".into());
    }
    Ok(())
}

/// A stressor's own metric (`memory-read-rate-mb-per-sec`) → name, unit, direction.
fn misc_name(key: &str) -> (String, &'static str, Better) {
    let k = snake(key);
    if let Some(base) = k.strip_suffix("_mb_per_sec") {
        // stress-ng's MB is 2^20 bytes (`#define MB (1ULL << 20)`).
        return (format!("{base}_mib_per_s"), "MiB/s", Better::Higher);
    }
    if let Some(base) = k.strip_suffix("_mflop_per_sec") {
        return (format!("{base}_mflop_per_s"), "MFLOP/s", Better::Higher);
    }
    if let Some(base) = k.strip_suffix("_per_sec") {
        return (format!("{base}_per_s"), "1/s", Better::Higher);
    }
    (k, "", Better::Neither)
}

/// The metrics table of `--metrics-brief` / `--metrics`: `stress-ng: metrc: [PID] cpu 4540 2.00
/// 2.22 0.00 2267.28 2037.40` rows (`info:` in older versions) after the two header lines. Each row
/// of a `metrc:` table must hold six numbers; the table ends at `miscellaneous metrics:` or at
/// another kind of line, and the run's `successful run completed` line must follow it.
pub fn parse_text(text: &str, m: &mut Metrics) -> Result<(), String> {
    let mut tag: Option<&str> = None;
    let mut after_table = false;
    for line in text.lines() {
        let Some((head, rest)) = line.split_once("] ") else {
            continue;
        };
        let line_tag = ["metrc:", "info:"].into_iter().find(|t| head.contains(t));
        match tag {
            None => {
                if line_tag.is_some() && rest.trim_start().starts_with("(secs)") {
                    tag = line_tag;
                }
                continue;
            }
            Some(_) if after_table => {}
            Some(t) => {
                let words: Vec<&str> = rest.split_whitespace().collect();
                let row = words.len() >= 7 && words[1..7].iter().any(|w| w.starts_with(|c: char| c.is_ascii_digit()));
                if line_tag != Some(t) || rest.trim() == "miscellaneous metrics:" || (t == "info:" && !row) {
                    after_table = true;
                } else {
                    table_row(&words, m)?;
                    continue;
                }
            }
        }
        if rest.contains("successful run completed") {
            return Ok(());
        }
    }
    match tag {
        None => Ok(()),
        Some(_) => Err("stress-ng: the output is cut short: no `successful run completed` line after the metrics".into()),
    }
}

/// One stressor's row: name, bogo ops, real, usr and sys time, bogo ops/s real and usr+sys.
fn table_row(words: &[&str], m: &mut Metrics) -> Result<(), String> {
    let name = words.first().copied().unwrap_or_default();
    let vals: Vec<f64> = words.iter().skip(1).take(6).filter_map(|w| number(w)).collect();
    if vals.len() < 6 {
        return Err(format!(
            "stress-ng: the metrics of `{name}` are not six numbers: `{}`",
            excerpt(&words.join(" "))
        ));
    }
    let s = snake(name);
    m.push(format!("{s}_bogo_ops"), "ops", vals[0], Better::Higher);
    m.push(format!("{s}_wall_time_s"), "s", vals[1], Better::Neither);
    m.push(format!("{s}_user_time_s"), "s", vals[2], Better::Neither);
    m.push(format!("{s}_system_time_s"), "s", vals[3], Better::Neither);
    m.push(format!("{s}_bogo_ops_per_s"), "ops/s", vals[4], Better::Higher);
    m.push(format!("{s}_bogo_ops_per_cpu_s"), "ops/s", vals[5], Better::Higher);
    Ok(())
}
