//! `report.csv` (one row per point × metric: the numbers of the metrics table, then the
//! percentiles the tool printed with only n, median, min and max). The tables of the store are not
//! copied: `perflab export RUN` writes them.

use super::{Exporter, Input, Sink};
use crate::report::loaded::safe;
use crate::report::model::ReportModel;

pub struct Csv;

impl Exporter for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }

    fn write(&self, input: &Input, sink: &mut dyn Sink) -> anyhow::Result<()> {
        let bytes = summary(input.model)?;
        sink.file("report.csv", &mut |w| w.write_all(&bytes))
    }
}

/// One row per point × metric: the same numbers as the metrics table; a percentile the tool
/// printed has n, its median over the trials, min and max, and no mean, sd, CI or CV.
fn summary(m: &ReportModel) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "point", "metric", "unit", "n", "mean", "median", "sd", "min", "max", "ci95", "cv_pct",
    ])?;
    let o = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    // A report of several experiments: each one's points, labelled with its plan.
    let parts: Vec<(String, &ReportModel)> = if m.experiments.is_empty() {
        vec![(String::new(), m)]
    } else {
        m.experiments
            .iter()
            .map(|e| (format!("{}: ", e.runs.first().map_or("", |r| r.plan.as_str())), e))
            .collect()
    };
    for (p, prefix) in parts.iter().flat_map(|(prefix, e)| e.points.iter().map(move |p| (p, prefix))) {
        let label = format!("{prefix}{}", p.label);
        for r in &p.metrics {
            let s = &r.summary;
            w.write_record([
                safe(&label),
                r.name.clone(),
                r.unit.clone(),
                s.n.to_string(),
                s.mean.to_string(),
                s.median.to_string(),
                s.sd.to_string(),
                s.min.to_string(),
                s.max.to_string(),
                o(s.ci95),
                o(s.cv_pct),
            ])?;
        }
        for r in &p.printed_percentiles {
            let (n, median, min, max) = (r.n.to_string(), r.median.to_string(), r.min.to_string(), r.max.to_string());
            w.write_record([&safe(&label), &r.name, &r.unit, &n, "", &median, "", &min, &max, "", ""])?;
        }
    }
    w.into_inner().map_err(|e| anyhow::anyhow!("cannot write report.csv: {e}"))
}
