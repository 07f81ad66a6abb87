//! `perflab profile`: `perf record` and a flame graph in one step, of processes, a cgroup or the
//! whole machine, for a duration or until Ctrl-C (which ends the recording at once and still
//! writes what it has).

use super::{CallGraph, Options, Recorder, Scope};
use crate::model::ProfileKind;
use crate::util::Cancel;
use anyhow::Context;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("scope").required(true).args(["pid", "cgroup", "system"])))]
pub struct ProfileArgs {
    /// Profile these processes (comma-separated) with their threads and the children they start
    #[arg(long, value_delimiter = ',', value_name = "PID")]
    pub pid: Vec<i32>,
    /// Profile every process of this cgroup (its path under /sys/fs/cgroup, e.g. /system.slice/nginx.service)
    #[arg(long, value_name = "PATH")]
    pub cgroup: Option<String>,
    /// Profile the whole machine
    #[arg(long)]
    pub system: bool,
    /// How long to record (Ctrl-C ends it earlier and still writes what it has)
    #[arg(short = 'd', long, default_value = "10s", value_parser = crate::util::duration::parse)]
    pub duration: Duration,
    /// Where to write the flame graph (SVG), or with --folded the folded stacks; `-` is stdout
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Write the folded stacks (`frame;frame;frame count` lines, FlameGraph's input) instead of an SVG
    #[arg(long)]
    pub folded: bool,
    /// On-CPU sampling frequency (Hz)
    #[arg(short = 'F', long, default_value_t = super::DEFAULT_FREQUENCY_HZ)]
    pub frequency: u32,
    /// How perf walks the stacks: fp (frame pointers) or dwarf (complete without frame pointers, heavier)
    #[arg(long, default_value = "fp", value_parser = ["fp", "dwarf"])]
    pub call_graph: String,
    /// Where the threads waited instead of where they ran: the stack of every switch off a CPU,
    /// weighed by the time off it (sched:sched_switch)
    #[arg(long)]
    pub off_cpu: bool,
}

/// Record, fold and write; exit code 130 when Ctrl-C ended the recording.
pub fn run(a: ProfileArgs) -> anyhow::Result<i32> {
    let scope = scope(&a)?;
    let kind = if a.off_cpu { ProfileKind::OffCpu } else { ProfileKind::OnCpu };
    if a.frequency == 0 || a.frequency > 10_000 {
        return Err(crate::error::usage("--frequency must be between 1 and 10000 Hz"));
    }
    if a.duration.is_zero() {
        return Err(crate::error::usage("--duration must be longer than 0s"));
    }
    let out = a
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(if a.folded { "profile.folded" } else { "flame.svg" }));
    // A place the output cannot go is refused before anything is recorded.
    if let Err(why) = crate::util::fs::check_output(&out) {
        return Err(crate::error::usage(format!("--output {}: {why}", out.display())));
    }
    if let Err(m) = super::availability(kind, &scope) {
        return Err(anyhow::anyhow!("cannot profile here: {m}"));
    }
    let cancel = Cancel::on_signals()?;
    let opts = Options {
        kind,
        scope: scope.clone(),
        frequency_hz: a.frequency,
        call_graph: CallGraph::parse(&a.call_graph).unwrap_or_default(),
    };
    let mut rec = Recorder::start(opts)?;
    let t0 = super::monotonic_now();
    rec.enable()?;
    let interrupted = cancel.sleep(a.duration);
    rec.disable()?;
    let p = rec.finish(t0)?;
    let body = if a.folded {
        p.folded(kind == ProfileKind::OffCpu)
    } else {
        let title = format!("{} profile: {}", kind.words(), scope.describe());
        let sub = format!("{:.1} s, {} samples", p.window.1 - p.window.0, p.total_samples());
        super::flame::svg(&p, &title, Some(sub), kind == ProfileKind::OffCpu)?
    };
    if out.as_os_str() == "-" {
        use std::io::Write;
        std::io::stdout().write_all(body.as_bytes())?;
    } else {
        std::fs::write(&out, body).with_context(|| format!("cannot write {}", out.display()))?;
    }
    let top = crate::model::profile::top_frames(&p.stacks, kind == ProfileKind::OffCpu, 1);
    let top = top
        .first()
        .map_or(String::new(), |f| format!("; hottest: {} ({:.0} % self)", f.frame, f.self_pct));
    eprintln!(
        "perflab profile: {} samples of {} over {:.1} s{top}{}",
        p.total_samples(),
        scope.describe(),
        p.window.1 - p.window.0,
        if out.as_os_str() == "-" {
            String::new()
        } else {
            format!(" -> {}", out.display())
        }
    );
    for n in &p.notes {
        eprintln!("perflab profile: note: {n}");
    }
    Ok(if interrupted { 130 } else { 0 })
}

/// The scope asked for, each named process or cgroup checked to exist.
fn scope(a: &ProfileArgs) -> anyhow::Result<Scope> {
    if a.system {
        return Ok(Scope::System);
    }
    if let Some(c) = &a.cgroup {
        let dir = std::path::Path::new("/sys/fs/cgroup").join(c.trim_start_matches('/'));
        if !dir.is_dir() {
            return Err(crate::error::usage(format!(
                "--cgroup {c}: no such cgroup ({} does not exist)",
                dir.display()
            )));
        }
        return Ok(Scope::Cgroup(c.clone()));
    }
    let mut pids = Vec::new();
    for &p in &a.pid {
        if p <= 0 || !std::path::Path::new(&format!("/proc/{p}")).exists() {
            return Err(crate::error::usage(format!("--pid {p}: no such process")));
        }
        for q in super::tree_of(p) {
            if !pids.contains(&q) {
                pids.push(q);
            }
        }
    }
    Ok(Scope::Processes(pids))
}
