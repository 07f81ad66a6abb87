//! The CPU limits of a process tree that runs in cgroups of its own (the target of `perflab run`):
//! how many CPUs it may use (its CPU set, its quota), and the share of the quota's periods in which
//! the kernel throttled it (`cpu.stat`: `nr_periods`, `nr_throttled`, as below's `throttled_pct`).

use std::path::PathBuf;

/// What the runner knows of a target's CPU limits.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CpuLimits {
    /// The CPUs it may use: the fewer of its CPU set's size and its quota in CPUs.
    pub cpus: Option<f64>,
    /// The `cpu.stat` of the cgroup that enforces its quota (v1 `cpu` or v2 with `cpu.max`).
    pub stat: Option<PathBuf>,
}

/// (nr_periods, nr_throttled) from a `cpu.stat`; None when it has no quota periods.
pub fn periods(text: &str) -> Option<(u64, u64)> {
    let field = |k: &str| {
        text.lines().find_map(|l| {
            let (name, v) = l.split_once(' ')?;
            (name == k).then(|| v.trim().parse::<u64>().ok()).flatten()
        })
    };
    Some((field("nr_periods")?, field("nr_throttled")?))
}

/// The throttled share of the periods between two readings, in %: 0 when no period elapsed (the
/// tree did not run), None when a counter went back (a new cgroup).
pub fn throttled_pct(prev: (u64, u64), now: (u64, u64)) -> Option<f64> {
    let periods = now.0.checked_sub(prev.0)?;
    let throttled = now.1.checked_sub(prev.1)?;
    Some(if periods == 0 {
        0.0
    } else {
        100.0 * throttled as f64 / periods as f64
    })
}

/// Follows one tree's `cpu.stat` from tick to tick.
#[derive(Debug, Default)]
pub(super) struct Throttle {
    prev: Option<(u64, u64)>,
}

impl Throttle {
    /// Read `limits`' `cpu.stat` and append `{prefix}cpu_limit_pct` (100 × its CPUs) and
    /// `{prefix}throttled_pct` (since the previous reading; `first`: the priming read).
    pub fn sample(&mut self, limits: &CpuLimits, prefix: &str, first: bool, out: &mut Vec<(String, f64)>) {
        let now = limits
            .stat
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|t| periods(&t));
        let prev = std::mem::replace(&mut self.prev, now);
        if first {
            return;
        }
        if let Some(c) = limits.cpus {
            out.push((format!("{prefix}cpu_limit_pct"), 100.0 * c));
        }
        if let Some(pct) = prev.zip(now).and_then(|(p, n)| throttled_pct(p, n)) {
            out.push((format!("{prefix}throttled_pct"), pct));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttled_share_of_the_quota_periods() {
        // v1 cpu.stat, and v2's with the controller on.
        assert_eq!(
            periods("nr_periods 50\nnr_throttled 45\nthrottled_time 1109299411\n"),
            Some((50, 45))
        );
        let v2 = "usage_usec 2596675\nuser_usec 2000000\nsystem_usec 596675\nnr_periods 10\nnr_throttled 2\nthrottled_usec 9\n";
        assert_eq!(periods(v2), Some((10, 2)));
        // A v2 leaf without the cpu controller has no periods.
        assert_eq!(periods("usage_usec 2596675\nuser_usec 1\nsystem_usec 2\n"), None);
        assert_eq!(throttled_pct((50, 45), (60, 54)), Some(90.0));
        assert_eq!(throttled_pct((50, 45), (50, 45)), Some(0.0));
        assert_eq!(throttled_pct((50, 45), (10, 1)), None);
    }

    #[test]
    fn limit_and_throttling_per_tick() {
        let dir = tempfile::tempdir().unwrap();
        let stat = dir.path().join("cpu.stat");
        std::fs::write(&stat, "nr_periods 100\nnr_throttled 10\nthrottled_time 5\n").unwrap();
        let limits = CpuLimits {
            cpus: Some(0.5),
            stat: Some(stat.clone()),
        };
        let mut t = Throttle::default();
        let mut out = Vec::new();
        t.sample(&limits, "proc_target_", true, &mut out);
        assert!(out.is_empty(), "the priming read");
        std::fs::write(&stat, "nr_periods 110\nnr_throttled 18\nthrottled_time 9\n").unwrap();
        t.sample(&limits, "proc_target_", false, &mut out);
        assert_eq!(
            out,
            [
                ("proc_target_cpu_limit_pct".to_string(), 50.0),
                ("proc_target_throttled_pct".to_string(), 80.0)
            ]
        );
    }
}
