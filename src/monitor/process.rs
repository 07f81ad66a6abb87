//! Per-process figures, aggregated over whole process trees (pidstat's formulas).
//!
//! Each tick lists `/proc` (this kernel has no `task/*/children`) and builds the parent links from
//! `/proc/PID/stat`. That file is read again only for the processes being followed and for new pids:
//! a process outside every tree keeps its parent until its parent dies, so its line from an earlier
//! tick still places it (a full re-read every `FULL_SCAN` catches a reparenting). It then sums the
//! members of every selector: its pids, the processes whose command line
//! matches its pattern, and all their descendants, less any subtree that another selector roots
//! (so the load generator's figures never include the target it started).

use super::cgroup_cpu::{CpuLimits, Throttle};
use super::parse::{self, PidStat};
use super::system::Root;
use super::taskstats::Taskstats;
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// How often every `/proc/PID/stat` is read again, not only the followed and the new ones.
const FULL_SCAN: Duration = Duration::from_secs(5);

/// Which processes a group of columns (`proc_<label>_*`) covers.
#[derive(Clone, Debug)]
pub struct ProcessSelector {
    pub label: String,
    pub pids: Vec<i32>,
    pub pattern: Option<regex::Regex>,
    /// The tree's own CPU limits (its CPUs, its cgroup's `cpu.stat`): `proc_<label>_cpu_limit_pct`
    /// and `proc_<label>_throttled_pct`.
    pub limits: Option<CpuLimits>,
}

impl ProcessSelector {
    /// This process and its children (minus trees other selectors root).
    pub fn own_process(label: &str) -> ProcessSelector {
        ProcessSelector {
            label: label.into(),
            pids: vec![std::process::id() as i32],
            pattern: None,
            limits: None,
        }
    }
    /// `pid` and all its descendants.
    pub fn tree(label: &str, pid: i32) -> ProcessSelector {
        ProcessSelector {
            label: label.into(),
            pids: vec![pid],
            pattern: None,
            limits: None,
        }
    }
    /// Every process whose command line matches, with its descendants.
    pub fn matching(label: &str, pattern: regex::Regex) -> ProcessSelector {
        ProcessSelector {
            label: label.into(),
            pids: Vec::new(),
            pattern: Some(pattern),
            limits: None,
        }
    }
    /// With the tree's CPU limits (none: unchanged).
    pub fn with_limits(mut self, limits: Option<CpuLimits>) -> ProcessSelector {
        self.limits = limits;
        self
    }
}

/// Counters of one process at one tick.
#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    utime: u64,
    stime: u64,
    vcs: u64,
    nvcs: u64,
    read: u64,
    write: u64,
}

/// Keeps the previous tick's counters of every tracked process.
pub struct ProcessTracker {
    root: Root,
    selectors: Vec<ProcessSelector>,
    prev: HashMap<(i32, u64), Counters>,
    prev_uptime_ticks: Option<u64>,
    cmdlines: HashMap<(i32, u64), String>,
    hz: f64,
    page_mb: f64,
    me: i32,
    /// The previous tick's process table, the pids in some tree then, and the last full scan.
    table: HashMap<i32, PidStat>,
    followed: HashSet<i32>,
    full_scan: Option<Instant>,
    /// Per selector, its cgroup's throttling counters at the previous tick.
    throttles: Vec<Throttle>,
    /// Whole processes' context switches, exited threads included (live `/proc` only; None where
    /// taskstats cannot be asked: then the main thread's, from `status`).
    taskstats: Option<Taskstats>,
}

impl ProcessTracker {
    pub fn new(root: Root, selectors: Vec<ProcessSelector>) -> ProcessTracker {
        // SAFETY: sysconf only reads a configuration value; it takes no pointers, and an unknown
        // name returns -1 (clamped to 1 here).
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        // SAFETY: as above.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as f64;
        let throttles = selectors.iter().map(|_| Throttle::default()).collect();
        let live = root.0 == std::path::Path::new("/");
        let taskstats = if live && !selectors.is_empty() { Taskstats::open() } else { None };
        ProcessTracker {
            root,
            selectors,
            prev: HashMap::new(),
            prev_uptime_ticks: None,
            cmdlines: HashMap::new(),
            hz,
            page_mb: page / 1_048_576.0,
            me: std::process::id() as i32,
            table: HashMap::new(),
            followed: HashSet::new(),
            full_scan: None,
            throttles,
            taskstats,
        }
    }

