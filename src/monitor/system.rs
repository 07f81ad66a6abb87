//! System-wide figures: one read of each file per tick into a `Snapshot`, and sysstat's formulas over
//! two snapshots. A counter that went backward makes that figure missing for the interval (never 0),
//! and the next interval starts from the new value.

use super::files::Files;
pub use super::files::Root;
use super::parse::{self, DiskLine, NetLine, Stat};
use super::Group;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub stat: Stat,
    pub loadavg: Option<[f64; 3]>,
    pub meminfo: BTreeMap<String, u64>,
    pub vmstat: BTreeMap<String, u64>,
    pub disks: Vec<DiskLine>,
    pub nets: Vec<NetLine>,
    pub tcp: BTreeMap<String, i64>,
    /// (`cpu_some`, avg10, total µs)
    pub psi: Vec<(String, f64, u64)>,
    pub temps: Vec<(String, f64)>,
}

/// Which devices and interfaces to report.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub disks: Vec<String>,
    pub nets: Vec<String>,
    pub partitions: bool,
    pub per_cpu: bool,
}

/// The `/proc/meminfo` and `/proc/vmstat` fields the figures use (the others are not kept).
const MEMINFO_KEYS: [&str; 10] = [
    "MemTotal",
    "MemFree",
    "MemAvailable",
    "Buffers",
    "Cached",
    "Slab",
    "SReclaimable",
    "AnonPages",
    "SwapTotal",
    "SwapFree",
];
const VMSTAT_KEYS: [&str; 4] = ["pswpin", "pswpout", "pgfault", "pgmajfault"];

impl Snapshot {
    /// One reading of `root`'s files (each opened for this reading only).
    pub fn read(root: &Root, groups: &dyn Fn(Group) -> bool, sel: &Selection) -> Snapshot {
        Snapshot::read_from(&mut Files::new(root.clone()), groups, sel)
    }

    /// One reading through `files` (kept open from one tick to the next on the live system).
    pub fn read_from(files: &mut Files, groups: &dyn Fn(Group) -> bool, sel: &Selection) -> Snapshot {
        let mut s = Snapshot::default();
        if groups(Group::Cpu) || groups(Group::Load) {
            s.stat = files.with("proc/stat", parse::stat).unwrap_or_default();
            s.loadavg = files.with("proc/loadavg", parse::loadavg).flatten();
        }
        if groups(Group::Mem) {
            s.meminfo = files
                .with("proc/meminfo", |t| parse::colon_kv_only(t, &MEMINFO_KEYS))
                .unwrap_or_default();
            // Kept as a pseudo-field in kB, like the others.
            // SAFETY: sysconf only reads a configuration value; it takes no pointers, and an unknown
            // name returns -1 (clamped to 1 here).
            let page_kb = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64 / 1024;
            if let Some(pages) = files.with("proc/zoneinfo", parse::zoneinfo_pcp_pages).flatten() {
                s.meminfo.insert(PCP_FREE.into(), pages * page_kb);
            }
            s.vmstat = files
                .with("proc/vmstat", |t| parse::space_kv_only(t, &VMSTAT_KEYS))
                .unwrap_or_default();
        }
        if groups(Group::Disk) {
            let all = files.with("proc/diskstats", parse::diskstats).unwrap_or_default();
            s.disks = all.into_iter().filter(|d| wanted_disk(files, d, sel)).collect();
        }
        if groups(Group::Net) {
            let all = files.with("proc/net/dev", parse::net_dev).unwrap_or_default();
            s.nets = all
                .into_iter()
                .filter(|n| sel.nets.is_empty() || sel.nets.contains(&n.name))
                .collect();
        }
        if groups(Group::Tcp) {
            s.tcp = files.with("proc/net/snmp", parse::snmp_tcp).unwrap_or_default();
        }
        if groups(Group::Psi) {
            for (rel, short) in [
                ("proc/pressure/cpu", "cpu"),
                ("proc/pressure/memory", "mem"),
                ("proc/pressure/io", "io"),
            ] {
                for (kind, avg10, total) in files.with(rel, parse::pressure).unwrap_or_default() {
                    s.psi.push((format!("{short}_{kind}"), avg10, total));
                }
            }
        }
        if groups(Group::Temp) {
            s.temps = files.temperatures();
        }
        s
    }
}

fn wanted_disk(files: &mut Files, d: &DiskLine, sel: &Selection) -> bool {
    if !sel.disks.is_empty() {
        return sel.disks.contains(&d.name);
    }
    let virtual_dev = ["loop", "ram", "zram", "nbd"].iter().any(|p| d.name.starts_with(p));
    let ever_used = d.f[0] + d.f[4] > 0;
    (sel.partitions || files.whole_disk(&d.name)) && !virtual_dev && ever_used
}

