//! The sections of a run with remote hosts (`report/hosts.rs`): every host's facts, each remote
//! host's system table per point with its charts, and, for `perflab compare` of runs made against
//! different machines, the machines side by side.

use super::table::{num, system_table, table, Block, Section};
use crate::report::hosts::{HostFacts, HostPoint};
use crate::report::loaded::safe;
use crate::report::model::ReportModel;

/// "+0.003 ms ± 0.035 ms" (before the run), or the range measured during the run with its worst
/// uncertainty ("+0.001 to +0.004 ms, ± 0.052 ms at worst (6 measurements)"), or "–" for this
/// machine.
fn offset(h: &HostFacts) -> String {
    if h.ssh.is_empty() && h.name == "local" {
        return "–".into();
    }
    if h.clock_measurements > 0 {
        let range = if (h.offset_max_ms - h.offset_min_ms).abs() < 5e-4 {
            format!("{:+.3} ms", h.offset_min_ms)
        } else {
            format!("{:+.3} to {:+.3} ms", h.offset_min_ms, h.offset_max_ms)
        };
        return format!(
            "{range}, ± {:.3} ms at worst ({} measurements)",
            h.worst_uncertainty_ms, h.clock_measurements
        );
    }
    format!("{:+.3} ms ± {:.3} ms", h.offset_ms, h.uncertainty_ms)
}

fn cpu(h: &HostFacts) -> String {
    match h.cpu_model.as_str() {
        "" => "–".into(),
        m => safe(m),
    }
}

/// One row per host of every run: name, machine, CPU, cores, memory, kernel, perflab, offset.
pub fn facts(m: &ReportModel) -> Option<Section> {
    if m.hosts.facts.is_empty() {
        return None;
    }
    let rows = m
        .hosts
        .facts
        .iter()
        .map(|h| {
            vec![
                safe(&h.run),
                safe(&h.name),
                safe(&h.hostname),
                cpu(h),
                h.cpus.to_string(),
                num(h.mem_total_mb),
                safe(&h.kernel),
                safe(&h.perflab_version),
                offset(h),
            ]
        })
        .collect();
    let header = [
        "run",
        "host",
        "hostname",
        "CPU model",
        "cores",
        "mem MB",
        "kernel",
        "perflab",
        "clock offset",
    ];
    Some(Section::new(
        "Hosts",
        vec![
            Block::Para(
                "The machines of the run, as each was found before the run started. A remote host's samples are placed \
                 on this machine's timeline by its clock offset (host minus local; ± half the best round trip), \
                 measured again at the start and the end of every trial: the column gives the range of those \
                 measurements and their worst uncertainty."
                    .into(),
            ),
            table(&header, rows),
        ],
    ))
}

fn point_table(p: &HostPoint) -> Block {
    system_table(
        p.system
            .iter()
            .map(|r| (r.metric.as_str(), [r.baseline, r.under_load, r.peak, r.recovery], r.recovery_s)),
    )
}

/// One section per remote host: Baseline / Under load / Peak / Recovery per point, and its charts.
pub fn per_host(m: &ReportModel, charts: &[(String, String)]) -> Vec<Section> {
    m.hosts
        .reports
        .iter()
        .filter(|r| !r.points.is_empty())
        .map(|r| {
            let mut blocks = vec![Block::Para(format!(
                "Sampled on `{}` (its system and, where the target ran there, the target's process tree), placed on this \
                 machine's timeline. Over each point's trials: Baseline = mean before load, Under load = mean during \
                 load, Peak = max during load, Recovery = mean after load; recovery time = worst seconds after the load \
                 ended until the metric was within 10 % of its baseline.",
                safe(&r.host)
            ))];
            for p in &r.points {
                blocks.push(Block::Para(format!("Point {} (n = {} trials):", safe(&p.label), p.trials)));
                blocks.push(point_table(p));
            }
            blocks.extend(
                r.charts
                    .iter()
                    .filter(|c| charts.iter().any(|(n, _)| n == *c))
                    .map(|c| Block::Chart(c.clone())),
            );
            Section::new(&format!("Host {}", safe(&r.host)), blocks)
        })
        .collect()
}

/// `perflab compare` of runs made against different machines: each run's machine side by side.
pub fn compared(m: &ReportModel) -> Option<Section> {
    let c = &m.hosts.compared;
    if c.len() < 2 {
        return None;
    }
    let fact = |name: &str, f: &dyn Fn(&HostFacts) -> String| {
        let mut row = vec![name.to_string()];
        row.extend(c.iter().map(f));
        row
    };
    let rows = vec![
        fact("host", &|h| safe(&h.name)),
        fact("hostname", &|h| safe(&h.hostname)),
        fact("CPU model", &cpu),
        fact("cores", &|h| h.cpus.to_string()),
        fact("mem MB", &|h| num(h.mem_total_mb)),
        fact("kernel", &|h| safe(&h.kernel)),
        fact("perflab", &|h| safe(&h.perflab_version)),
        fact("clock offset", &offset),
    ];
    let mut header = vec!["".to_string()];
    header.extend(c.iter().map(|h| safe(&h.run)));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    Some(Section::new(
        "Machines compared",
        vec![
            Block::Para("The machine each run measured (its remote host, else the one it ran on):".into()),
            table(&header, rows),
        ],
    ))
}
