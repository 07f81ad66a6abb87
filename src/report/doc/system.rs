//! The system tables: Baseline / Under load / Peak / Recovery of the busiest point in the body (the
//! rows the load moved, and CPU and memory always, by resource), and every metric at every point in
//! one table in the appendix.

use super::table::{recovery_cell, system_table, table, trials, Block, PhaseCells, Section, RECOVERY_NOTE};
use crate::analysis::phases::{band, moved};
use crate::report::loaded::safe;
use crate::report::model::{PhaseRow, PointReport, ReportModel};

/// The title of the appendix section with every point's table (the body's table links to it).
pub const ALL_POINTS: &str = "System per point";

/// The rows the body's table keeps whether the load moved them or not: the CPU and the memory, as
/// every hand-written report shows them.
const ALWAYS: [&str; 2] = ["cpu_busy_pct", "mem_used_mb"];

const PHASES: &str = "Baseline = mean before the load, Under load = mean during it, Peak = its highest sample, \
     Recovery = mean after it.";

/// The order of the body's rows: each resource's headline first (CPU busy, memory used, each disk's
/// and interface's throughput), then the target's and the load generator's processes, then the
/// details (CPU user / system / iowait, run queue, load, context switches, page faults, swap, TCP
/// retransmits).
fn order(metric: &str) -> u8 {
    if ALWAYS.contains(&metric) {
        0
    } else if metric.starts_with("disk_") || metric.starts_with("net_") {
        1
    } else if metric.starts_with("proc_") {
        2
    } else if metric.starts_with("cpu_") || metric.starts_with("procs_") || metric.starts_with("load_") {
        3
    } else if metric.starts_with("mem_") || metric.starts_with("swap_") || metric.starts_with("page_") {
        4
    } else {
        5
    }
}

/// Did the load move the metric (its mean under load outside 10 % of its baseline, or a recovery
/// time was measured)?
pub fn load_moved(r: &PhaseRow) -> bool {
    r.recovery_s.is_some() || r.never_recovered || r.baseline.is_some_and(|b| moved(r.under_load, b, band(b, None)))
}

/// A row's cells for [`super::table::system_table`] (this machine's and every host's tables).
pub(super) fn cells(r: &PhaseRow) -> PhaseCells<'_> {
    (
        r.metric.as_str(),
        [r.baseline, r.under_load, r.peak, r.recovery],
        r.recovery_s,
        r.never_recovered,
    )
}

/// The point with the largest CPU busy under load, among those with system rows.
fn busiest(m: &ReportModel) -> Option<&PointReport> {
    let busy = |p: &PointReport| {
        p.system
            .iter()
            .find(|r| r.metric == "cpu_busy_pct")
            .and_then(|r| r.under_load)
            .unwrap_or(0.0)
    };
    m.points
        .iter()
        .filter(|p| !p.system.is_empty())
        .max_by(|a, b| busy(a).total_cmp(&busy(b)))
}

/// "the busiest point, x (n = 3 trials)", or "the only point (n = 3 trials)".
fn which_point(m: &ReportModel, p: &PointReport) -> String {
    let failed = if p.failed > 0 {
        format!(", {} failed", p.failed)
    } else {
        String::new()
    };
    let n = format!("n = {}", trials(p.trials));
    if m.points.len() == 1 || p.label.is_empty() {
        format!("the only point ({n}{failed})")
    } else {
        format!("the busiest point, {} ({n}{failed})", safe(&p.label))
    }
}

/// How many rows besides CPU busy and memory used [`headline`] keeps.
const HEADLINE_MOVED: usize = 3;

/// The relative move of a row under load: |under load − baseline| / |baseline| (infinite from a
/// zero baseline).
fn relative_move(r: &PhaseRow) -> f64 {
    match (r.baseline, r.under_load) {
        (Some(b), Some(l)) if b != 0.0 => ((l - b) / b).abs(),
        (Some(_), Some(l)) if l != 0.0 => f64::INFINITY,
        _ => 0.0,
    }
}

