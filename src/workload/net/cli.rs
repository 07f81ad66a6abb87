//! `perflab load net`: the settings as options, the common flags, the live line and the summary.

use super::config::{prepare, NetConfig, NetMode};
use crate::workload::driver::coordinator::Hooks;
use crate::workload::driver::interval::Tick;
use crate::workload::driver::live::LoadFlags;
use hdrhistogram::Histogram;
use std::io::Write;

/// The live line: `[   3s]   14.21 Gbit/s` (stream, udp) or transactions/s and p99 (rr, crr).
fn live(mode: NetMode, t: &Tick) {
    match mode {
        NetMode::Rr | NetMode::Crr => crate::workload::driver::live::print(t, "transactions"),
        NetMode::Stream | NetMode::Udp => {
            eprint!(
                "\r[{:>4.0}s] {:>10.3} Gbit/s  errors {:<6}",
                t.t_s + 1.0,
                t.requests_per_s * 8.0 / 1e9,
                t.errors
            );
            let _ = std::io::stderr().flush();
        }
    }
}

impl crate::workload::registry::spec::LoadRun for NetConfig {
    fn run(self, flags: LoadFlags) -> anyhow::Result<i32> {
        run(&self, &flags)
    }

    fn workload(self) -> anyhow::Result<toml::Table> {
        prepare(&self)?;
        crate::workload::registry::spec::as_table(&self)
    }
}

fn run(cfg: &NetConfig, flags: &LoadFlags) -> anyhow::Result<i32> {
    let p = prepare(cfg)?;
    let (duration, warmup) = flags.durations()?;
    let cancel = crate::util::Cancel::on_signals()?;
    let show = !flags.quiet && !flags.json;
    let mut on_tick = |t: &Tick, _: &Histogram<u64>| {
        if show {
            live(p.mode, t);
        }
    };
    let hooks = Hooks {
        on_load_start: &mut || {},
        on_tick: &mut on_tick,
    };
    let report = super::engine::run(&p, warmup, duration, &cancel, hooks)?;
    if show {
        eprintln!();
    }
    if flags.json {
        println!("{}", serde_json::to_string_pretty(&report.json())?);
    } else {
        print!("{}", report.summary());
    }
    let failure = report.failure();
    if let (Some(f), false) = (&failure, cancel.is_cancelled()) {
        eprintln!("{f}");
    }
    Ok(if cancel.is_cancelled() {
        130
    } else if failure.is_some() || report.measured.is_zero() {
        1
    } else {
        0
    })
}
