//! The `perflab monitor` command line.

use super::output::{jsonl, Csv, Table};
use super::{Group, MonitorConfig, ProcessSelector, Sampler};
use crate::error::usage;
use crate::util::Cancel;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
pub struct MonitorArgs {
    /// Sampling interval (e.g. 1s, 500ms; at least 10ms)
    #[arg(long, short, default_value = "1s")]
    pub interval: String,
    /// Stop after this long (e.g. 60s)
    #[arg(long, short)]
    pub duration: Option<String>,
    /// Stop after N samples
    #[arg(long, short)]
    pub count: Option<u64>,
    /// Write every sample to a CSV file (`-` for stdout)
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write every sample as a JSON line (`-` for stdout)
    #[arg(long, value_name = "FILE")]
    pub jsonl: Option<PathBuf>,
    /// Follow this process and its descendants (repeatable)
    #[arg(long, value_name = "PID")]
    pub pid: Vec<i32>,
    /// Follow every process whose command line matches this regex, with descendants
    #[arg(long = "match", value_name = "REGEX")]
    pub pattern: Option<String>,
    /// Show per-CPU busy % in the table (files always have every CPU)
    #[arg(long)]
    pub cpu: bool,
    /// Only this disk (repeatable), e.g. vda
    #[arg(long, value_name = "NAME")]
    pub disk: Vec<String>,
    /// Only this network interface (repeatable), e.g. eth0
    #[arg(long, value_name = "NAME")]
    pub net: Vec<String>,
    /// Only these groups: cpu,load,mem,disk,net,tcp,psi,temp,proc
    #[arg(long, value_name = "GROUPS")]
    pub only: Option<String>,
    /// Report partitions too, not only whole disks
    #[arg(long)]
    pub partitions: bool,
    /// No live table (only the files)
    #[arg(long, short)]
    pub quiet: bool,
    /// Serve the latest sample at http://ADDR:PORT/metrics in the OpenMetrics text format
    /// (127.0.0.1:PORT by default; any other address needs the token printed at the start)
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Option<String>,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// `perflab monitor --host`: sample another machine through its agent, over ssh.
#[derive(clap::Args, Debug, Default)]
pub struct RemoteArgs {
    /// Sample this host instead (an ssh destination: user@server, or an alias of ~/.ssh/config)
    #[arg(long, value_name = "DEST")]
    pub host: Option<String>,
    /// The host's ssh port
    #[arg(long, value_name = "PORT", requires = "host")]
    pub ssh_port: Option<u16>,
    /// The private key for the host (ssh -i)
    #[arg(long, value_name = "FILE", requires = "host")]
    pub identity: Option<String>,
    /// More ssh options, Key=value (repeatable)
    #[arg(long, value_name = "OPTION", requires = "host")]
    pub ssh_option: Vec<String>,
    /// The perflab to start on the host (default: the per-version cache, then perflab on its PATH)
    #[arg(long, value_name = "PATH", requires = "host")]
    pub remote_perflab: Option<String>,
}

/// The validated configuration and opened outputs.
struct Setup {
    cfg: MonitorConfig,
    duration: Option<Duration>,
    count: Option<u64>,
    csv: Option<Csv>,
    jsonl: Option<Box<dyn Write + Send>>,
    table: bool,
}

/// The options that say when to sample and what, checked: the interval (at least 10 ms), the
/// duration, `--count` (not 0) and the `--only` groups. `perflab monitor` and its `--host` form
/// both read them here.
pub fn timing(a: &MonitorArgs) -> anyhow::Result<(Duration, Option<Duration>, Option<Vec<Group>>)> {
    let interval = crate::util::duration::parse(&a.interval).map_err(|e| usage(format!("--interval: {e}")))?;
    if interval < Duration::from_millis(10) {
        return Err(usage(format!("--interval {} is too short: the minimum is 10ms", a.interval)));
    }
    let duration = a
        .duration
        .as_deref()
        .map(crate::util::duration::parse)
        .transpose()
        .map_err(|e| usage(format!("--duration: {e}")))?;
    if a.count == Some(0) {
        return Err(usage("--count 0 would sample nothing"));
    }
    if let Some(d) = duration.filter(|d| *d < interval) {
        return Err(usage(format!(
            "--duration {} is shorter than one --interval ({}): nothing would be sampled",
            crate::util::duration::format(d),
            crate::util::duration::format(interval)
        )));
    }
    let only = match &a.only {
        None => None,
        Some(list) => Some(
            list.split(',')
                .map(|g| {
                    Group::parse(g)
                        .ok_or_else(|| usage(format!("--only: unknown group `{g}` (use cpu,load,mem,disk,net,tcp,psi,temp,proc)")))
                })
                .collect::<anyhow::Result<Vec<_>>>()?,
        ),
    };
    Ok((interval, duration, only))
}

fn setup(a: &MonitorArgs) -> anyhow::Result<Setup> {
    let (interval, duration, only) = timing(a)?;
    let diskstats = std::fs::read_to_string("/proc/diskstats").unwrap_or_default();
    let disks: Vec<String> = super::parse::diskstats(&diskstats).into_iter().map(|d| d.name).collect();
    if let Some(d) = a.disk.iter().find(|d| !disks.contains(d)) {
        return Err(usage(format!(
            "--disk {d}: no such disk (this machine has: {})",
            disks
                .iter()
                .filter(|n| !n.starts_with("loop") && !n.starts_with("ram"))
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let netdev = std::fs::read_to_string("/proc/net/dev").unwrap_or_default();
    let nets: Vec<String> = super::parse::net_dev(&netdev).into_iter().map(|n| n.name).collect();
    if let Some(n) = a.net.iter().find(|n| !nets.contains(n)) {
        return Err(usage(format!(
            "--net {n}: no such network interface (this machine has: {})",
            nets.join(", ")
        )));
    }
    let mut processes = Vec::new();
    for pid in &a.pid {
        if *pid <= 0 || !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            return Err(usage(format!("--pid {pid}: no such process")));
        }
        processes.push(ProcessSelector::tree(&pid.to_string(), *pid));
    }
    if let Some(p) = &a.pattern {
        let re = regex::Regex::new(p).map_err(|e| usage(format!("--match: invalid regex: {}", e.to_string().replace('\n', " "))))?;
        processes.push(ProcessSelector::matching("match", re));
    }
    let (csv, jsonl, table) = outputs(a)?;
    let cfg = MonitorConfig {
        interval,
        processes,
        disks: a.disk.clone(),
        nets: a.net.clone(),
        partitions: a.partitions,
        only,
        per_cpu: true,
        ..MonitorConfig::default()
    };
    Ok(Setup {
        cfg,
        duration,
        count: a.count,
        csv,
        jsonl,
        table,
    })
}

/// The outputs `--csv` and `--jsonl` name (created only now that every check has passed), and
/// whether the live table is shown.
pub type Outputs = (Option<Csv>, Option<Box<dyn Write + Send>>, bool);

/// Open the outputs of `a` (also used by the remote monitor, `perflab monitor --host`).
pub fn outputs(a: &MonitorArgs) -> anyhow::Result<Outputs> {
    let stdout_taken = a.csv.as_deref() == Some("-".as_ref()) || a.jsonl.as_deref() == Some("-".as_ref());
    if a.csv.is_some() && a.csv == a.jsonl {
        return Err(usage("--csv and --jsonl name the same file"));
    }
    // Every check has passed, including that both outputs can be written: only now are files
    // created (an existing file is never truncated by a run that then refuses to start).
    for p in a.csv.iter().chain(a.jsonl.iter()) {
        check_writable(p)?;
    }
    let csv = a.csv.as_ref().map(|p| open(p).map(Csv::new)).transpose()?;
    let jsonl = a.jsonl.as_ref().map(open).transpose()?;
    Ok((csv, jsonl, !a.quiet && !stdout_taken))
}

/// `p` can be created or overwritten (`util::fs::check_output`).
fn check_writable(p: &std::path::Path) -> anyhow::Result<()> {
    crate::util::fs::check_output(p).map_err(|why| usage(format!("cannot write {}: {why}", p.display())))
}

fn open(p: &PathBuf) -> anyhow::Result<Box<dyn Write + Send>> {
    if p.as_os_str() == "-" {
        return Ok(Box::new(std::io::stdout()));
    }
    let f = std::fs::File::create(p).map_err(|e| usage(format!("cannot write {}: {e}", p.display())))?;
    Ok(Box::new(std::io::BufWriter::new(f)))
}

pub fn run(a: MonitorArgs) -> anyhow::Result<i32> {
    run_with(a, &mut |_| {})
}

/// [`run`], handing each sample to `on_sample` as it is taken (`--listen` serves it).
pub fn run_with(a: MonitorArgs, on_sample: &mut dyn FnMut(&super::Sample)) -> anyhow::Result<i32> {
    let mut s = setup(&a)?;
    let cancel = Cancel::on_signals()?;
    let waker = SignalWaker::new()?;
    let mut sampler = Sampler::new(&s.cfg)?;
    sampler.sample()?;
    let start = Instant::now();
    let mut table: Option<Table> = None;
    let stdout = std::io::stdout();
    let mut n = 0u64;
    let mut k = 1u32;
    let mut alive: std::collections::BTreeMap<String, bool> = std::collections::BTreeMap::new();
    loop {
        let due = start + s.cfg.interval * k;
        let now = Instant::now();
        if now < due {
            waker.wait(due - now);
        }
        if cancel.is_cancelled() {
            break;
        }
        let Some(mut sample) = sampler.sample()? else {
            continue;
        };
        note_gone(&sample, &mut alive);
        on_sample(&sample);
        if s.table {
            // Per-CPU figures are always in the files; the table shows them only with --cpu.
            let shown = if a.cpu { sample.clone() } else { without_per_cpu(&sample) };
            let t = table.get_or_insert_with(|| Table::new(&shown));
            t.print(&shown, &mut stdout.lock())?;
        }
        if let Some(c) = s.csv.as_mut() {
            c.write(&sample)?;
        }
        if let Some(j) = s.jsonl.as_mut() {
            jsonl(&sample, j.as_mut())?;
        }
        sample.values.clear();
        n += 1;
        if s.count.is_some_and(|c| n >= c) || s.duration.is_some_and(|d| start.elapsed() + s.cfg.interval / 2 >= d) {
            break;
        }
        let behind = start.elapsed().as_secs_f64() / s.cfg.interval.as_secs_f64();
        k = (k + 1).max(behind.floor() as u32 + 1);
    }
    // Every sample taken is written; Ctrl-C is said by the exit code, as for every command.
    Ok(if cancel.is_cancelled() { 130 } else { 0 })
}

/// Sleeps until a deadline or SIGINT/SIGTERM, whichever comes first, without waking in between
/// (a sampler at 1 Hz should cost one wake-up a second, not fifty).
struct SignalWaker {
    rx: std::os::unix::net::UnixStream,
}

impl SignalWaker {
    fn new() -> anyhow::Result<SignalWaker> {
        let (rx, tx) = std::os::unix::net::UnixStream::pair()?;
        rx.set_nonblocking(true)?;
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            signal_hook::low_level::pipe::register(sig, tx.try_clone()?)?;
        }
        Ok(SignalWaker { rx })
    }

    /// Wait up to `d` (rounded up to the millisecond); returns early on a signal.
    fn wait(&self, d: Duration) {
        use std::os::fd::AsRawFd;
        let ms = d.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32;
        let mut fds = [libc::pollfd {
            fd: self.rx.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        // SAFETY: `fds` is a local array of exactly one initialised pollfd (the count passed), alive
        // for the whole call; poll(2) writes only its `revents`. The fd belongs to `self.rx`.
        unsafe { libc::poll(fds.as_mut_ptr(), 1, ms) };
    }
}

/// Say once on stderr when a followed process (tree) is gone; its `proc_*_count` is then 0 and
/// its other columns are absent. It is not an error: sampling goes on.
fn note_gone(s: &super::Sample, alive: &mut std::collections::BTreeMap<String, bool>) {
    for (name, v) in &s.values {
        let Some(label) = name.strip_prefix("proc_").and_then(|n| n.strip_suffix("_count")) else {
            continue;
        };
        let now = *v > 0.0;
        let was = alive.insert(label.to_string(), now);
        if !now && was == Some(true) {
            let what = if label == "match" {
                "--match: every matching process".to_string()
            } else {
                format!("--pid {label}: the process")
            };
            eprintln!("perflab: note: {what} is gone (exited); sampling goes on");
        }
    }
}

pub fn without_per_cpu(s: &super::Sample) -> super::Sample {
    let values = s
        .values
        .iter()
        .filter(|(n, _)| !(n.starts_with("cpu") && n.as_bytes().get(3).is_some_and(u8::is_ascii_digit)))
        .cloned()
        .collect();
    super::Sample { values, ..s.clone() }
}