/// Δ of a counter. A counter that wrapped (it was in the top half of its 32- or 64-bit range and is
/// now in the bottom half: /proc/diskstats prints its ms fields as 32-bit, some drivers' net
/// counters are 32-bit) gives the modular difference, as sysstat's unsigned arithmetic does. Any
/// other decrease is a reset (an interface re-registered, CPU hotplug, an accounting glitch): None,
/// so the figure is missing for that interval, never a spurious 0 or a huge spike.
pub fn delta(prev: u64, cur: u64) -> Option<u64> {
    if cur >= prev {
        return Some(cur - prev);
    }
    const HALF32: u64 = 1 << 31;
    const HALF64: u64 = 1 << 63;
    if prev <= u32::MAX as u64 && prev >= HALF32 && cur < HALF32 {
        Some(cur + (1u64 << 32) - prev)
    } else if prev >= HALF64 && cur < HALF64 {
        Some(cur.wrapping_sub(prev))
    } else {
        None
    }
}

const CPU_COLS: [&str; 8] = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"];

/// The figures of one interval. `dt` is in seconds (monotonic clock).
pub fn figures(prev: &Snapshot, cur: &Snapshot, dt: f64, sel: &Selection, out: &mut Vec<(String, f64)>) {
    for (name, f) in &cur.stat.cpus {
        if name != "cpu" && !sel.per_cpu {
            continue;
        }
        // An offline CPU has no line: it is left out until it has a line in two samples in a row.
        let Some((_, p)) = prev.stat.cpus.iter().find(|(n, _)| n == name) else {
            continue;
        };
        cpu_figures(if name == "cpu" { "cpu" } else { name }, p, f, out);
    }
    let st = (&prev.stat, &cur.stat);
    if let Some(v) = cur.stat.procs_running {
        out.push(("procs_running".into(), v as f64));
    }
    if let Some(v) = cur.stat.procs_blocked {
        out.push(("procs_blocked".into(), v as f64));
    }
    if let Some([a, b, c]) = cur.loadavg {
        out.extend([("load_1".into(), a), ("load_5".into(), b), ("load_15".into(), c)]);
    }
    for (name, p, c) in [
        ("ctxt_per_s", st.0.ctxt, st.1.ctxt),
        ("intr_per_s", st.0.intr, st.1.intr),
        ("forks_per_s", st.0.processes, st.1.processes),
    ] {
        if let (Some(p), Some(c)) = (p, c) {
            if let Some(d) = delta(p, c) {
                out.push((name.into(), d as f64 / dt));
            }
        }
    }
    memory(prev, cur, dt, out);
    for d in &cur.disks {
        if let Some(p) = prev.disks.iter().find(|x| x.name == d.name) {
            disk(&d.name, &p.f, &d.f, dt, out);
        }
    }
    for n in &cur.nets {
        if let Some(p) = prev.nets.iter().find(|x| x.name == n.name) {
            net(p, n, dt, out);
        }
    }
    for (key, name) in [
        ("RetransSegs", "tcp_retrans_per_s"),
        ("OutSegs", "tcp_out_segs_per_s"),
        ("ActiveOpens", "tcp_active_opens_per_s"),
        ("PassiveOpens", "tcp_passive_opens_per_s"),
    ] {
        if let (Some(p), Some(c)) = (prev.tcp.get(key), cur.tcp.get(key)) {
            if c >= p {
                out.push((name.into(), (c - p) as f64 / dt));
            }
        }
    }
    if let Some(e) = cur.tcp.get("CurrEstab") {
        out.push(("tcp_established".into(), *e as f64));
    }
    for (name, avg10, total) in &cur.psi {
        out.push((format!("psi_{name}_avg10_pct"), *avg10));
        if let Some((_, _, pt)) = prev.psi.iter().find(|(n, _, _)| n == name) {
            if let Some(d) = delta(*pt, *total) {
                out.push((format!("psi_{name}_pct"), (d as f64 / (dt * 1e6) * 100.0).min(100.0)));
            }
        }
    }
    out.extend(cur.temps.iter().cloned());
}

fn cpu_figures(name: &str, p: &[u64; 10], c: &[u64; 10], out: &mut Vec<(String, f64)>) {
    let mut d = [0u64; 8];
    for i in 0..8 {
        match delta(p[i], c[i]) {
            Some(x) => d[i] = x,
            None => return, // a counter went backward (hotplug, accounting glitch): skip this interval
        }
    }
    let total: u64 = d.iter().sum();
    if total == 0 {
        return;
    }
    let guest = c[8].saturating_sub(p[8]);
    let guest_nice = c[9].saturating_sub(p[9]);
    let pct = |x: u64| 100.0 * x as f64 / total as f64;
    let user = pct(d[0].saturating_sub(guest));
    let nice = pct(d[1].saturating_sub(guest_nice));
    let vals = [user, nice, pct(d[2]), pct(d[3]), pct(d[4]), pct(d[5]), pct(d[6]), pct(d[7])];
    for (col, v) in CPU_COLS.iter().zip(vals) {
        out.push((format!("{name}_{col}_pct"), v));
    }
    out.push((format!("{name}_busy_pct"), (100.0 - vals[3] - vals[4] - vals[7]).max(0.0)));
}

