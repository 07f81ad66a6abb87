//! Per-process figures, aggregated over whole process trees (pidstat's formulas).
//!
//! Each tick reads `/proc/PID/{stat,status,io}` of the followed processes only. With a kernel that
//! shows each thread's children (`/proc/PID/task/TID/children`) and trees of at most
//! `WALK_MAX_THREADS` threads, the trees are walked from their roots each tick (a process forked
//! inside one is counted at the next tick); the roots are the selectors' pids (`--pid`, and
//! `perflab run`'s selections: `/proc` is never listed) and the processes whose command line
//! matches a pattern (`--match`: each new process's command line is matched once, when a listing
//! of `/proc` finds it, and `/proc` is listed at most every few seconds). Larger trees are found
//! from the process table (`proc_table`), listed whenever a process may have started or ended,
//! and worked out again only when the table changed. Each
//! selector sums its members: its pids, the processes whose command line matches its pattern, and
//! all their descendants, less any subtree that another selector roots (so the load generator's
//! figures never include the target it started).

use super::cgroup_cpu::{CpuLimits, Throttle};
use super::parse::PidStat;
use super::proc_table::ProcTable;
use super::system::Root;
use super::taskstats::Taskstats;
use std::collections::{HashMap, HashSet};

/// Trees with more threads than this are found by listing `/proc` rather than by reading each
/// thread's children list.
const WALK_MAX_THREADS: u64 = 64;

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
    hz: f64,
    page_mb: f64,
    me: i32,
    table: ProcTable,
    /// Each selector's members as last worked out (valid while the table has not changed), and
    /// the pids in some tree.
    members: Option<Vec<Vec<i32>>>,
    followed: HashSet<i32>,
    /// The kernel shows children lists: the trees can be walked from their roots.
    walkable: bool,
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
        let patterns = selectors
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((i, s.pattern.clone()?)))
            .collect();
        let table = ProcTable::new(root.clone(), patterns);
        let walkable = table.can_walk();
        ProcessTracker {
            table,
            walkable,
            root,
            selectors,
            prev: HashMap::new(),
            prev_uptime_ticks: None,
            hz,
            page_mb: page / 1_048_576.0,
            me: std::process::id() as i32,
            members: None,
            followed: HashSet::new(),
            throttles,
            taskstats,
        }
    }

    /// Read the followed processes and append the figures of the interval since the last call
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
        let threads: u64 = self
            .followed
            .iter()
            .filter_map(|p| self.table.entries.get(p))
            .map(|e| e.stat.threads)
            .sum();
        let members = if self.walkable && threads <= WALK_MAX_THREADS {
            self.walked()
        } else {
            if self.table.refresh(&self.followed) {
                self.members = None;
            }
            match self.members.take() {
                Some(m) => m,
                None => self.trees(),
            }
        };
        // A process that joined a tree since the last tick has its `stat` read now.
        for pid in members.iter().flatten() {
            self.table.reread(*pid);
        }
        let mut next_prev = HashMap::new();
        let mut taskstats = self.taskstats.take();
        for (i, sel) in self.selectors.iter().enumerate() {
            let mut live = 0usize;
            let (mut rss, mut threads) = (0.0, 0u64);
            let mut d = Counters::default();
            for pid in &members[i] {
                let Some(st) = self.table.entries.get(pid).map(|e| e.stat) else {
                    continue;
                };
                live += 1;
                let c = self.counters(*pid, &st, taskstats.as_mut());
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
                if first || live > 0 {
                    self.throttles[i].sample(limits, &format!("proc_{}_", sel.label), first, out);
                }
            }
            if first {
                continue;
            }
            let n = |k: &str| format!("proc_{}_{k}", sel.label);
            out.push((n("count"), live as f64));
            if live == 0 {
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
        // A member that ended (its `stat` unreadable above) changed the table: the trees are worked
        // out again next tick.
        let ended = members.iter().flatten().any(|p| !self.table.entries.contains_key(p));
        self.followed = members
            .iter()
            .flatten()
            .copied()
            .filter(|p| self.table.entries.contains_key(p))
            .collect();
        self.members = (!ended).then_some(members);
    }

    /// The members found from the selectors' roots (their pids, the processes matching their
    /// pattern) through the kernel's children lists, walked again only when a process may have
    /// started or ended.
    fn walked(&mut self) -> Vec<Vec<i32>> {
        self.table.new_tick();
        let moved = self.table.moved();
        let mut changed = self.table.discover(moved);
        for pid in &self.followed {
            changed |= self.table.reread(*pid);
        }
        // A matched process that ended, or whose pid now belongs to another process.
        for pid in self.table.matched() {
            changed |= self.table.reread(pid);
        }
        if let Some(m) = self.members.take().filter(|_| !moved && !changed) {
            return m;
        }
        for pid in self.selectors.iter().flat_map(|s| &s.pids) {
            self.table.reread(*pid);
        }
        let roots: Vec<Vec<i32>> = (0..self.selectors.len()).map(|i| self.roots_of(i)).collect();
        (0..roots.len()).map(|i| self.table.walk(&roots[i], &fenced(&roots, i))).collect()
    }

    /// Every selector's members: its roots and their descendants, less the subtrees other
    /// selectors root.
    fn trees(&self) -> Vec<Vec<i32>> {
        let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
        for (pid, e) in &self.table.entries {
            children.entry(e.stat.ppid).or_default().push(*pid);
        }
        let roots: Vec<Vec<i32>> = (0..self.selectors.len()).map(|i| self.roots_of(i)).collect();
        (0..self.selectors.len())
            .map(|i| tree(&roots[i], &children, &fenced(&roots, i)))
            .collect()
    }

    fn roots_of(&self, i: usize) -> Vec<i32> {
        let sel = &self.selectors[i];
        let table = &self.table.entries;
        let mut roots: Vec<i32> = sel.pids.iter().copied().filter(|p| table.contains_key(p)).collect();
        if sel.pattern.is_some() {
            // perflab itself and its ancestors (e.g. `sh -c "perflab monitor --match X"`, whose
            // command line contains X) are never matches.
            let mut mine = HashSet::from([self.me]);
            let mut p = self.me;
            while let Some(e) = table.get(&p) {
                if e.stat.ppid <= 0 || !mine.insert(e.stat.ppid) {
                    break;
                }
                p = e.stat.ppid;
            }
            let matched: HashSet<i32> = table
                .iter()
                .filter(|(pid, e)| e.hits.contains(&i) && !mine.contains(pid))
                .map(|(pid, _)| *pid)
                .collect();
            // A match whose parent also matches is counted through its parent's tree.
            roots.extend(matched.iter().copied().filter(|p| !matched.contains(&table[p].stat.ppid)));
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

/// The roots of every selector but the `i`-th: its tree stops at them (another selector's subtree).
fn fenced(roots: &[Vec<i32>], i: usize) -> HashSet<i32> {
    roots
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != i)
        .flat_map(|(_, r)| r.iter().copied())
        .collect()
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

    /// A fake `/proc` holding this process (its command line matches too: never counted), with
    /// children lists, so that the trees are walked.
    struct Fake(tempfile::TempDir);
    impl Fake {
        fn new() -> Fake {
            let d = tempfile::tempdir().unwrap();
            let f = Fake(d);
            f.loadavg(3, 100);
            f.process(1, 0, 1, "init", &[]);
            f.process(std::process::id() as i32, 1, 2, "perflab monitor --match worker", &[]);
            f
        }
        fn loadavg(&self, threads: u64, last: u64) {
            std::fs::create_dir_all(self.0.path().join("proc")).unwrap();
            std::fs::write(self.0.path().join("proc/loadavg"), format!("0.00 0.00 0.00 1/{threads} {last}\n")).unwrap();
        }
        fn process(&self, pid: i32, ppid: i32, start: u64, cmd: &str, children: &[i32]) {
            let dir = self.0.path().join(format!("proc/{pid}"));
            std::fs::create_dir_all(dir.join(format!("task/{pid}"))).unwrap();
            let stat = format!("{pid} (x) S {ppid} 1 1 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 {start} 1000 25 0");
            std::fs::write(dir.join("stat"), stat).unwrap();
            std::fs::write(dir.join("cmdline"), cmd.replace(' ', "\0")).unwrap();
            let list: String = children.iter().map(|c| format!("{c} ")).collect();
            std::fs::write(dir.join(format!("task/{pid}/children")), list).unwrap();
        }
        fn end(&self, pid: i32) {
            std::fs::remove_dir_all(self.0.path().join(format!("proc/{pid}"))).unwrap();
        }
        /// A tracker of the processes matching `worker`, listing `/proc` only at its first tick.
        fn tracker(&self) -> ProcessTracker {
            let sel = ProcessSelector::matching("match", regex::Regex::new("worker").unwrap());
            let mut t = ProcessTracker::new(Root(self.0.path().into()), vec![sel]);
            assert!(t.walkable, "the fake shows children lists");
            t.table.discover_every = std::time::Duration::from_secs(3600);
            t.sample(1.0, true, &mut Vec::new());
            t
        }
    }

    fn count(t: &mut ProcessTracker) -> f64 {
        let mut out = Vec::new();
        t.sample(1.0, false, &mut out);
        out.iter().find(|(n, _)| n == "proc_match_count").map(|(_, v)| *v).unwrap()
    }

    #[test]
    fn a_matched_process_that_ends_or_whose_pid_is_reused_leaves_at_the_next_tick() {
        let f = Fake::new();
        f.process(10, 1, 50, "worker --a", &[11]);
        f.process(11, 10, 51, "sleep 9", &[]);
        f.process(20, 1, 60, "worker --b", &[]);
        let mut t = f.tracker();
        assert_eq!(count(&mut t), 3.0, "10 and its child 11, 20; not this process");
        f.end(20);
        assert_eq!(count(&mut t), 2.0, "20 ended");
        // Pid 10 ends and its pid is taken by a process that does not match; 11 is reparented.
        f.end(10);
        f.process(10, 1, 90, "sleep 5", &[]);
        f.process(11, 1, 51, "sleep 9", &[]);
        assert_eq!(count(&mut t), 0.0, "pid 10 is another process now");
        assert!(t.table.entries[&10].hits.is_empty());
    }

    #[test]
    fn a_child_forked_by_a_matched_process_is_counted_at_the_next_tick_without_listing_proc() {
        let f = Fake::new();
        f.process(10, 1, 50, "worker", &[]);
        let mut t = f.tracker();
        assert_eq!(count(&mut t), 1.0);
        // 10 forks 12; an unrelated worker 30 starts too.
        f.process(12, 10, 70, "sleep 9", &[]);
        f.process(10, 1, 50, "worker", &[12]);
        f.process(30, 1, 71, "worker --other", &[]);
        f.loadavg(5, 30);
        assert_eq!(count(&mut t), 2.0, "the child is walked to");
        assert!(!t.table.entries.contains_key(&30), "/proc was not listed");
        // The next listing finds 30.
        t.table.discover_every = std::time::Duration::ZERO;
        assert_eq!(count(&mut t), 3.0);
    }
}