/// The busiest point and its headline rows, for a table across experiments: CPU busy and memory
/// used, and the three disk, interface or process rows the load moved most (relative to their
/// baseline); a receive row stands for its interface's transmit row where both read the same.
pub fn headline(m: &ReportModel) -> Option<(&PointReport, Vec<&PhaseRow>)> {
    let p = busiest(m)?;
    let mut moved: Vec<&PhaseRow> = p
        .system
        .iter()
        .filter(|r| !ALWAYS.contains(&r.metric.as_str()) && order(&r.metric) <= 2 && load_moved(r))
        .collect();
    moved.sort_by(|a, b| relative_move(b).total_cmp(&relative_move(a)).then(a.metric.cmp(&b.metric)));
    let same =
        |a: &PhaseRow, b: &PhaseRow| a.metric.replace("_tx_", "_rx_") == b.metric.replace("_tx_", "_rx_") && a.under_load == b.under_load;
    let mut rows: Vec<&PhaseRow> = p.system.iter().filter(|r| ALWAYS.contains(&r.metric.as_str())).collect();
    let mut kept = 0;
    for r in moved {
        if kept < HEADLINE_MOVED && !rows.iter().any(|k| same(k, r)) {
            rows.push(r);
            kept += 1;
        }
    }
    rows.sort_by_key(|r| order(&r.metric));
    Some((p, rows))
}

/// The busiest device of the resource the point's workload exercises (its interface for a network
/// load, its disk for a disk load), shown whether or not the load moved it: a busy background can
/// hide the move within the baseline's noise (another program's traffic on the same interface
/// before the load), or move another device of the resource (a trickle on `eth0`) while the one
/// the plan loaded (`lo`) reads as unmoved; the table still shows the resource the plan loaded.
/// None when the workload has no such resource or every device of it carried nothing.
fn loaded_resource(p: &PointReport) -> Option<&PhaseRow> {
    let prefix = crate::model::figures::of(&p.workload)
        .map(|f| f.resource)
        .filter(|r| !r.is_empty())?;
    let of_it = |r: &&PhaseRow| r.metric.starts_with(prefix) && !p.idle_devices.contains(&r.metric);
    p.system
        .iter()
        .filter(of_it)
        .filter(|r| r.under_load.is_some_and(|v| v > 0.0))
        .max_by(|a, b| a.under_load.unwrap_or(0.0).total_cmp(&b.under_load.unwrap_or(0.0)))
}

/// The body's system table: the busiest point's rows the load moved, and CPU and memory, grouped
/// by resource, the most moved first in each; the others named in one line, with a link to every point's full table.
pub fn summary(m: &ReportModel) -> Option<Section> {
    let p = busiest(m)?;
    let mut rows: Vec<&PhaseRow> = p
        .system
        .iter()
        .filter(|r| ALWAYS.contains(&r.metric.as_str()) || load_moved(r))
        .collect();
    if let Some(r) = loaded_resource(p).filter(|r| !rows.iter().any(|k| k.metric == r.metric)) {
        rows.push(r);
    }
    // By resource; within one, what the load moved most first (CPU before memory always).
    rows.sort_by(|a, b| {
        let always = |r: &PhaseRow| ALWAYS.iter().position(|m| *m == r.metric);
        order(&a.metric)
            .cmp(&order(&b.metric))
            .then(always(a).cmp(&always(b)))
            .then(relative_move(b).total_cmp(&relative_move(a)))
    });
    let still: Vec<&str> = p
        .system
        .iter()
        .filter(|r| !rows.iter().any(|k| k.metric == r.metric))
        .map(|r| r.metric.as_str())
        .collect();
    let every = if m.points.len() > 1 {
        "Every metric at every point:"
    } else {
        "Every metric:"
    };
    // The table first (the first screen is short), its caption under it.
    let mut blocks = vec![
        system_table(rows.into_iter().map(cells)),
        Block::Link {
            text: format!("Above: {}. {PHASES} {RECOVERY_NOTE} {every}", which_point(m, p)),
            section: ALL_POINTS.into(),
        },
    ];
    let mut left = Vec::new();
    if !still.is_empty() {
        left.push(format!("Not moved by the load: {}.", still.join(", ")));
    }
    if !p.idle_devices.is_empty() {
        left.push(format!("Carried nothing: {}.", p.idle_devices.join(", ")));
    }
    if !left.is_empty() {
        blocks.push(Block::Para(safe(&left.join(" "))));
    }
    Some(Section::new("System under load", blocks))
}

