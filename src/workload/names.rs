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
        let candidates: Vec<String> = names.iter().flat_map(|n| instantiate(n, bad)).collect();
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

/// `pattern` as names near `bad`: itself without `*`; with one `*`, the `*` replaced by the part of
/// `bad` between the pattern's head and tail lengths, and (for a `bad` that starts with the head but
/// lacks the tail, `latency_p99` for `latency_p*_ms`) by the rest of `bad` after the head, less what
/// it has of the tail's start. Empty parts give no name.
fn instantiate(pattern: &str, bad: &str) -> Vec<String> {
    let Some((head, tail)) = pattern.split_once('*') else {
        return vec![pattern.to_string()];
    };
    if tail.contains('*') {
        return Vec::new();
    }
    let mut out = Vec::new();
    let same_place = bad.len().checked_sub(tail.len()).and_then(|end| bad.get(head.len()..end));
    if let Some(middle) = same_place.filter(|m| !m.is_empty()) {
        out.push(format!("{head}{middle}{tail}"));
    }
    if let Some(rest) = bad.strip_prefix(head) {
        let cut = (1..=tail.len().min(rest.len()))
            .rev()
            .find(|&k| rest.is_char_boundary(rest.len() - k) && tail.starts_with(&rest[rest.len() - k..]))
            .unwrap_or(0);
        // `_us` where the pattern has `_ms` is another tail, not a missing one.
        let own_tail = rest
            .rsplit_once('_')
            .is_some_and(|(_, t)| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphabetic()));
        let middle = &rest[..rest.len() - cut];
        let name = format!("{head}{middle}{tail}");
        if (cut > 0 || !own_tail) && !middle.is_empty() && !out.contains(&name) {
            out.push(name);
        }
    }
    out
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
        // The unit left out, or cut short.
        assert_eq!(p.nearest("latency_p99").as_deref(), Some("latency_p99_ms"));
        assert_eq!(p.nearest("latency_p99_m").as_deref(), Some("latency_p99_ms"));
        assert_eq!(p.nearest("latency_p99_9").as_deref(), Some("latency_p99_9_ms"));
        assert_eq!(p.nearest("latency_p").as_deref(), None);
        let fio = Produces::only([&["read_clat_p*_us"][..]]);
        assert_eq!(fio.nearest("read_clat_p99_ms").as_deref(), Some("read_clat_p99_us"));
        assert_eq!(fio.nearest("read_clat_p99").as_deref(), Some("read_clat_p99_us"));
        assert!(Produces::Any.includes("anything"));
    }
}
