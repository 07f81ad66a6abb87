//! The process table the per-process figures are built on, kept up to date without reading every
//! process each tick.
//!
//! `/proc` is listed only when a process may have started or ended: when `/proc/loadavg`'s thread
//! count or last pid moved since the last listing, and in any case every `RELIST`. A listing reads
//! `/proc/PID/stat` only for the pids it has not seen (a directory entry whose inode changed is a
//! new process under a reused pid), and a pattern is tried once per new process, on its
//! `/proc/PID/cmdline`, the answer remembered. A process outside every tree keeps its parent until
//! that parent ends, so when a listing finds a pid gone, its children's `stat` is read again (they
//! have been reparented). The followed processes' `stat` is read every tick by the caller.
//!
//! Small trees are instead walked every tick from their roots through the kernel's children lists
//! (`walk`): a process forked inside a tree is found at the next tick without listing `/proc`.
//! Their roots are the selectors' pids and the processes matching a pattern; for these, `/proc` is
//! listed (`discover`) at the first tick and then at most every `DISCOVER_EVERY`, when a process
//! may have started since.

use super::parse::{self, PidStat};
use super::system::Root;
use std::collections::{HashMap, HashSet};
use std::os::unix::fs::DirEntryExt;
use std::time::{Duration, Instant};

/// How often `/proc` is listed again when nothing says a process started or ended.
const RELIST: Duration = Duration::from_secs(5);
/// When trees are walked, the least time between two listings of `/proc` for new matches.
const DISCOVER_EVERY: Duration = Duration::from_secs(3);

/// One process: its `stat` line (as last read), the inode of its `/proc` entry, and which
/// selectors' patterns its command line matched when it first appeared.
#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub stat: PidStat,
    ino: u64,
    pub hits: Vec<usize>,
}

pub(super) struct ProcTable {
    root: Root,
    /// (selector index, pattern) of every selector with a pattern.
    patterns: Vec<(usize, regex::Regex)>,
    pub entries: HashMap<i32, Entry>,
    /// `/proc/loadavg`'s (threads, last pid) at the last listing, and when that was.
    marker: Option<(u64, u64)>,
    listed: Option<Instant>,
    /// Pids gone since the last listing whose children have not been read again yet.
    gone: Vec<i32>,
    /// Pids whose `stat` was read during the current tick.
    pub fresh: HashSet<i32>,
    /// When `discover` last listed `/proc`, whether a process may have started since, and the
    /// least time between two of its listings.
    discovered: Option<Instant>,
    pending: bool,
    pub discover_every: Duration,
}

impl ProcTable {
    pub fn new(root: Root, patterns: Vec<(usize, regex::Regex)>) -> ProcTable {
        ProcTable {
            root,
            patterns,
            entries: HashMap::new(),
            marker: None,
            listed: None,
            gone: Vec::new(),
            fresh: HashSet::new(),
            discovered: None,
            pending: false,
            discover_every: DISCOVER_EVERY,
        }
    }

    /// While trees are walked (see [`ProcTable::walk`]): list `/proc` for processes whose command
    /// line matches a pattern, at the first call and then at most every `discover_every`, when a
    /// process may have started since (`moved`, from [`ProcTable::moved`]). A process forked
    /// inside a followed tree needs no listing: the walk finds it. True when the listing changed
    /// the table.
    pub fn discover(&mut self, moved: bool) -> bool {
        self.pending |= moved;
        let due = match self.discovered {
            None => true,
            Some(t) => self.pending && t.elapsed() >= self.discover_every,
        };
        // Reparented processes need no new `stat`: the walk follows the children lists.
        self.gone.clear();
        if !due || self.patterns.is_empty() {
            return false;
        }
        self.discovered = Some(Instant::now());
        self.pending = false;
        self.list(false)
    }

    /// The pids whose command line matched some pattern.
    pub fn matched(&self) -> Vec<i32> {
        self.entries.iter().filter(|(_, e)| !e.hits.is_empty()).map(|(p, _)| *p).collect()
    }

