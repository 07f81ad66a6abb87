//! The live line `perflab load` prints on stderr once a second.

use super::interval::Tick;
use std::io::Write;

/// `[   3s]      12345 ops/s  p99     0.09 ms  errors 0`, over the previous line.
pub fn print(t: &Tick, what: &str) {
    let p99 = if t.p99_ms.is_finite() {
        format!("{:.2} ms", t.p99_ms)
    } else {
        "-".into()
    };
    eprint!(
        "\r[{:>4.0}s] {:>10.0} {what}/s  p99 {p99:>10}  errors {:<6}",
        t.t_s + 1.0,
        t.requests_per_s,
        t.errors
    );
    let _ = std::io::stderr().flush();
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

/// The options every `perflab load <kind>` takes.
pub struct LoadOptions<'a> {
    pub duration: &'a str,
    pub warmup: Option<&'a str>,
    pub json: bool,
    pub quiet: bool,
    /// What one operation is called on the live line (`ops`, `IO`).
    pub unit: &'static str,
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
    o: &LoadOptions,
    engine: impl FnOnce(std::time::Duration, std::time::Duration, &crate::util::Cancel, super::coordinator::Hooks) -> anyhow::Result<R>,
) -> anyhow::Result<i32> {
    let (duration, warmup) = durations(o.duration, o.warmup)?;
    let cancel = crate::util::Cancel::on_signals()?;
    let live = !o.quiet && !o.json;
    let mut on_tick = |t: &Tick, _: &hdrhistogram::Histogram<u64>| {
        if live {
            print(t, o.unit);
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
