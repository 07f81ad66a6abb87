//! The mem workload's touch, judged by the monitor: "touch of 1 GiB moves perflab monitor's
//! anonymous memory by 1 GiB ± 5 %". A plan (`type = "mem"`, touch, 1 GiB, the monitor on) is run and
//! the monitor's stored `mem_anon_mb` (AnonPages: the region is private anonymous memory) is compared
//! between the baseline and the load phase, as medians per phase from the store; the same with
//! `perflab load mem touch` beside `perflab monitor`. The process's own resident size is checked too
//! (it holds the size asked). Used memory as `free` prints it (`mem_used_mb`, the report's "Memory
//! used" row) also moves with the free pages the kernel keeps in per-CPU lists, which no figure of
//! `free` counts (docs/metrics.md): it is not the figure judged, but the report's row is checked to be
//! the stored samples' means.
//!
//! Other processes on a shared machine allocate and free memory as well, and anonymous memory is the
//! whole machine's. The test measures how far anonymous memory moved by itself around the touch: the spread
//! within the baseline, within the held part of the load phase and within recovery, and how far
//! recovery is from the baseline. When that is under [`STILL_MB`] the rise is judged as 1 GiB ± 5 %;
//! otherwise the run is tried once more, and a machine that never held still is judged with what
//! anonymous memory moved by itself allowed for (1 GiB ± (5 % + that movement), said on stderr).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{only_run_dir, write_plan};

const BIN: &str = env!("CARGO_BIN_EXE_perflab");

/// 1 GiB in MiB.
const GIB_MB: f64 = 1024.0;

/// Most anonymous memory may move by itself (MiB) within a phase, or between baseline and recovery, for
/// the touch to be judged on its own: well under the ± 5 % (51 MiB) the figure is allowed.
const STILL_MB: f64 = 16.0;

/// The figure judged: the machine's anonymous memory.
const FIGURE: &str = "mem_anon_mb";

/// Runs of the touch before a machine that never held still is judged with its movement allowed for.
const TRIES: usize = 2;

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    assert!(n > 0, "no samples to take a median of");
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn spread(v: &[f64]) -> f64 {
    let max = v.iter().copied().fold(f64::MIN, f64::max);
    let min = v.iter().copied().fold(f64::MAX, f64::min);
    max - min
}

/// Anonymous memory (MiB) sampled before, while and after the region was held.
#[derive(Debug)]
struct Phases {
    baseline: Vec<f64>,
    /// The samples of the load phase once the touch was done (the level it held).
    held: Vec<f64>,
    recovery: Vec<f64>,
}

impl Phases {
    /// How far anonymous memory moved by itself around the touch (MiB): the largest spread within a
    /// phase, or between the baseline and recovery; None when a phase has too few samples to tell
    /// (fewer than 3: a touch that took most of the load phase on a busy machine).
    fn background(&self) -> Option<f64> {
        let phases = [&self.baseline, &self.held, &self.recovery];
        if phases.iter().any(|v| v.len() < 3) {
            return None;
        }
        let within = phases.iter().map(|v| spread(v)).fold(0.0, f64::max);
        Some(within.max((median(&self.recovery) - median(&self.baseline)).abs()))
    }

    /// The rise of the median anonymous memory from the baseline to the held load, in MiB.
    fn rise(&self) -> f64 {
        median(&self.held) - median(&self.baseline)
    }
}

/// The held samples: the load phase's plateau, from the first sample within 5 % of its highest level
/// to the last one (the touch of 1 GiB takes a fraction of a second to a few seconds, depending on
/// the machine, and the sample that closes the load phase may be taken just after the region was
/// freed).
fn held_part(load: &[f64]) -> Vec<f64> {
    let top = load.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let near = |v: f64| (v - top).abs() <= 0.05 * GIB_MB;
    match (load.iter().position(|&v| near(v)), load.iter().rposition(|&v| near(v))) {
        (Some(a), Some(b)) => load[a..=b].to_vec(),
        _ => Vec::new(),
    }
}

fn enough_memory() -> bool {
    if perflab::workload::mem::size::available() < 3 << 30 {
        crate::common::skip_unless_required("less than 3 GiB available for a 1 GiB touch");
        return false;
    }
    true
}