    /// Bring the table up to date for this tick: list `/proc` if a process may have started or
    /// ended, and read `followed` again. True when the set of processes or a parent link changed.
    pub fn refresh(&mut self, followed: &HashSet<i32>) -> bool {
        self.fresh.clear();
        let mut changed = self.moved() && self.list(true);
        for pid in followed {
            changed |= self.reread(*pid);
        }
        changed
    }

    /// Whether a process may have started or ended since the last call that said so (or `RELIST`
    /// has passed since): `/proc/loadavg`'s thread count or last pid moved.
    pub fn moved(&mut self) -> bool {
        let marker = self.root.read("proc/loadavg").and_then(|t| loadavg_marker(&t));
        let now = Instant::now();
        let due = marker.is_none() || marker != self.marker || self.listed.is_none_or(|t| now.duration_since(t) >= RELIST);
        if due {
            self.marker = marker;
            self.listed = Some(now);
        }
        due
    }

    /// Start a tick without listing (see [`ProcTable::walk`]).
    pub fn new_tick(&mut self) {
        self.fresh.clear();
    }

    /// Whether the kernel shows each thread's children (`/proc/PID/task/TID/children`).
    pub fn can_walk(&self) -> bool {
        let me = std::process::id();
        self.root.path(&format!("proc/{me}/task/{me}/children")).exists()
    }

    /// `roots` and their descendants found through `/proc/PID/task/TID/children`, not entering the
    /// subtrees rooted at `fenced` pids; each one's `stat` read now.
    pub fn walk(&mut self, roots: &[i32], fenced: &HashSet<i32>) -> Vec<i32> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut stack: Vec<i32> = roots.to_vec();
        while let Some(pid) = stack.pop() {
            if !seen.insert(pid) {
                continue;
            }
            self.reread(pid);
            let Some(threads) = self.entries.get(&pid).map(|e| e.stat.threads) else {
                continue;
            };
            out.push(pid);
            let tids: Vec<String> = if threads <= 1 {
                vec![pid.to_string()]
            } else {
                std::fs::read_dir(self.root.path(&format!("proc/{pid}/task")))
                    .map(|d| d.flatten().filter_map(|e| e.file_name().into_string().ok()).collect())
                    .unwrap_or_default()
            };
            for tid in tids {
                let text = self.root.read(&format!("proc/{pid}/task/{tid}/children")).unwrap_or_default();
                stack.extend(
                    text.split_ascii_whitespace()
                        .filter_map(|c| c.parse::<i32>().ok())
                        .filter(|c| !fenced.contains(c)),
                );
            }
        }
        out
    }

    /// Read `pid`'s `stat` now (unless done this tick). True when that changed the table: the
    /// process ended, or its parent or its start time (a reused pid) differs.
    pub fn reread(&mut self, pid: i32) -> bool {
        if !self.fresh.insert(pid) {
            return false;
        }
        let Some(st) = self.read_stat(pid) else {
            return self.forget(pid);
        };
        match self.entries.get_mut(&pid) {
            Some(e) if e.stat.starttime == st.starttime => {
                let moved = e.stat.ppid != st.ppid;
                e.stat = st;
                moved
            }
            _ => {
                let ino = self.entries.get(&pid).map_or(0, |e| e.ino);
                let hits = self.hits(pid);
                self.entries.insert(pid, Entry { stat: st, ino, hits });
                true
            }
        }
    }

    fn forget(&mut self, pid: i32) -> bool {
        if self.entries.remove(&pid).is_some() {
            self.gone.push(pid);
            true
        } else {
            false
        }
    }

    /// List `/proc`: add the new pids, drop the gone ones, and (`orphans`) read again the
    /// children of the gone ones. True when anything changed.
    fn list(&mut self, orphans: bool) -> bool {
        let Ok(dir) = std::fs::read_dir(self.root.path("proc")) else {
            return false;
        };
        let mut changed = false;
        let mut seen = HashSet::with_capacity(self.entries.len() + 16);
        for e in dir.flatten() {
            let name = e.file_name();
            let Some(pid) = name.to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            seen.insert(pid);
            let ino = e.ino();
            if self.entries.get(&pid).is_some_and(|k| k.ino == ino) {
                continue;
            }
            changed |= self.reread(pid);
            if let Some(k) = self.entries.get_mut(&pid) {
                k.ino = ino;
            }
        }
        let before = self.entries.len();
        let gone: Vec<i32> = self.entries.keys().filter(|p| !seen.contains(p)).copied().collect();
        for pid in gone {
            self.forget(pid);
        }
        changed |= self.entries.len() != before;
        if !orphans {
            self.gone.clear();
        } else if !self.gone.is_empty() {
            let gone: HashSet<i32> = std::mem::take(&mut self.gone).into_iter().collect();
            let orphans: Vec<i32> = self
                .entries
                .iter()
                .filter(|(_, e)| gone.contains(&e.stat.ppid))
                .map(|(p, _)| *p)
                .collect();
            for pid in orphans {
                changed |= self.reread(pid);
            }
        }
        changed
    }

    fn read_stat(&self, pid: i32) -> Option<PidStat> {
        let mut path = String::with_capacity(24);
        use std::fmt::Write;
        let _ = write!(path, "proc/{pid}/stat");
        self.root.read(&path).and_then(|t| parse::pid_stat(&t))
    }

    /// The selectors whose pattern matches `pid`'s command line (read once, when it appears).
    fn hits(&self, pid: i32) -> Vec<usize> {
        if self.patterns.is_empty() {
            return Vec::new();
        }
        let cmd = self
            .root
            .read(&format!("proc/{pid}/cmdline"))
            .unwrap_or_default()
            .replace('\0', " ");
        let cmd = cmd.trim();
        if cmd.is_empty() {
            return Vec::new();
        }
        self.patterns.iter().filter(|(_, re)| re.is_match(cmd)).map(|(i, _)| *i).collect()
    }
}

