//! The latency probes' section: per point and probe, the idle-vs-under-load table, the inflation
//! with the CI of the difference, the probes' own traffic, and the two charts.

use super::table::{chart_blocks, num, opt, table, Block, Section};
use crate::report::model::ReportModel;

/// None when the run had no probes.
pub fn section(m: &ReportModel, charts: &[(String, String)]) -> Option<Section> {
    if m.probes.is_empty() {
        return None;
    }
    let mut blocks = vec![Block::Para(
        "Each probe ran through every phase of every trial; a probe is counted in the phase it was sent in. \
         Latency figures are of the replies (ms); loss is timeouts and errors, failed is answers that said failure (a command's non-zero exit, an HTTP status of 400 or more), both % of the probes sent. \
         Inflation = median under load / median at baseline."
            .into(),
    )];
    for (i, p) in m.probes.iter().enumerate() {
        let at = if p.point.is_empty() {
            String::new()
        } else {
            format!(" at {}", p.point)
        };
        let mut text = format!(
            "Probe {} ({} {}){at}, {} trial(s); its own traffic {} packets/s, {} B/s.",
            p.probe,
            p.kind,
            p.target,
            p.trials,
            num(p.packets_per_s),
            num(p.bytes_per_s)
        );
        if let Some(x) = p.inflation {
            text.push_str(&format!(" Inflation ×{}.", num(x)));
        }
        if let (Some(d), Some((lo, hi))) = (p.diff_mean_ms, p.diff_ci95_ms) {
            text.push_str(&format!(
                " Mean under load − mean at baseline: {} ms (95 % CI {} to {} ms).",
                num(d),
                num(lo),
                num(hi)
            ));
        }
        blocks.push(Block::Para(crate::report::loaded::safe(&text)));
        let rows = p
            .phases
            .iter()
            .map(|ph| {
                let r = &ph.rtt;
                vec![
                    ph.phase.clone(),
                    ph.n.to_string(),
                    opt(r.min_ms),
                    opt(r.median_ms),
                    opt(r.mean_ms),
                    opt(r.p90_ms),
                    opt(r.p99_ms),
                    opt(r.max_ms),
                    opt(r.sd_ms),
                    num(ph.loss_pct),
                    num(ph.failed_pct),
                ]
            })
            .collect();
        blocks.push(table(
            &[
                "phase", "n", "min", "median", "mean", "p90", "p99", "max", "sd", "loss %", "failed %",
            ],
            rows,
        ));
        blocks.extend(chart_blocks(charts, &format!("probe_{i:02}_")));
    }
    Some(Section::new("Latency probes: idle vs under load", blocks))
}
