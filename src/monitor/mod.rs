//! The system and process sampler behind `perflab monitor` and every trial of `perflab run`:
//! vmstat + mpstat + iostat + sar -n + pidstat in one, with sysstat's formulas.
//!
//! `Sampler` reads once per tick and returns the figures of the interval since the previous tick;
//! `spawn` runs one on a background thread on an absolute schedule (tick k at start + k·interval, so a
//! late tick never shifts the later ones). A figure the machine lacks is absent, never 0.

mod cgroup_cpu;
pub mod cli;
pub mod files;
pub mod output;
pub mod parse;
mod proc_table;
mod process;
pub mod system;
mod taskstats;

pub use cgroup_cpu::CpuLimits;
pub use process::ProcessSelector;
pub use system::Root;

use crate::util::Cancel;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use system::{Selection, Snapshot};

/// Groups of figures, for `--only`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Cpu,
    Load,
    Mem,
    Disk,
    Net,
    Tcp,
    Psi,
    Temp,
    Proc,
}

impl Group {
    pub const ALL: [Group; 9] = [
        Group::Cpu,
        Group::Load,
        Group::Mem,
        Group::Disk,
        Group::Net,
        Group::Tcp,
        Group::Psi,
        Group::Temp,
        Group::Proc,
    ];

    pub fn parse(s: &str) -> Option<Group> {
        Some(match s.trim() {
            "cpu" => Group::Cpu,
            "load" | "queue" => Group::Load,
            "mem" | "memory" => Group::Mem,
            "disk" | "io" => Group::Disk,
            "net" | "network" => Group::Net,
            "tcp" => Group::Tcp,
            "psi" | "pressure" => Group::Psi,
            "temp" | "thermal" => Group::Temp,
            "proc" | "process" => Group::Proc,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug)]
pub struct MonitorConfig {
    pub interval: Duration,
    pub processes: Vec<ProcessSelector>,
    /// Only these disks / interfaces (empty: every whole disk in use, every interface).
    pub disks: Vec<String>,
    pub nets: Vec<String>,
    pub partitions: bool,
    /// None: every group.
    pub only: Option<Vec<Group>>,
    /// Per-CPU columns (`cpu0_user_pct`, ...) besides the total.
    pub per_cpu: bool,
    /// Where /proc and /sys are (tests point it at captured snapshots).
    pub root: Root,
    /// When set (unix seconds, CLOCK_REALTIME), the ticks fall on `first + k · interval`: from
    /// `first` itself if it is a quarter interval or more ahead, else from the next of these that
    /// is (see [`next_tick`]).
    /// Unset, tick k falls at start + k · interval.
    pub first_tick_unix: Option<f64>,
}

impl Default for MonitorConfig {
    fn default() -> MonitorConfig {
        MonitorConfig {
            interval: Duration::from_secs(1),
            processes: Vec::new(),
            disks: Vec::new(),
            nets: Vec::new(),
            partitions: false,
            only: None,
            per_cpu: true,
            root: Root::live(),
            first_tick_unix: None,
        }
    }
}

/// The earliest tick of the schedule `first + k · interval` (k = 0, 1, ...) that is not before
/// `not_before`: `first` itself while it is still ahead; a schedule whose first tick has passed
/// goes on on the same grid.
pub fn next_tick(first: f64, interval_s: f64, not_before: f64) -> f64 {
    if interval_s <= 0.0 || !first.is_finite() || !not_before.is_finite() {
        return not_before;
    }
    if not_before <= first {
        return first;
    }
    first + ((not_before - first) / interval_s).ceil() * interval_s
}

/// The first tick of a trial's schedule, shared by this machine and every remote host: the next
/// multiple of the interval of CLOCK_REALTIME that is a quarter interval or more after `now_unix`
/// (so that the first interval is long enough for rates). A host's agent is sent it translated by
/// the host's clock offset; every host then ticks on the same instants.
pub fn grid_tick(now_unix: f64, interval: Duration) -> f64 {
    let i = interval.as_secs_f64();
    next_tick(0.0, i, now_unix + i / 4.0)
}

/// The figures of one interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Wall-clock time of the reading.
    pub unix_s: f64,
    /// Seconds since the sampler started.
    pub elapsed_s: f64,
    pub values: Vec<(String, f64)>,
}

impl Sample {
    pub fn get(&self, name: &str) -> Option<f64> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }
}

pub struct Sampler {
    cfg: MonitorConfig,
    sel: Selection,
    files: files::Files,
    prev: Option<(Instant, Snapshot)>,
    procs: process::ProcessTracker,
    started: Instant,
}