/// `/proc/loadavg`'s thread count and last pid ("0.00 0.01 0.05 1/123 4567"): either moves when a
/// process starts or ends.
fn loadavg_marker(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_ascii_whitespace().skip(3);
    let threads = f.next()?.split_once('/')?.1.parse().ok()?;
    let last = f.next()?.parse().ok()?;
    Some((threads, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loadavg_marker_is_threads_and_last_pid() {
        assert_eq!(loadavg_marker("0.52 0.58 0.59 3/1180 98765\n"), Some((1180, 98765)));
        assert_eq!(loadavg_marker("0.52 0.58 0.59\n"), None);
    }

    /// A fake `/proc`: pid → (ppid, start time, command line).
    struct Fake(tempfile::TempDir);
    impl Fake {
        fn new() -> Fake {
            let d = tempfile::tempdir().unwrap();
            std::fs::create_dir(d.path().join("proc")).unwrap();
            Fake(d)
        }
        fn loadavg(&self, threads: u64, last: u64) {
            std::fs::write(self.0.path().join("proc/loadavg"), format!("0.00 0.00 0.00 1/{threads} {last}\n")).unwrap();
        }
        fn process(&self, pid: i32, ppid: i32, start: u64, cmd: &str) {
            let dir = self.0.path().join(format!("proc/{pid}"));
            std::fs::create_dir_all(&dir).unwrap();
            let stat = format!("{pid} (x) S {ppid} 1 1 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 {start} 1000 25 0");
            std::fs::write(dir.join("stat"), stat).unwrap();
            std::fs::write(dir.join("cmdline"), cmd.replace(' ', "\0")).unwrap();
        }
        fn end(&self, pid: i32) {
            std::fs::remove_dir_all(self.0.path().join(format!("proc/{pid}"))).unwrap();
        }
        fn table(&self) -> ProcTable {
            ProcTable::new(Root(self.0.path().into()), vec![(0, regex::Regex::new("worker").unwrap())])
        }
    }

    #[test]
    fn proc_is_listed_only_when_loadavg_says_a_process_started_or_ended() {
        let f = Fake::new();
        f.loadavg(3, 11);
        f.process(1, 0, 1, "init");
        f.process(10, 1, 50, "worker --x");
        f.process(11, 10, 60, "sleep 9");
        let mut t = f.table();
        assert!(t.refresh(&HashSet::new()));
        assert_eq!(t.entries.len(), 3);
        assert_eq!(t.entries[&10].hits, [0], "matched");
        assert!(t.entries[&11].hits.is_empty() && t.entries[&1].hits.is_empty());
        // A process appears but loadavg has not moved (a fake /proc can do that): no listing.
        f.process(12, 10, 70, "worker --y");
        assert!(!t.refresh(&HashSet::new()));
        assert!(!t.entries.contains_key(&12));
        // The last pid moved: listed, read, matched once.
        f.loadavg(4, 12);
        assert!(t.refresh(&HashSet::new()));
        assert_eq!(t.entries[&12].hits, [0]);
        // The parent ends and its child is reparented to 1: the listing finds 10 gone and reads
        // its children again.
        f.end(10);
        f.process(11, 1, 60, "sleep 9");
        f.process(12, 1, 70, "worker --y");
        f.loadavg(3, 12);
        assert!(t.refresh(&HashSet::new()));
        assert!(!t.entries.contains_key(&10));
        assert_eq!((t.entries[&11].stat.ppid, t.entries[&12].stat.ppid), (1, 1));
    }

    #[test]
    fn a_followed_pid_is_read_every_tick_and_a_reused_pid_is_matched_again() {
        let f = Fake::new();
        f.loadavg(2, 20);
        f.process(1, 0, 1, "init");
        f.process(20, 1, 50, "sleep 9");
        let mut t = f.table();
        t.refresh(&HashSet::new());
        assert!(t.entries[&20].hits.is_empty());
        // Pid 20 ends and a worker is born under the same pid between two ticks, the thread count
        // and the last pid as they were: the followed pid is read again, its start time differs.
        f.process(20, 1, 90, "worker");
        assert!(t.refresh(&HashSet::from([20])));
        assert_eq!(t.entries[&20].stat.starttime, 90);
        assert_eq!(t.entries[&20].hits, [0]);
        // A followed pid that ended leaves the table.
        f.end(20);
        assert!(t.refresh(&HashSet::from([20])));
        assert!(!t.entries.contains_key(&20));
    }

    #[test]
    fn trees_are_walked_through_every_threads_children_and_stop_at_fences() {
        let f = Fake::new();
        f.loadavg(5, 14);
        for (pid, ppid) in [(10, 1), (11, 10), (12, 10), (14, 12)] {
            f.process(pid, ppid, 50, "x");
        }
        // 12 has two threads; its child 14 was forked by thread 13.
        let twelve = f.0.path().join("proc/12");
        let stat = std::fs::read_to_string(twelve.join("stat"))
            .unwrap()
            .replace(" 20 0 1 0 ", " 20 0 2 0 ");
        std::fs::write(twelve.join("stat"), stat).unwrap();
        let children = |pid: i32, tid: i32, list: &str| {
            let d = f.0.path().join(format!("proc/{pid}/task/{tid}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("children"), list).unwrap();
        };
        children(10, 10, "11 12 ");
        children(11, 11, "");
        children(12, 12, "");
        children(12, 13, "14 ");
        children(14, 14, "");
        let mut t = f.table();
        let mut all = t.walk(&[10], &HashSet::new());
        all.sort_unstable();
        assert_eq!(all, [10, 11, 12, 14]);
        t.new_tick();
        let mut fenced = t.walk(&[10], &HashSet::from([12]));
        fenced.sort_unstable();
        assert_eq!(fenced, [10, 11]);
        assert_eq!(t.entries[&14].stat.ppid, 12, "each member's stat is read");
    }
}