/// Judge the rise: 1 GiB ± 5 % when anonymous memory held still by itself around the touch; on the
/// last try, with what it moved by itself allowed for. False: not judged, try again.
fn judge(what: &str, p: &Phases, last_try: bool) -> bool {
    for (name, v) in [("baseline", &p.baseline), ("held load", &p.held), ("recovery", &p.recovery)] {
        assert!(!v.is_empty(), "{what}: no sample of anonymous memory in the {name} phase: {p:?}");
    }
    let moved = match p.background() {
        Some(m) if m <= STILL_MB || last_try => m,
        Some(m) => {
            eprintln!("note ({what}): anonymous memory moved by {m:.0} MiB by itself around the touch: trying again");
            return false;
        }
        None if !last_try => {
            eprintln!("note ({what}): too few samples in a phase to tell how still anonymous memory held: trying again: {p:?}");
            return false;
        }
        // Too few samples to measure the background: all it did, from the lowest to the highest.
        None => spread(&[p.baseline.as_slice(), &p.recovery].concat()),
    };
    let allowed = 0.05 * GIB_MB + if moved > STILL_MB { moved } else { 0.0 };
    let rise = p.rise();
    eprintln!(
        "{what}: anonymous memory {:.0} MiB at baseline, {:.0} MiB held, {:.0} MiB after: rise {rise:.0} MiB \
         (it moved {moved:.0} MiB by itself; allowed ± {allowed:.0})",
        median(&p.baseline),
        median(&p.held),
        median(&p.recovery)
    );
    assert!(
        (rise - GIB_MB).abs() <= allowed,
        "{what}: anonymous memory rose by {rise:.0} MiB, want 1024 ± {allowed:.0} (baseline {:?}, held {:?})",
        p.baseline,
        p.held
    );
    true
}

/// A plan touching 1 GiB: the monitor's stored anonymous memory rises by 1 GiB ± 5 % from the baseline
/// to the load phase (medians), and the report's row is those samples' means.
#[test]
fn touch_of_1_gib_moves_the_monitors_used_memory_by_1_gib() {
    let _mem = crate::common::machine_memory_lock();
    if !enough_memory() {
        return;
    }
    for attempt in 1..=TRIES {
        let tmp = tempfile::tempdir().expect("tmp");
        let plan = write_plan(
            tmp.path(),
            "name = \"touch-used-memory\"\n\n[workload]\ntype = \"mem\"\nmode = \"touch\"\nsize = \"1G\"\n\n\
         [phases]\nbaseline = \"2s\"\nwarmup = \"0s\"\nload = \"6s\"\nrecovery = \"2s\"\ninterval = \"250ms\"\n",
        );
        let runs = tmp.path().join("runs");
        let out = Command::new(BIN)
            .args(["run", "-q"])
            .arg(&plan)
            .arg("--runs-dir")
            .arg(&runs)
            .output()
            .expect("perflab run");
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let dir = only_run_dir(&runs);
        let store = perflab::store::Store::open(&dir).expect("open the run's store");
        let trials = store.trials().expect("trials");
        assert_eq!(trials.len(), 1);
        let samples = store.samples(trials[0].id).expect("samples");
        let series = |name: &str, phase: &str| -> Vec<f64> {
            samples
                .iter()
                .filter(|s| s.phase == phase)
                .filter_map(|s| s.values.iter().find(|(k, _)| k == name).map(|(_, v)| *v))
                .collect()
        };
        let p = Phases {
            baseline: series(FIGURE, "baseline"),
            held: held_part(&series(FIGURE, "load")),
            recovery: series(FIGURE, "recovery"),
        };
        // The region is freed when the load phase ends: recovery holds the baseline's level again.
        if !judge("perflab run", &p, attempt == TRIES) {
            continue;
        }
        // The report's "Memory used" row is the same samples' means per phase (its load figure includes
        // the samples taken while the touch ran).
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("report.json")).expect("report.json")).expect("json");
        let row = report["points"][0]["system"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["metric"] == "mem_used_mb"))
            .unwrap_or_else(|| panic!("no mem_used_mb row in report.json's system table: {report}"));
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        for (field, phase) in [("baseline", "baseline"), ("under_load", "load"), ("recovery", "recovery")] {
            let shown = row[field]
                .as_f64()
                .unwrap_or_else(|| panic!("report.json: no {field} for mem_used_mb"));
            let stored = mean(&series("mem_used_mb", phase));
            assert!(
                (shown - stored).abs() < 0.5,
                "report.json's Memory used {field} {shown:.1} MiB, the stored {phase} samples' mean {stored:.1}"
            );
        }
        return;
    }
}