impl Sampler {
    pub fn new(cfg: &MonitorConfig) -> anyhow::Result<Sampler> {
        let sel = Selection {
            disks: cfg.disks.clone(),
            nets: cfg.nets.clone(),
            partitions: cfg.partitions,
            per_cpu: cfg.per_cpu,
        };
        let procs = if cfg.only.as_ref().is_none_or(|o| o.contains(&Group::Proc)) {
            cfg.processes.clone()
        } else {
            Vec::new()
        };
        Ok(Sampler {
            cfg: cfg.clone(),
            sel,
            files: files::Files::new(cfg.root.clone()),
            prev: None,
            procs: process::ProcessTracker::new(cfg.root.clone(), procs),
            started: Instant::now(),
        })
    }

    /// Read now; the figures since the previous call (None for the first, priming read).
    pub fn sample(&mut self) -> anyhow::Result<Option<Sample>> {
        let now = Instant::now();
        let unix_s = crate::util::time::unix_now();
        let only = &self.cfg.only;
        let wants = |g: Group| only.as_ref().is_none_or(|o| o.contains(&g));
        let snap = Snapshot::read_from(&mut self.files, &wants, &self.sel);
        let mut values = Vec::new();
        let first = self.prev.is_none();
        let dt = self.prev.as_ref().map(|(t, _)| now.duration_since(*t).as_secs_f64()).unwrap_or(0.0);
        if let Some((_, prev)) = &self.prev {
            if dt > 0.0 {
                system::figures(prev, &snap, dt, &self.sel, &mut values);
            }
        }
        self.procs.sample(dt.max(1e-9), first, &mut values);
        let groups_ok = |name: &str| match self.cfg.only.as_ref() {
            None => true,
            Some(o) => o.iter().any(|g| group_of(name) == Some(*g)),
        };
        values.retain(|(n, v)| v.is_finite() && groups_ok(n));
        self.prev = Some((now, snap));
        if first {
            return Ok(None);
        }
        Ok(Some(Sample {
            unix_s,
            elapsed_s: now.duration_since(self.started).as_secs_f64(),
            values,
        }))
    }
}

/// The group a column belongs to.
pub fn group_of(name: &str) -> Option<Group> {
    let g = if name.starts_with("cpu") {
        Group::Cpu
    } else if name.starts_with("procs_")
        || name.starts_with("load_")
        || name.ends_with("_per_s") && ["ctxt", "intr", "forks"].iter().any(|p| name.starts_with(p))
    {
        Group::Load
    } else if name.starts_with("mem_") || name.starts_with("swap_") || name.starts_with("page_faults") || name.starts_with("major_faults") {
        Group::Mem
    } else if name.starts_with("disk_") {
        Group::Disk
    } else if name.starts_with("net_") {
        Group::Net
    } else if name.starts_with("tcp_") {
        Group::Tcp
    } else if name.starts_with("psi_") {
        Group::Psi
    } else if name.starts_with("temp_") {
        Group::Temp
    } else if name.starts_with("proc_") {
        Group::Proc
    } else {
        return None;
    };
    Some(g)
}

/// A sampler running on its own thread.
pub struct BackgroundSampler {
    stop: Cancel,
    /// Rung by `stop()`, so that the thread sleeps until its next tick instead of polling.
    bell: Arc<(Mutex<()>, Condvar)>,
    marker: Marker,
    handle: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
}

type Sink = Box<dyn FnMut(Sample) + Send>;

struct Inner {
    sampler: Sampler,
    sink: Sink,
    /// The schedule: tick k is due at `base + k * interval`.
    base: Instant,
    k: u32,
    last: Instant,
}

/// Ends the current interval now (at a phase boundary), so that no interval straddles two phases.
#[derive(Clone)]
pub struct Marker {
    inner: Arc<Mutex<Inner>>,
    interval: Duration,
    /// The schedule is a shared grid (`first_tick_unix`): a mark does not move it.
    aligned: bool,
}

impl Marker {
    /// Take a sample now and restart the schedule from now (an aligned schedule instead goes on at
    /// its first tick a quarter interval or more from now). An interval shorter than a quarter of
    /// the configured one is too short for rates from 10 ms ticks: it is read and dropped instead.
    pub fn mark(&self) -> anyhow::Result<()> {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let sample = g.sampler.sample()?;
        if now.duration_since(g.last) >= self.interval / 4 {
            if let Some(s) = sample {
                (g.sink)(s);
            }
        }
        if self.aligned {
            // The schedule's next tick a quarter interval or more from now (base is tick 0).
            let i = self.interval.as_secs_f64();
            let since = now.saturating_duration_since(g.base).as_secs_f64() - g.base.saturating_duration_since(now).as_secs_f64();
            g.k = g.k.max(((since + i / 4.0) / i).ceil().max(0.0) as u32);
        } else {
            g.base = now;
            g.k = 1;
        }
        g.last = now;
        Ok(())
    }
}