    /// Read every process once and append the figures of the interval since the last call
    /// (`first`: the priming read, nothing appended).
    pub fn sample(&mut self, dt: f64, first: bool, out: &mut Vec<(String, f64)>) {
        if self.selectors.is_empty() {
            return;
        }
        let uptime_ticks = self
            .root
            .read("proc/uptime")
            .and_then(|t| t.split_ascii_whitespace().next()?.parse::<f64>().ok())
            .map(|s| (s * self.hz) as u64);
        let table = self.scan();
        let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
        for (pid, st) in &table {
            children.entry(st.ppid).or_default().push(*pid);
        }
        if self.selectors.iter().any(|s| s.pattern.is_some()) {
            for (pid, st) in &table {
                if !self.cmdlines.contains_key(&(*pid, st.starttime)) {
                    let cmd = self
                        .root
                        .read(&format!("proc/{pid}/cmdline"))
                        .unwrap_or_default()
                        .replace('\0', " ");
                    self.cmdlines.insert((*pid, st.starttime), cmd.trim().to_string());
                }
            }
        }
        let roots: Vec<Vec<i32>> = self.selectors.iter().map(|s| self.roots_of(s, &table)).collect();
        let mut next_prev = HashMap::new();
        let mut followed = HashSet::new();
        let mut taskstats = self.taskstats.take();
        for (i, sel) in self.selectors.iter().enumerate() {
            let fenced: HashSet<i32> = roots
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .flat_map(|(_, r)| r.iter().copied())
                .collect();
            let members = tree(&roots[i], &children, &fenced);
            followed.extend(members.iter().copied());
            let (mut rss, mut threads) = (0.0, 0u64);
            let mut d = Counters::default();
            for pid in &members {
                let Some(st) = table.get(pid) else { continue };
                let c = self.counters(*pid, st, taskstats.as_mut());
                let key = (*pid, st.starttime);
                let base = match self.prev.get(&key) {
                    Some(p) => Some(*p),
                    // Born during the interval: everything it used so far belongs to it.
                    None if self.prev_uptime_ticks.is_some_and(|u| st.starttime >= u) => Some(Counters::default()),
                    None => None,
                };
                if let Some(b) = base {
                    d.utime += c.utime.saturating_sub(b.utime);
                    d.stime += c.stime.saturating_sub(b.stime);
                    d.vcs += c.vcs.saturating_sub(b.vcs);
                    d.nvcs += c.nvcs.saturating_sub(b.nvcs);
                    d.read += c.read.saturating_sub(b.read);
                    d.write += c.write.saturating_sub(b.write);
                }
                rss += st.rss_pages as f64 * self.page_mb;
                threads += st.threads;
                next_prev.insert(key, c);
            }
            if let Some(limits) = &sel.limits {
                if first || !members.is_empty() {
                    self.throttles[i].sample(limits, &format!("proc_{}_", sel.label), first, out);
                }
            }
            if first {
                continue;
            }
            let n = |k: &str| format!("proc_{}_{k}", sel.label);
            out.push((n("count"), members.iter().filter(|p| table.contains_key(p)).count() as f64));
            if members.is_empty() {
                continue; // gone: the count says so, the other columns are absent
            }
            let ticks = |t: u64| 100.0 * t as f64 / self.hz / dt;
            out.extend([
                (n("cpu_pct"), ticks(d.utime + d.stime)),
                (n("cpu_user_pct"), ticks(d.utime)),
                (n("cpu_system_pct"), ticks(d.stime)),
                (n("rss_mb"), rss),
                (n("threads"), threads as f64),
                (n("cswch_per_s"), d.vcs as f64 / dt),
                (n("nvcswch_per_s"), d.nvcs as f64 / dt),
                (n("read_bytes_per_s"), d.read as f64 / dt),
                (n("write_bytes_per_s"), d.write as f64 / dt),
            ]);
        }
        self.taskstats = taskstats;
        self.prev = next_prev;
        self.prev_uptime_ticks = uptime_ticks;
        self.cmdlines.retain(|k, _| table.get(&k.0).is_some_and(|s| s.starttime == k.1));
        self.table = table;
        self.followed = followed;
    }