/// `perflab load mem touch -s 1G` beside `perflab monitor`: anonymous memory rises by 1 GiB ± 5 % from
/// before the load started to while it holds the region (medians).
#[test]
fn load_mem_touch_of_1_gib_moves_the_monitors_used_memory_by_1_gib() {
    let _mem = crate::common::machine_memory_lock();
    if !enough_memory() {
        return;
    }
    for attempt in 1..=TRIES {
        let mut monitor = Command::new(BIN)
            .args(["monitor", "-q", "--only", "mem", "-i", "250ms", "-d", "60s", "--jsonl", "-"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("perflab monitor");
        let t0 = Instant::now();
        std::thread::sleep(Duration::from_secs(2));
        let started = t0.elapsed().as_secs_f64();
        let load = Command::new(BIN)
            // 6 s: time enough to touch 1 GiB on a busy machine (under 2 s here; a touch not done by the end of the
            // load phase is exit code 1, rightly: the size was never held).
            .args(["load", "mem", "touch", "-s", "1G", "--warmup", "0s", "-d", "6s", "-q", "--json"])
            .output()
            .expect("perflab load mem");
        let ended = t0.elapsed().as_secs_f64();
        std::thread::sleep(Duration::from_secs(2));
        let _ = monitor.kill();
        let out = monitor.wait_with_output().expect("monitor output");
        assert_eq!(load.status.code(), Some(0), "{}", String::from_utf8_lossy(&load.stderr));
        let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let (mut baseline, mut during, mut after) = (Vec::new(), Vec::new(), Vec::new());
        for l in &lines {
            let (Some(t), Some(v)) = (l["elapsed_s"].as_f64(), l[FIGURE].as_f64()) else {
                continue;
            };
            // Half a second of margin around the load's start and end (process start and exit).
            if t < started - 0.5 {
                baseline.push(v);
            } else if t > started + 0.5 && t < ended - 0.5 {
                during.push(v);
            } else if t > ended + 0.5 {
                after.push(v);
            }
        }
        assert!(!lines.is_empty(), "perflab monitor --jsonl printed no sample");
        let p = Phases {
            baseline,
            held: held_part(&during),
            recovery: after,
        };
        if judge("perflab load mem", &p, attempt == TRIES) {
            return;
        }
    }
}

fn vm_rss_kib(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    perflab::workload::mem::size::meminfo_kib(&s, "VmRSS")
}

/// touch of 1 GiB holds 1 GiB ± 5 % more resident memory than the process had before it (the
/// process's side of the figure above; it does not depend on other processes).
#[test]
fn touch_holds_the_size_asked_in_the_process() {
    let _mem = crate::common::machine_memory_lock();
    if !enough_memory() {
        return;
    }
    let mut child = Command::new(BIN)
        // 8 s: time enough to touch 1 GiB on a busy machine (under 2 s here; a touch not done by the end of the
        // load phase is exit code 1, rightly: the size was never held).
        .args(["load", "mem", "touch", "-s", "1G", "-d", "8s", "-q", "--json"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    // The region is touched, then held through the load phase: the peak resident size until the
    // process exits (at most 120 s on a busy machine) is what was held.
    let mut rss = 0;
    let start = Instant::now();
    let status = loop {
        rss = rss.max(vm_rss_kib(child.id()).unwrap_or(0));
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("perflab load mem touch did not end within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0));
    let gib_kib = 1u64 << 20;
    // The binary's own resident pages are a few MiB.
    assert!(
        rss >= gib_kib * 95 / 100 && rss <= gib_kib * 105 / 100 + 32 * 1024,
        "VmRSS {rss} KiB"
    );
}