/// One table of every point's system rows (a column for the point), devices and interfaces that
/// carried nothing named once, and the trial charts.
pub fn all_points(m: &ReportModel, charts: &[(String, String)]) -> Section {
    let mut rows = Vec::new();
    for p in m.points.iter().filter(|p| !p.system.is_empty()) {
        for r in &p.system {
            let (metric, [b, l, k, rec], s, never) = cells(r);
            let mut row = vec![safe(&p.label), metric.to_string()];
            row.extend([b, l, k, rec].map(super::table::opt));
            row.push(recovery_cell(s, never));
            rows.push(row);
        }
    }
    let mut blocks = vec![
        Block::Para(format!(
            "Over all the point's trials. {PHASES} {RECOVERY_NOTE} In the trial charts the shading marks the phases: \
             blue baseline, yellow warmup, orange load, green recovery."
        )),
        table(
            &["point", "metric", "Baseline", "Under load", "Peak", "Recovery", "recovery time"],
            rows,
        ),
    ];
    blocks.extend(idle_devices(m));
    blocks.extend(super::table::chart_blocks(charts, "trial_"));
    Section::new(ALL_POINTS, blocks)
}

/// The disks and interfaces left out as they carried nothing: once when the same at every point,
/// else per point.
fn idle_devices(m: &ReportModel) -> Option<Block> {
    let points: Vec<&PointReport> = m.points.iter().filter(|p| !p.system.is_empty()).collect();
    let first = &points.first()?.idle_devices;
    if points.iter().all(|p| p.idle_devices == *first) {
        return (!first.is_empty()).then(|| {
            Block::Para(format!(
                "Left out, as they carried nothing at any point: {}.",
                safe(&first.join(", "))
            ))
        });
    }
    let each: Vec<String> = points
        .iter()
        .filter(|p| !p.idle_devices.is_empty())
        .map(|p| format!("at {}: {}", p.label, p.idle_devices.join(", ")))
        .collect();
    Some(Block::Para(safe(&format!(
        "Left out, as they carried nothing: {}.",
        each.join("; ")
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(metric: &str, baseline: f64, under_load: f64) -> PhaseRow {
        PhaseRow {
            metric: metric.into(),
            baseline: Some(baseline),
            under_load: Some(under_load),
            peak: Some(under_load),
            recovery: Some(baseline),
            recovery_s: None,
            never_recovered: false,
        }
    }

    fn point(workload: &str, system: Vec<PhaseRow>) -> PointReport {
        PointReport {
            workload: workload.into(),
            system,
            idle_devices: vec!["net_eth0_rx_mbitps".into()],
            ..Default::default()
        }
    }

    #[test]
    fn a_network_load_keeps_its_busiest_interface_where_the_background_hid_the_move() {
        // Loopback already busy before the load: under load within 10 % of the baseline.
        let rows = vec![
            row("cpu_busy_pct", 80.0, 99.0),
            row("net_lo_rx_mbitps", 30_000.0, 31_000.0),
            row("net_lo_tx_mbitps", 30_000.0, 31_500.0),
            row("net_eth0_rx_mbitps", 0.0, 0.0),
        ];
        assert_eq!(
            loaded_resource(&point("net", rows.clone())).map(|r| r.metric.as_str()),
            Some("net_lo_tx_mbitps")
        );
        // A CPU load has no such resource.
        assert!(loaded_resource(&point("cpu", rows.clone())).is_none());
        // Another interface moved by the background (a trickle on eth0) does not hide the one the
        // load ran on.
        let mut trickle = rows;
        trickle[3] = row("net_eth0_rx_mbitps", 0.02, 0.002);
        assert_eq!(
            loaded_resource(&point("net", trickle)).map(|r| r.metric.as_str()),
            Some("net_lo_tx_mbitps")
        );
    }
}