    /// The process table: pid → its `stat` line, re-read for followed and new pids (and for all
    /// every `FULL_SCAN`), taken from the previous tick for the others.
    fn scan(&mut self) -> HashMap<i32, PidStat> {
        let mut out = HashMap::with_capacity(self.table.len() + 16);
        let Ok(dir) = std::fs::read_dir(self.root.path("proc")) else {
            return out;
        };
        let now = Instant::now();
        let full = self.full_scan.is_none_or(|t| now.duration_since(t) >= FULL_SCAN);
        if full {
            self.full_scan = Some(now);
        }
        let mut path = String::with_capacity(32);
        for e in dir.flatten() {
            let name = e.file_name();
            let Some(pid) = name.to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            if !full && !self.followed.contains(&pid) {
                if let Some(st) = self.table.get(&pid) {
                    out.insert(pid, *st);
                    continue;
                }
            }
            path.clear();
            use std::fmt::Write;
            let _ = write!(path, "proc/{pid}/stat");
            if let Some(st) = self.root.read(&path).and_then(|t| parse::pid_stat(&t)) {
                out.insert(pid, st);
            }
        }
        out
    }

    fn roots_of(&self, sel: &ProcessSelector, table: &HashMap<i32, PidStat>) -> Vec<i32> {
        let mut roots: Vec<i32> = sel.pids.iter().copied().filter(|p| table.contains_key(p)).collect();
        if let Some(re) = &sel.pattern {
            // perflab itself and its ancestors (e.g. `sh -c "perflab monitor --match X"`, whose
            // command line contains X) are never matches.
            let mut mine = HashSet::from([self.me]);
            let mut p = self.me;
            while let Some(st) = table.get(&p) {
                if st.ppid <= 0 || !mine.insert(st.ppid) {
                    break;
                }
                p = st.ppid;
            }
            let mut matched: Vec<i32> = Vec::new();
            for (pid, st) in table {
                if mine.contains(pid) {
                    continue;
                }
                let hit = self
                    .cmdlines
                    .get(&(*pid, st.starttime))
                    .is_some_and(|c| !c.is_empty() && re.is_match(c));
                if hit {
                    matched.push(*pid);
                }
            }
            // A match whose parent also matches is counted through its parent's tree.
            let set: HashSet<i32> = matched.iter().copied().collect();
            roots.extend(matched.iter().copied().filter(|p| !set.contains(&table[p].ppid)));
        }
        roots.sort_unstable();
        roots.dedup();
        roots
    }

    fn counters(&self, pid: i32, st: &PidStat, taskstats: Option<&mut Taskstats>) -> Counters {
        let io = self.root.read(&format!("proc/{pid}/io")).unwrap_or_default();
        // The whole process's switches (every thread, exited ones too); else its main thread's.
        let (vcs, nvcs) = taskstats.and_then(|t| t.switches(pid)).unwrap_or_else(|| {
            let status = self.root.read(&format!("proc/{pid}/status")).unwrap_or_default();
            (
                colon_field(&status, "voluntary_ctxt_switches").unwrap_or(0),
                colon_field(&status, "nonvoluntary_ctxt_switches").unwrap_or(0),
            )
        });
        Counters {
            utime: st.utime,
            stime: st.stime,
            vcs,
            nvcs,
            read: colon_field(&io, "read_bytes").unwrap_or(0),
            write: colon_field(&io, "write_bytes").unwrap_or(0),
        }
    }
}

/// The number after `key:` in a `key: value` file, without building a map of every line.
fn colon_field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        if k.trim() != key {
            return None;
        }
        v.split_ascii_whitespace().next()?.parse().ok()
    })
}

/// `roots` and their descendants, not entering the subtrees rooted at `fenced` pids.
fn tree(roots: &[i32], children: &HashMap<i32, Vec<i32>>, fenced: &HashSet<i32>) -> Vec<i32> {
    let mut out = Vec::new();
    let mut stack: Vec<i32> = roots.to_vec();
    let mut seen = HashSet::new();
    while let Some(p) = stack.pop() {
        if !seen.insert(p) {
            continue;
        }
        out.push(p);
        for c in children.get(&p).into_iter().flatten() {
            if !fenced.contains(c) {
                stack.push(*c);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colon_fields_by_exact_name() {
        let status = "Name:\tsh\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(colon_field(status, "voluntary_ctxt_switches"), Some(12));
        assert_eq!(colon_field(status, "nonvoluntary_ctxt_switches"), Some(3));
        assert_eq!(colon_field(status, "ctxt_switches"), None);
    }

    #[test]
    fn trees_stop_at_fenced_subtrees() {
        let mut children = HashMap::new();
        children.insert(1, vec![2, 3]);
        children.insert(3, vec![4]);
        let mut got = tree(&[1], &children, &HashSet::from([3]));
        got.sort_unstable();
        assert_eq!(got, [1, 2]);
        let mut all = tree(&[1], &children, &HashSet::new());
        all.sort_unstable();
        assert_eq!(all, [1, 2, 3, 4]);
    }
}
