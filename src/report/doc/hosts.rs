//! The sections of a run with remote hosts (`report/hosts.rs`): every host's facts, each remote
//! host's system table per point with its charts, and, for `perflab compare` of runs made against
//! different machines, the machines side by side.

use super::system::cells;
use super::table::{num, opt, recovery_cell, system_table, table, trials, Block, Section, RECOVERY_NOTE};
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

/// The point with the largest CPU busy under load on the host.
fn busiest(points: &[HostPoint]) -> Option<&HostPoint> {
    let busy = |p: &HostPoint| {
        p.system
            .iter()
            .find(|r| r.metric == "cpu_busy_pct")
            .and_then(|r| r.under_load)
            .unwrap_or(0.0)
    };
    points.iter().max_by(|a, b| busy(a).total_cmp(&busy(b)))
}

/// The appendix section's title for a host's every point.
fn all_points_title(host: &str) -> String {
    format!("Host {host} per point")
}

/// Per remote host, in the body: the busiest point's Baseline / Under load / Peak / Recovery table
/// and its charts; in the appendix: every point's rows in one table (a column for the point).
pub fn per_host(m: &ReportModel, charts: &[(String, String)]) -> Vec<Section> {
    let mut out = Vec::new();
    for r in m.hosts.reports.iter().filter(|r| !r.points.is_empty()) {
        let host = safe(&r.host);
        let Some(p) = busiest(&r.points) else { continue };
        let which = if r.points.len() == 1 {
            format!("The only point (n = {})", trials(p.trials))
        } else {
            format!("At the busiest point, {} (n = {})", safe(&p.label), trials(p.trials))
        };
        let mut blocks = vec![
            Block::Para(format!(
                "Sampled on `{host}` (its system and, where the target ran there, the target's process tree), placed \
                 on this machine's timeline. {which}: Baseline = mean before the load, Under load = mean during it, \
                 Peak = its highest sample, Recovery = mean after it. {RECOVERY_NOTE}"
            )),
            system_table(p.system.iter().map(cells)),
        ];
        if r.points.len() > 1 {
            blocks.push(Block::Link {
                text: "Every point:".into(),
                section: all_points_title(&host),
            });
        }
        blocks.extend(
            r.charts
                .iter()
                .filter(|c| charts.iter().any(|(n, _)| n == *c))
                .map(|c| Block::Chart(c.clone())),
        );
        out.push(Section::new(&format!("Host {host}"), blocks));
        if r.points.len() > 1 {
            let rows = r
                .points
                .iter()
                .flat_map(|p| {
                    p.system.iter().map(|row| {
                        let (metric, figures, s, never) = cells(row);
                        let mut v = vec![safe(&p.label), metric.to_string()];
                        v.extend(figures.map(opt));
                        v.push(recovery_cell(s, never));
                        v
                    })
                })
                .collect();
            let header = ["point", "metric", "Baseline", "Under load", "Peak", "Recovery", "recovery time"];
            out.push(Section::new(&all_points_title(&host), vec![table(&header, rows)]).in_appendix());
        }
    }
    out
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
