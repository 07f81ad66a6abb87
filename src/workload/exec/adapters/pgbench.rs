//! pgbench (PostgreSQL 13+ text report). `transactions_per_s` (without initial connection time),
//! `transactions_incl_connect_per_s` (older versions' "including connections establishing", or
//! `-C`'s "including reconnection times"), `transactions`, `failed_transactions`,
//! `failed_transactions_pct`, `latency_avg_ms` and `latency_stddev_ms` when measured (`-P`, `-R`,
//! `-L`); without them pgbench derives the average from Little's law and it is reported as
//! `latency_avg_derived_ms`. `initial_connection_time_ms`; `-P` progress lines become the series
//! `tps` and `latency_avg_ms`. pgbench prints no percentiles (they need `-l` logs). A figure that
//! is not a number, or output that ends before the `tps =` line is complete, fails the trial.

use super::text::{shape, Metrics, Report};
use super::{Adapter, ParseError, ToolOutput};
use crate::workload::exec::process::Exit;
use crate::workload::{Better, Primary, SeriesPoint, WorkloadResult};

pub struct Pgbench;

impl Adapter for Pgbench {
    fn name(&self) -> &'static str {
        "pgbench"
    }
    fn programs(&self) -> &[&'static str] {
        &["pgbench"]
    }
    fn debian_package(&self) -> &'static str {
        "postgresql"
    }
    fn primary(&self) -> Primary {
        // Declared once, with its key figures, in workload/figures.rs.
        crate::workload::figures::PGBENCH.primary
    }

    fn parse(&self, out: &ToolOutput) -> Result<WorkloadResult, ParseError> {
        let text = out.all_text();
        let errors: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("pgbench: error:") || l.starts_with("pgbench: fatal:"))
            .collect();
        let rep = Report::new("pgbench", &text);
        let mut m = Metrics::default();
        tps(&rep, &mut m)?;
        if !m.has("transactions_per_s") && !m.has("transactions_incl_connect_per_s") {
            let why = if errors.is_empty() {
                match out.exit {
                    Exit::Code(0) => "no `tps =` line in pgbench's output".to_string(),
                    e => format!("{e}: {}", super::text::error_message(&text, &["error", "FATAL"])),
                }
            } else {
                errors.join("; ")
            };
            return Err(ParseError::with_raw(why, &text));
        }
        // "number of transactions actually processed: 1263" or "1000/1000" with -t.
        let label = "number of transactions actually processed:";
        if let Some(v) = rep.line(label) {
            let n = shape(v, "{}/{}").map_or_else(|| rep.read(label, v, "{}"), Ok)?;
            m.push("transactions", "transactions", n[0], Better::Neither);
        }
        if let Some(v) = rep.field("number of failed transactions:", "{} ({}%)")? {
            m.push("failed_transactions", "transactions", v[0], Better::Lower);
            m.push("failed_transactions_pct", "%", v[1], Better::Lower);
            if v[0] > 0.0 {
                m.result.errors.push(("failed_transactions".into(), v[0] as u64));
            }
        }
        let avg = rep.num("latency average =", "{} ms")?;
        match rep.num("latency stddev =", "{} ms")? {
            Some(sd) => {
                m.opt("latency_avg_ms", "ms", avg, Better::Lower);
                m.push("latency_stddev_ms", "ms", sd, Better::Lower);
            }
            None => m.opt("latency_avg_derived_ms", "ms", avg, Better::Lower),
        }
        m.opt(
            "initial_connection_time_ms",
            "ms",
            rep.num("initial connection time =", "{} ms")?,
            Better::Lower,
        );
        progress(&rep, &mut m)?;
        let mut r = m.result;
        if !errors.is_empty() {
            r.failure = Some(format!("pgbench: {}", errors.join("; ")));
        }
        Ok(r)
    }
}

/// `tps = 633.222047 (without initial connection time)`; before PostgreSQL 14 two lines, `(including
/// connections establishing)` then `(excluding connections establishing)`.
fn tps(rep: &Report, m: &mut Metrics) -> Result<(), ParseError> {
    for line in rep.text.lines().filter(|l| l.trim_start().starts_with("tps =")) {
        let value = line.trim_start()["tps =".len()..].trim();
        let Some((num, why)) = value.split_once(" (").filter(|(_, w)| w.ends_with(')')) else {
            return Err(rep.bad("tps", value));
        };
        let v = rep.read("tps", num, "{}")?[0];
        if why.starts_with("without initial connection time") || why.starts_with("excluding connections establishing") {
            m.push("transactions_per_s", "tps", v, Better::Higher);
        } else if why.starts_with("including") {
            m.push("transactions_incl_connect_per_s", "tps", v, Better::Higher);
        } else {
            return Err(rep.bad("tps", value));
        }
    }
    if rep.text.contains("(including connections establishing)") && !m.has("transactions_per_s") {
        return Err(rep.cut("no `tps = ... (excluding connections establishing)` line"));
    }
    Ok(())
}

/// `progress: 5.0 s, 1494.4 tps, lat 5.213 ms stddev 2.549, 0 failed` (`-P`) → series.
fn progress(rep: &Report, m: &mut Metrics) -> Result<(), ParseError> {
    for line in rep.text.lines().filter(|l| l.starts_with("progress:")) {
        let parts: Vec<&str> = line["progress:".len()..].split(", ").map(str::trim).collect();
        let t = rep.read("progress", parts[0], "{} s")?[0];
        let label = format!("progress at {t} s");
        let Some(tps) = parts.iter().find(|p| p.ends_with(" tps")) else {
            return Err(rep.bad(&label, line));
        };
        let tps = rep.read(&label, tps, "{} tps")?[0];
        m.result.series.push(SeriesPoint {
            t_s: t,
            name: "tps".into(),
            value: tps,
        });
        if let Some(lat) = parts.iter().find(|p| p.starts_with("lat ")) {
            let lat = lat.split(" stddev ").next().unwrap_or(lat);
            m.result.series.push(SeriesPoint {
                t_s: t,
                name: "latency_avg_ms".into(),
                value: rep.read(&label, lat, "lat {} ms")?[0],
            });
        }
    }
    Ok(())
}
