//! A profile of the system under test: folded stacks (`root;caller;callee`, the format of Brendan
//! Gregg's FlameGraph and of inferno), each weighed in samples and in time, with where and when
//! they were taken. The runner fills one per trial and kind, the store keeps it, the report draws it.

use serde::{Deserialize, Serialize};

/// What a profile measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileKind {
    /// Where the CPU time went: stacks sampled at a fixed frequency while on a CPU.
    OnCpu,
    /// Where the threads waited: the stack of every switch off a CPU, weighed by the time until
    /// the thread ran again.
    OffCpu,
}

impl ProfileKind {
    pub const ALL: [ProfileKind; 2] = [ProfileKind::OnCpu, ProfileKind::OffCpu];

    /// Its name in plans, the store and file names: `on_cpu`, `off_cpu`.
    pub const fn name(self) -> &'static str {
        match self {
            ProfileKind::OnCpu => "on_cpu",
            ProfileKind::OffCpu => "off_cpu",
        }
    }

    /// In words: "on-CPU", "off-CPU".
    pub const fn words(self) -> &'static str {
        match self {
            ProfileKind::OnCpu => "on-CPU",
            ProfileKind::OffCpu => "off-CPU",
        }
    }

    pub fn parse(name: &str) -> Option<ProfileKind> {
        ProfileKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// One folded stack: its frames from the root, joined by `;`, and its weights.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoldedStack {
    pub stack: String,
    /// Samples (on-CPU) or switches off a CPU (off-CPU) with this stack.
    pub samples: u64,
    /// Time: on-CPU, the samples' periods; off-CPU, the time off a CPU (nanoseconds).
    pub ns: u64,
}

/// The profile of one trial (or of `perflab profile`): its stacks and how they were taken.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub kind: Option<ProfileKind>,
    /// What was profiled: "process tree of PID 1234", "cgroup /perflab/x", "system".
    pub scope: String,
    /// On-CPU: the sampling frequency asked for (Hz).
    pub frequency_hz: Option<f64>,
    /// The profiled window, seconds since the trial started (its load phase).
    pub window: (f64, f64),
    /// The first and the last sample's time, seconds since the trial started (None: no sample).
    pub sampled: Option<(f64, f64)>,
    /// Every distinct stack, in name order.
    pub stacks: Vec<FoldedStack>,
    /// What is missing or was dropped, in words (perf absent, samples lost, symbols absent).
    pub notes: Vec<String>,
}

impl Profile {
    pub fn total_samples(&self) -> u64 {
        self.stacks.iter().map(|s| s.samples).sum()
    }

    pub fn total_ns(&self) -> u64 {
        self.stacks.iter().map(|s| s.ns).sum()
    }

    /// The stacks as folded text, one `stack weight` a line (weight in samples, or in
    /// nanoseconds with `in_time`): the input of `inferno-flamegraph` and `flamegraph.pl`.
    pub fn folded(&self, in_time: bool) -> String {
        let mut o = String::new();
        for s in &self.stacks {
            let w = if in_time { s.ns } else { s.samples };
            if w > 0 {
                o.push_str(&s.stack);
                o.push(' ');
                o.push_str(&w.to_string());
                o.push('\n');
            }
        }
        o
    }

    /// The stacks written one `stack samples ns` a line: what the store keeps (both weights).
    pub fn to_lines(&self) -> String {
        let mut o = String::new();
        for s in &self.stacks {
            o.push_str(&format!("{} {} {}\n", s.stack, s.samples, s.ns));
        }
        o
    }

    /// The stacks of [`Profile::to_lines`]; None when a line is not `stack samples ns`.
    pub fn stacks_from_lines(text: &str) -> Option<Vec<FoldedStack>> {
        let mut out = Vec::new();
        for line in text.lines().filter(|l| !l.is_empty()) {
            let (rest, ns) = line.rsplit_once(' ')?;
            let (stack, samples) = rest.rsplit_once(' ')?;
            out.push(FoldedStack {
                stack: stack.to_string(),
                samples: samples.parse().ok()?,
                ns: ns.parse().ok()?,
            });
        }
        Some(out)
    }
}

