//! The metric names a workload can produce, so that a plan's thresholds and adaptive `metric` are
//! checked before the run: a name no trial can have is refused with a did-you-mean hint instead of
//! failing every point with "no data" at the end.

/// What a workload says about the names of its metrics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Produces {
    /// Not known in advance: every name is accepted.
    Any,
    /// These names and patterns, where `*` stands for any non-empty text (a fio job's name, a
    /// stress-ng stressor, a percentile such as `p99` or `p99_9`).
    Only(Vec<String>),
}

impl Produces {
    /// Exact names and patterns from static lists.
    pub fn only<'a>(lists: impl IntoIterator<Item = &'a [&'a str]>) -> Produces {
        Produces::Only(lists.into_iter().flatten().map(|s| s.to_string()).collect())
    }

    /// Whether a trial of this workload can have a metric called `name`.
    pub fn includes(&self, name: &str) -> bool {
        match self {
            Produces::Any => true,
            Produces::Only(names) => names.iter().any(|p| glob(p, name)),
        }
    }

    /// The known name nearest to `bad`, if it is near enough to be a typo.
    /// A pattern counts with its `*` filled from the same place of `bad` (`read_clat_p*_us` for
    /// `read_clat_p99_ms` is `read_clat_p99_us`).
    pub fn nearest(&self, bad: &str) -> Option<String> {
        let Produces::Only(names) = self else { return None };
        let candidates: Vec<String> = names.iter().filter_map(|n| instantiate(n, bad)).collect();
        let refs: Vec<&str> = candidates.iter().map(String::as_str).collect();
        crate::util::suggest::nearest(bad, &refs).map(str::to_string)
    }

    /// Up to `n` of the names, for a message (`requests_per_s, latency_p99_ms, …`).
    pub fn some(&self, n: usize) -> String {
        match self {
            Produces::Any => "any name".into(),
            Produces::Only(names) => {
                let mut s = names.iter().take(n).cloned().collect::<Vec<_>>().join(", ");
                if names.len() > n {
                    s.push_str(", …");
                }
                s
            }
        }
    }
}

/// `pattern` as a name: itself without `*`; with one `*`, the `*` replaced by the part of `bad`
/// between the pattern's head and tail lengths; None when that part is empty.
fn instantiate(pattern: &str, bad: &str) -> Option<String> {
    let Some((head, tail)) = pattern.split_once('*') else {
        return Some(pattern.to_string());
    };
    if tail.contains('*') {
        return None;
    }
    let middle = bad.get(head.len()..bad.len().checked_sub(tail.len())?)?;
    (!middle.is_empty()).then(|| format!("{head}{middle}{tail}"))
}

pub use crate::model::figures::glob;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_any_nonempty_text() {
        assert!(glob("requests_per_s", "requests_per_s"));
        assert!(!glob("requests_per_s", "requests_per_sec"));
        assert!(glob("*_read_iops", "job1_read_iops"));
        assert!(!glob("*_read_iops", "_read_iops"));
        assert!(glob("latency_p*_ms", "latency_p99_9_ms"));
        assert!(!glob("latency_p*_ms", "latency_p_ms"));
        assert!(glob("*_*_clat_p*_us", "a_b_read_clat_p99_us"));
        let p = Produces::only([&["requests_per_s", "latency_p*_ms"][..]]);
        assert!(p.includes("latency_p50_ms") && !p.includes("wall_time_s"));
        assert_eq!(p.nearest("request_per_s").as_deref(), Some("requests_per_s"));
        assert_eq!(p.nearest("latency_p99_us").as_deref(), Some("latency_p99_ms"));
        assert!(Produces::Any.includes("anything"));
    }
}