/// Sample every `cfg.interval` on a background thread until `cancel` or `stop()`, calling `on_sample`
/// with each interval's figures. The schedule is absolute: a late tick does not shift later ones.
pub fn spawn(cfg: MonitorConfig, cancel: Cancel, on_sample: impl FnMut(Sample) + Send + 'static) -> anyhow::Result<BackgroundSampler> {
    let mut sampler = Sampler::new(&cfg)?;
    sampler.sample()?;
    let now = Instant::now();
    // Aligned: tick 0 is the first tick of the grid a quarter interval or more from now.
    let (base, k) = match cfg.first_tick_unix {
        Some(first) => {
            let now_unix = crate::util::time::unix_now();
            let i = cfg.interval.as_secs_f64();
            let t = next_tick(first, i, now_unix + i / 4.0);
            (now + Duration::try_from_secs_f64(t - now_unix).unwrap_or_default(), 0)
        }
        None => (now, 1),
    };
    let inner = Arc::new(Mutex::new(Inner {
        sampler,
        sink: Box::new(on_sample),
        base,
        k,
        last: now,
    }));
    let marker = Marker {
        inner: inner.clone(),
        interval: cfg.interval,
        aligned: cfg.first_tick_unix.is_some(),
    };
    let stop = Cancel::new();
    let stop2 = stop.clone();
    let bell = Arc::new((Mutex::new(()), Condvar::new()));
    let bell2 = bell.clone();
    let interval = cfg.interval;
    let handle = std::thread::Builder::new().name("perflab-monitor".into()).spawn(move || loop {
        let due = {
            let g = inner.lock().unwrap_or_else(|p| p.into_inner());
            g.base + interval * g.k
        };
        let now = Instant::now();
        if now < due {
            let (lock, cv) = &*bell2;
            let g = lock.lock().unwrap_or_else(|p| p.into_inner());
            if stop2.is_cancelled() || cancel.is_cancelled() {
                return Ok(());
            }
            // `stop()` rings the bell; an outside cancel is looked at at least every 250 ms.
            let _ = cv.wait_timeout(g, (due - now).min(Duration::from_millis(250)));
            continue;
        }
        let mut g = inner.lock().unwrap_or_else(|p| p.into_inner());
        if Instant::now() < g.base + interval * g.k {
            continue; // a mark moved the schedule meanwhile
        }
        if let Some(s) = g.sampler.sample()? {
            (g.sink)(s);
        }
        g.last = Instant::now();
        // Ticks missed entirely are skipped, never bunched.
        let behind = g.base.elapsed().as_secs_f64() / interval.as_secs_f64();
        g.k = (g.k + 1).max(behind.floor() as u32 + 1);
    })?;
    Ok(BackgroundSampler {
        stop,
        bell,
        marker,
        handle: Some(handle),
    })
}

impl BackgroundSampler {
    /// A handle that ends the current interval now (see `Marker::mark`).
    pub fn marker(&self) -> Marker {
        self.marker.clone()
    }

    fn ring(&self) {
        self.stop.cancel();
        let _g = self.bell.0.lock().unwrap_or_else(|p| p.into_inner());
        self.bell.1.notify_all();
    }

    /// Stop sampling and wait for the thread.
    pub fn stop(mut self) -> anyhow::Result<()> {
        self.ring();
        match self.handle.take().map(|h| h.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(anyhow::anyhow!("the monitor thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for BackgroundSampler {
    fn drop(&mut self) {
        self.ring();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_stay_on_the_grid_of_the_first_tick() {
        // Not yet due: the first tick itself, however far.
        assert_eq!(next_tick(100.0, 0.5, 99.2), 100.0);
        assert_eq!(next_tick(100.0, 0.5, 10.0), 100.0);
        assert_eq!(next_tick(100.0, 0.5, 100.0), 100.0);
        // Passed: the next point of the same grid, never a shifted one.
        assert_eq!(next_tick(100.0, 0.5, 100.01), 100.5);
        assert_eq!(next_tick(100.0, 0.5, 103.26), 103.5);
        assert!((next_tick(10.25, 1.0, 12.0) - 12.25).abs() < 1e-12);
    }

    #[test]
    fn the_shared_first_tick_is_a_multiple_of_the_interval_a_quarter_interval_away() {
        let i = Duration::from_millis(500);
        assert_eq!(grid_tick(1000.0, i), 1000.5);
        assert_eq!(grid_tick(1000.2, i), 1000.5);
        // 0.2 s before the next multiple is more than a quarter interval: that one; 0.1 s is not.
        assert_eq!(grid_tick(1000.3, i), 1000.5);
        assert_eq!(grid_tick(1000.4, i), 1001.0);
        assert_eq!(grid_tick(1000.45, i), 1001.0);
        // Two hosts translated by their offsets tick on the same instants of the controller's clock.
        let t = grid_tick(1_700_000_000.123, Duration::from_secs(1));
        assert_eq!(t, 1_700_000_001.0);
        let offset = 0.0371;
        assert!((next_tick(t + offset, 1.0, 1_700_000_003.2 + offset) - offset - 1_700_000_004.0).abs() < 1e-6);
    }
}