/// Each frame's share of a profile's weight: `self` (the frame on top of the stack) and `total`
/// (the frame anywhere in the stack, counted once per stack), by weight (samples or time). Weighed
/// in time (off-CPU), `self` is the innermost frame outside the kernel (kernel frames end in
/// `_[k]`): the scheduler's frames are on top of every off-CPU stack, and the question is which
/// code waited.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FrameShare {
    pub frame: String,
    pub self_pct: f64,
    pub total_pct: f64,
}

/// The frames with the largest self share first (ties: the larger total, then the name), at most `n`.
pub fn top_frames(stacks: &[FoldedStack], in_time: bool, n: usize) -> Vec<FrameShare> {
    use std::collections::{BTreeMap, BTreeSet};
    let weight = |s: &FoldedStack| if in_time { s.ns } else { s.samples };
    let total: u64 = stacks.iter().map(weight).sum();
    if total == 0 {
        return Vec::new();
    }
    let mut own: BTreeMap<&str, u64> = BTreeMap::new();
    let mut all: BTreeMap<&str, u64> = BTreeMap::new();
    for s in stacks {
        let w = weight(s);
        let frames: Vec<&str> = s.stack.split(';').collect();
        let outside = |f: &&&str| !in_time || !f.ends_with("_[k]");
        if let Some(leaf) = frames.iter().rev().find(outside).or(frames.last()) {
            *own.entry(leaf).or_default() += w;
        }
        let distinct: BTreeSet<&str> = frames.into_iter().collect();
        for f in distinct {
            *all.entry(f).or_default() += w;
        }
    }
    let pct = |w: u64| 100.0 * w as f64 / total as f64;
    let mut rows: Vec<FrameShare> = all
        .iter()
        .map(|(f, t)| FrameShare {
            frame: f.to_string(),
            self_pct: pct(own.get(f).copied().unwrap_or(0)),
            total_pct: pct(*t),
        })
        .collect();
    rows.sort_by(|a, b| {
        b.self_pct
            .total_cmp(&a.self_pct)
            .then(b.total_pct.total_cmp(&a.total_pct))
            .then(a.frame.cmp(&b.frame))
    });
    rows.truncate(n);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(stack: &str, samples: u64) -> FoldedStack {
        FoldedStack {
            stack: stack.into(),
            samples,
            ns: samples * 10,
        }
    }

    #[test]
    fn lines_round_trip_with_spaces_in_frames() {
        let p = Profile {
            stacks: vec![st("main;operator new(unsigned long);malloc", 3), st("main;work", 7)],
            ..Profile::default()
        };
        assert_eq!(Profile::stacks_from_lines(&p.to_lines()), Some(p.stacks.clone()));
        assert_eq!(p.folded(false), "main;operator new(unsigned long);malloc 3\nmain;work 7\n");
        assert_eq!(p.total_samples(), 10);
        assert_eq!(p.total_ns(), 100);
        assert_eq!(Profile::stacks_from_lines("main 3\n"), None);
    }

    #[test]
    fn self_and_total_shares() {
        // main → work (6 on top), main → work → hash (3), main (1); recursion counted once.
        let stacks = [st("main;work", 6), st("main;work;work;hash", 3), st("main", 1)];
        let top = top_frames(&stacks, false, 10);
        assert_eq!(top[0].frame, "work");
        assert!((top[0].self_pct - 60.0).abs() < 1e-9 && (top[0].total_pct - 90.0).abs() < 1e-9);
        assert_eq!(top[1].frame, "hash");
        assert!((top[1].self_pct - 30.0).abs() < 1e-9);
        let main = top.iter().find(|f| f.frame == "main").expect("main");
        assert!((main.total_pct - 100.0).abs() < 1e-9 && (main.self_pct - 10.0).abs() < 1e-9);
        assert!(top_frames(&[], true, 5).is_empty());
        // Off-CPU (by time), the innermost frame outside the kernel is the one that waited.
        let off = [
            st("app;main;nap;clock_nanosleep;do_nanosleep_[k];schedule_[k]", 9),
            st("app;main;schedule_[k]", 1),
        ];
        let top = top_frames(&off, true, 2);
        assert_eq!((top[0].frame.as_str(), top[1].frame.as_str()), ("clock_nanosleep", "main"));
        assert!((top[0].self_pct - 90.0).abs() < 1e-9);
    }
}
