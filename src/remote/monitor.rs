//! `perflab monitor --host DEST`: the live monitor of another machine. Its agent samples on its own
//! absolute schedule; each sample is placed on this machine's timeline with the measured clock
//! offset and shown as the local monitor shows it (the same table, CSV and JSON lines).

use crate::error::usage;
use crate::monitor::cli::MonitorArgs;
use crate::monitor::output::{jsonl, Table};
use crate::monitor::Sample;
use crate::plan::HostSpec;
use crate::remote::protocol::{Event, Request};
use crate::util::Cancel;
use std::time::{Duration, Instant};

/// The host `--host` and its ssh options name.
fn host(a: &MonitorArgs) -> anyhow::Result<HostSpec> {
    let r = &a.remote;
    let dest = r.host.clone().unwrap_or_default();
    if dest.trim().is_empty() || dest.starts_with('-') || dest.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(usage(format!(
            "--host `{}` is not an ssh destination (user@server, or an alias of ~/.ssh/config)",
            crate::util::text::clip(&dest)
        )));
    }
    if r.ssh_port == Some(0) {
        return Err(usage("--ssh-port must be a port number (1 to 65535)"));
    }
    if let Some(o) = r.ssh_option.iter().find(|o| !o.contains('=') || o.starts_with('-')) {
        return Err(usage(format!("--ssh-option `{o}`: write it as Key=value")));
    }
    for (flag, set) in [
        ("--match", a.pattern.is_some()),
        ("--disk", !a.disk.is_empty()),
        ("--net", !a.net.is_empty()),
        ("--partitions", a.partitions),
    ] {
        if set {
            return Err(usage(format!(
                "{flag} is not available with --host (the remote monitor samples every disk and interface)"
            )));
        }
    }
    Ok(HostSpec {
        name: dest.clone(),
        ssh: dest,
        port: r.ssh_port,
        identity: r.identity.clone(),
        ssh_options: r.ssh_option.clone(),
        perflab: r.remote_perflab.clone(),
    })
}

pub fn run(a: MonitorArgs) -> anyhow::Result<i32> {
    let h = host(&a)?;
    let (interval, duration, only) = crate::monitor::cli::timing(&a)?;
    let cancel = Cancel::on_signals()?;
    let mut ch = super::open(&h)?;
    let offset = ch.clock(super::CLOCK_EXCHANGES)?;
    eprintln!(
        "perflab: {}: {}; clock offset {:+.3} ms ± {:.3} ms",
        h.name,
        super::cli::describe(&ch.hello.facts, &ch.hello.perflab),
        offset.offset_s * 1e3,
        offset.uncertainty_s * 1e3
    );
    let (mut csv, mut jsonl_out, show_table) = crate::monitor::cli::outputs(&a)?;
    let _: serde_json::Value = ch.call(
        Request::Sample {
            interval_s: interval.as_secs_f64(),
            first_tick_unix_s: None,
            targets: vec![],
            pids: a.pid.clone(),
        },
        Duration::from_secs(20),
    )?;
    let start = Instant::now();
    let mut table: Option<Table> = None;
    let mut n = 0u64;
    let stdout = std::io::stdout();
    while !cancel.is_cancelled() {
        let ev = match ch.events().recv_timeout(Duration::from_millis(200)) {
            Ok(ev) => ev,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if start.elapsed() > interval * 3 + Duration::from_secs(10) && n == 0 {
                    anyhow::bail!("host `{}`: the agent sends no samples", h.name);
                }
                continue;
            }
            Err(_) => {
                return Err(ch
                    .lost()
                    .unwrap_or_else(|| anyhow::anyhow!("host `{}`: the connection to the agent was lost", h.name)))
            }
        };
        let Event::Sample {
            unix_s,
            elapsed_s,
            mut values,
        } = ev
        else {
            continue;
        };
        if let Some(o) = &only {
            values.retain(|(name, _)| crate::monitor::group_of(name).is_some_and(|g| o.contains(&g)));
        }
        let sample = Sample {
            unix_s: offset.to_controller(unix_s),
            elapsed_s,
            values,
        };
        if show_table {
            let shown = if a.cpu {
                sample.clone()
            } else {
                crate::monitor::cli::without_per_cpu(&sample)
            };
            let t = table.get_or_insert_with(|| Table::new(&shown));
            t.print(&shown, &mut stdout.lock())?;
        }
        if let Some(c) = csv.as_mut() {
            c.write(&sample)?;
        }
        if let Some(j) = jsonl_out.as_mut() {
            jsonl(&sample, j.as_mut())?;
        }
        n += 1;
        if a.count.is_some_and(|c| n >= c) || duration.is_some_and(|d| start.elapsed() + interval / 2 >= d) {
            break;
        }
    }
    ch.close()?;
    Ok(if cancel.is_cancelled() { 130 } else { 0 })
}
