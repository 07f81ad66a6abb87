//! Per-process figures, aggregated over whole process trees (pidstat's formulas).
//!
//! Each tick scans `/proc/*/stat` once (this kernel has no `task/*/children`), builds the parent
//! links, and sums the members of every selector: its pids, the processes whose command line
//! matches its pattern, and all their descendants, less any subtree that another selector roots
//! (so the load generator's figures never include the target it started).

use super::parse::{self, PidStat};
use super::system::Root;
use std::collections::{HashMap, HashSet};

/// Which processes a group of columns (`proc_<label>_*`) covers.
#[derive(Clone, Debug)]
pub struct ProcessSelector {
    pub label: String,
    pub pids: Vec<i32>,
    pub pattern: Option<regex::Regex>,
}

impl ProcessSelector {
    /// This process and its children (minus trees other selectors root).
    pub fn own_process(label: &str) -> ProcessSelector {
        ProcessSelector {
            label: label.into(),
            pids: vec![std::process::id() as i32],
            pattern: None,
        }
    }
    /// `pid` and all its descendants.
    pub fn tree(label: &str, pid: i32) -> ProcessSelector {
        ProcessSelector {
            label: label.into(),
            pids: vec![pid],
            pattern: None,
        }
    }
    /// Every process whose command line matches, with its descendants.
    pub fn matching(label: &str, pattern: regex::Regex) -> ProcessSelector {
        ProcessSelector {
            label: label.into(),
            pids: Vec::new(),
            pattern: Some(pattern),
        }
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
}

impl ProcessTracker {
    pub fn new(root: Root, selectors: Vec<ProcessSelector>) -> ProcessTracker {
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as f64;
        ProcessTracker {
            root,
            selectors,
            prev: HashMap::new(),
            prev_uptime_ticks: None,
            cmdlines: HashMap::new(),
            hz,
            page_mb: page / 1_048_576.0,
            me: std::process::id() as i32,
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
                    self.cmdlines
                        .insert((*pid, st.starttime), cmd.trim().to_string());
                }
            }
        }
        let roots: Vec<Vec<i32>> = self
            .selectors
            .iter()
            .map(|s| self.roots_of(s, &table))
            .collect();
        let mut next_prev = HashMap::new();
        for (i, sel) in self.selectors.iter().enumerate() {
            let fenced: HashSet<i32> = roots
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .flat_map(|(_, r)| r.iter().copied())
                .collect();
            let members = tree(&roots[i], &children, &fenced);
            let (mut rss, mut threads) = (0.0, 0u64);
            let mut d = Counters::default();
            for pid in &members {
                let Some(st) = table.get(pid) else { continue };
                let c = self.counters(*pid, st);
                let key = (*pid, st.starttime);
                let base = match self.prev.get(&key) {
                    Some(p) => Some(*p),
                    // Born during the interval: everything it used so far belongs to it.
                    None if self.prev_uptime_ticks.is_some_and(|u| st.starttime >= u) => {
                        Some(Counters::default())
                    }
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
            if first {
                continue;
            }
            let n = |k: &str| format!("proc_{}_{k}", sel.label);
            out.push((
                n("count"),
                members.iter().filter(|p| table.contains_key(p)).count() as f64,
            ));
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
        self.prev = next_prev;
        self.prev_uptime_ticks = uptime_ticks;
        self.cmdlines
            .retain(|k, _| table.get(&k.0).is_some_and(|s| s.starttime == k.1));
    }

    fn scan(&self) -> HashMap<i32, PidStat> {
        let mut out = HashMap::new();
        let Ok(dir) = std::fs::read_dir(self.root.path("proc")) else {
            return out;
        };
        for e in dir.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            if let Some(st) = self
                .root
                .read(&format!("proc/{pid}/stat"))
                .and_then(|t| parse::pid_stat(&t))
            {
                out.insert(pid, st);
            }
        }
        out
    }

    fn roots_of(&self, sel: &ProcessSelector, table: &HashMap<i32, PidStat>) -> Vec<i32> {
        let mut roots: Vec<i32> = sel
            .pids
            .iter()
            .copied()
            .filter(|p| table.contains_key(p))
            .collect();
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
            roots.extend(
                matched
                    .iter()
                    .copied()
                    .filter(|p| !set.contains(&table[p].ppid)),
            );
        }
        roots.sort_unstable();
        roots.dedup();
        roots
    }

    fn counters(&self, pid: i32, st: &PidStat) -> Counters {
        let status = self
            .root
            .read(&format!("proc/{pid}/status"))
            .map(|t| parse::colon_kv(&t))
            .unwrap_or_default();
        let io = self
            .root
            .read(&format!("proc/{pid}/io"))
            .map(|t| parse::colon_kv(&t))
            .unwrap_or_default();
        Counters {
            utime: st.utime,
            stime: st.stime,
            vcs: status.get("voluntary_ctxt_switches").copied().unwrap_or(0),
            nvcs: status
                .get("nonvoluntary_ctxt_switches")
                .copied()
                .unwrap_or(0),
            read: io.get("read_bytes").copied().unwrap_or(0),
            write: io.get("write_bytes").copied().unwrap_or(0),
        }
    }
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