/// The pseudo-field of `Snapshot::meminfo` holding the per-CPU lists' free pages, in kB.
const PCP_FREE: &str = "perflab:PcpFree";

fn memory(prev: &Snapshot, cur: &Snapshot, dt: f64, out: &mut Vec<(String, f64)>) {
    let m = &cur.meminfo;
    let mb = |k: &str| m.get(k).map(|kb| *kb as f64 / 1024.0);
    if let (Some(total), Some(free)) = (mb("MemTotal"), mb("MemFree")) {
        let buffers = mb("Buffers").unwrap_or(0.0);
        let cached = mb("Cached").unwrap_or(0.0);
        let slab = mb("Slab").unwrap_or(0.0);
        out.extend([("mem_total_mb".into(), total), ("mem_free_mb".into(), free)]);
        if let Some(a) = mb("MemAvailable") {
            // free(1) of procps-ng 4: used = total − available.
            out.extend([
                ("mem_used_mb".into(), (total - a).max(0.0)),
                ("mem_available_mb".into(), a),
                ("mem_used_pct".into(), 100.0 * (total - a).max(0.0) / total),
            ]);
        }
        out.extend([
            ("mem_buffers_mb".into(), buffers),
            // free(1)'s "cache": the page cache and the reclaimable slab.
            ("mem_cached_mb".into(), cached + mb("SReclaimable").unwrap_or(0.0)),
            ("mem_page_cache_mb".into(), cached),
            // sar -r's kbmemused: total − kbmemfree − kbbuffers − kbcached − kbslab.
            ("mem_used_sar_mb".into(), (total - free - buffers - cached - slab).max(0.0)),
        ]);
        for (key, name) in [("AnonPages", "mem_anon_mb"), ("Slab", "mem_slab_mb"), (PCP_FREE, "mem_pcp_free_mb")] {
            if let Some(v) = mb(key) {
                out.push((name.into(), v));
            }
        }
        if let (Some(st), Some(sf)) = (mb("SwapTotal"), mb("SwapFree")) {
            out.push(("swap_used_mb".into(), st - sf));
        }
    }
    for (key, name) in [
        ("pswpin", "swap_in_pages_per_s"),
        ("pswpout", "swap_out_pages_per_s"),
        ("pgfault", "page_faults_per_s"),
        ("pgmajfault", "major_faults_per_s"),
    ] {
        if let (Some(p), Some(c)) = (prev.vmstat.get(key), cur.vmstat.get(key)) {
            if let Some(d) = delta(*p, *c) {
                out.push((name.into(), d as f64 / dt));
            }
        }
    }
}

fn disk(name: &str, p: &[u64; 11], c: &[u64; 11], dt: f64, out: &mut Vec<(String, f64)>) {
    let mut d = [0u64; 11];
    for i in 0..11 {
        if i == 8 {
            continue; // in flight is a gauge
        }
        match delta(p[i], c[i]) {
            Some(x) => d[i] = x,
            None => return,
        }
    }
    let ms = dt * 1000.0;
    let await_ms = |ticks: u64, ios: u64| {
        if ios == 0 {
            0.0
        } else {
            ticks as f64 / ios as f64
        }
    };
    let n = |k: &str| format!("disk_{name}_{k}");
    out.extend([
        (n("reads_per_s"), d[0] as f64 / dt),
        (n("writes_per_s"), d[4] as f64 / dt),
        (n("read_mbps"), d[2] as f64 * 512.0 / 1_048_576.0 / dt),
        (n("write_mbps"), d[6] as f64 * 512.0 / 1_048_576.0 / dt),
        (n("r_await_ms"), await_ms(d[3], d[0])),
        (n("w_await_ms"), await_ms(d[7], d[4])),
        (n("aqu_sz"), d[10] as f64 / ms),
        (n("util_pct"), (d[9] as f64 / ms * 100.0).min(100.0)),
    ]);
}

fn net(p: &NetLine, c: &NetLine, dt: f64, out: &mut Vec<(String, f64)>) {
    let mut d = [0u64; 8];
    for i in 0..4 {
        match (delta(p.rx[i], c.rx[i]), delta(p.tx[i], c.tx[i])) {
            (Some(r), Some(t)) => {
                d[i] = r;
                d[i + 4] = t;
            }
            _ => return,
        }
    }
    let n = |k: &str| format!("net_{}_{k}", c.name);
    out.extend([
        (n("rx_mbitps"), d[0] as f64 * 8.0 / 1e6 / dt),
        (n("tx_mbitps"), d[4] as f64 * 8.0 / 1e6 / dt),
        (n("rx_pkts_per_s"), d[1] as f64 / dt),
        (n("tx_pkts_per_s"), d[5] as f64 / dt),
        (n("rx_errs_per_s"), d[2] as f64 / dt),
        (n("tx_errs_per_s"), d[6] as f64 / dt),
        (n("rx_drops_per_s"), d[3] as f64 / dt),
        (n("tx_drops_per_s"), d[7] as f64 / dt),
    ]);
}
