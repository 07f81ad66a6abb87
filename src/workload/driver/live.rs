//! The live line `perflab load` prints on stderr once a second.

use super::interval::Tick;
use std::io::Write;

/// `[   3s]      12345 ops/s  p99     0.09 ms  errors 0/s`, over the previous line: the operations
/// that succeeded, their p99, and apart the ones that failed, each per second.
pub fn print(t: &Tick, what: &str) {
    eprint!("\r{}", line(t, what));
    let _ = std::io::stderr().flush();
}

/// The text of the live line.
pub fn line(t: &Tick, what: &str) -> String {
    let p99 = if t.p99_ms.is_finite() {
        format!("{:.2} ms", t.p99_ms)
    } else {
        "-".into()
    };
    format!(
        "[{:>4.0}s] {:>10.0} {what}/s  p99 {p99:>10}  errors {:<8}",
        t.t_s + 1.0,
        t.requests_per_s,
        format!("{:.0}/s", t.errors as f64 / t.span_s.max(1e-3))
    )
}

/// What `perflab load <kind>` prints of a finished load, and whether it failed.
pub trait LoadOutcome {
    /// The `--json` object.
    fn json(&self) -> serde_json::Value;
    /// The human summary (stdout).
    fn summary(&self) -> String;
    /// An operation failed or nothing was measured: exit code 1.
    fn failed(&self) -> bool;
}

/// The options every `perflab load <kind>` takes besides the kind's settings (flattened into
/// each subcommand by the registry's `LoadCommand`).
#[derive(clap::Args, Clone, Debug)]
pub struct LoadFlags {
    /// How long to measure (e.g. 10s)
    #[arg(short = 'd', long, default_value = "10s")]
    pub duration: String,
    /// Warm-up before measuring (e.g. 1s)
    #[arg(long)]
    pub warmup: Option<String>,
    /// Print the result as JSON (its schema: docs/load.md)
    #[arg(long)]
    pub json: bool,
    /// No live progress line
    #[arg(short, long)]
    pub quiet: bool,
    /// Run the load as a one-trial run of the runner and serve its live page, events and /metrics
    /// meanwhile (default 127.0.0.1 and a free port, printed at the start; another address than
    /// loopback needs the token printed then); the run is stored under --runs-dir. Not with --json
    #[arg(long, value_name = "ADDR:PORT", num_args = 0..=1, require_equals = true, default_missing_value = "127.0.0.1:0")]
    pub live: Option<String>,
    /// With --live: where the run directory is created
    #[arg(long, value_name = "DIR", default_value = "runs", requires = "live")]
    pub runs_dir: std::path::PathBuf,
}

impl LoadFlags {
    /// `--duration` and `--warmup`, checked ([`durations`]).
    pub fn durations(&self) -> anyhow::Result<(std::time::Duration, std::time::Duration)> {
        durations(&self.duration, self.warmup.as_deref())
    }
}

/// `--duration` (at least [`crate::util::duration::MIN_MEASURED`]) and `--warmup` (0 when not
/// given), or bad input naming the option: checked before anything is prepared.
pub fn durations(duration: &str, warmup: Option<&str>) -> anyhow::Result<(std::time::Duration, std::time::Duration)> {
    let d = crate::util::duration::measured(duration, "--duration").map_err(crate::error::usage)?;
    let w = warmup
        .map(crate::util::duration::parse)
        .transpose()
        .map_err(|e| crate::error::usage(format!("--warmup: {e}")))?
        .unwrap_or_default();
    Ok((d, w))
}

/// Run one load from the command line: parse the durations, stop on SIGINT/SIGTERM, print the live
/// line, then the summary or the JSON; the exit code is 130 when interrupted, 1 when the load
/// failed, 0 otherwise (2, bad input, comes back as a usage error).
pub fn run_load<R: LoadOutcome>(
    o: &LoadFlags,
    unit: &'static str,
    engine: impl FnOnce(std::time::Duration, std::time::Duration, &crate::util::Cancel, super::coordinator::Hooks) -> anyhow::Result<R>,
) -> anyhow::Result<i32> {
    let (duration, warmup) = o.durations()?;
    let cancel = crate::util::Cancel::on_signals()?;
    let live = !o.quiet && !o.json;
    let mut on_tick = |t: &Tick, _: &hdrhistogram::Histogram<u64>| {
        if live {
            print(t, unit);
        }
    };
    let hooks = super::coordinator::Hooks {
        on_load_start: &mut || {},
        on_tick: &mut on_tick,
    };
    let report = engine(warmup, duration, &cancel, hooks)?;
    if live {
        eprintln!();
    }
    if o.json {
        println!("{}", serde_json::to_string_pretty(&report.json())?);
    } else {
        print!("{}", report.summary());
    }
    Ok(if cancel.is_cancelled() {
        130
    } else if report.failed() {
        1
    } else {
        0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_live_line_counts_what_succeeded_and_the_errors_apart() {
        // A second with no transaction committed and 76 failed: 0 trx/s, 76 errors/s.
        let t = Tick {
            t_s: 2.0,
            span_s: 1.0,
            responses: 0,
            errors: 76,
            requests_per_s: 0.0,
            p50_ms: f64::NAN,
            p99_ms: f64::NAN,
        };
        let l = line(&t, "trx");
        assert!(l.contains("         0 trx/s"), "{l}");
        assert!(l.contains("errors 76/s"), "{l}");
        // The last, partial second: its errors per second over its own length.
        let t = Tick {
            span_s: 0.5,
            errors: 10,
            responses: 100,
            requests_per_s: 200.0,
            p99_ms: 1.5,
            ..t
        };
        let l = line(&t, "trx");
        assert!(l.contains("       200 trx/s  p99    1.50 ms  errors 20/s"), "{l}");
    }
}
