//! The result model now lives in `crate::model` (the bottom layer); these paths stay for the
//! workloads that name them.

pub use crate::model::result::*;

use hdrhistogram::Histogram;

/// The value at quantile `q` (from 0 to 1; 1 is the largest value recorded) of a histogram, in
/// its own unit. Every workload reads its latency quantiles here (or through [`quantile`]).
pub fn value_at(h: &Histogram<u64>, q: f64) -> u64 {
    if q >= 1.0 {
        h.max()
    } else {
        h.value_at_quantile(q)
    }
}

/// [`value_at`] divided by `per` (a histogram of µs: 1 gives µs, 1000 gives ms).
pub fn quantile(h: &Histogram<u64>, q: f64, per: f64) -> f64 {
    value_at(h, q) as f64 / per
}

/// One metric per `(name, q)`: the histogram's quantile `q` in `unit` (its values divided by
/// `per`), lower better, of kind quantile `q`; none when the histogram is empty.
pub fn quantile_metrics<N: Into<String>>(
    h: &Histogram<u64>,
    names: impl IntoIterator<Item = (N, f64)>,
    unit: &str,
    per: f64,
) -> Vec<Metric> {
    if h.is_empty() {
        return Vec::new();
    }
    names
        .into_iter()
        .map(|(name, q)| Metric::new(name, unit, quantile(h, q, per), Better::Lower).with_kind(MetricKind::Quantile(q)))
        .collect()
}

/// For a kind's unit test: every key of its `--json` document `json` (at any depth; inside the
/// objects named in `keyed_by_data`, whose keys are data such as status codes, only the values'
/// keys) is named in `doc`, its docs section: backticked (alone or as a word of a backticked
/// span such as `` `{mean_pct, sd_pct}` ``), or quoted in a JSON example.
#[cfg(test)]
pub(crate) fn assert_json_documented(json: &serde_json::Value, doc: &str, keyed_by_data: &[&str]) {
    fn keys(v: &serde_json::Value, keyed: &[&str], out: &mut std::collections::BTreeSet<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    out.insert(k.clone());
                    match (keyed.contains(&k.as_str()), x) {
                        (true, serde_json::Value::Object(inner)) => inner.values().for_each(|y| keys(y, keyed, out)),
                        _ => keys(x, keyed, out),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| keys(x, keyed, out)),
            _ => {}
        }
    }
    let mut found = std::collections::BTreeSet::new();
    keys(json, keyed_by_data, &mut found);
    let spans: Vec<&str> = doc.split('`').skip(1).step_by(2).collect();
    let words: std::collections::BTreeSet<&str> = spans
        .iter()
        .flat_map(|s| s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).chain([*s]))
        .collect();
    let missing: Vec<&String> = found
        .iter()
        .filter(|k| !words.contains(k.as_str()) && !doc.contains(&format!("\"{k}\"")))
        .collect();
    assert!(missing.is_empty(), "keys of the JSON its docs do not name: {missing:?}");
}

/// For those tests: the section of a docs page from the heading that holds `title` to the next
/// heading of its level or above.
#[cfg(test)]
pub(crate) fn doc_section<'a>(page: &'a str, title: &str) -> &'a str {
    let level = |l: &str| {
        let n = l.chars().take_while(|c| *c == '#').count();
        (n > 0 && l[n..].starts_with(' ')).then_some(n)
    };
    let (mut at, mut fenced, mut start) = (0, false, None);
    for line in page.split_inclusive('\n') {
        fenced ^= line.starts_with("```");
        match (start, level(line).filter(|_| !fenced)) {
            (None, Some(n)) if line.contains(title) => start = Some((at, n)),
            (Some((from, n)), Some(m)) if m <= n => return &page[from..at],
            _ => {}
        }
        at += line.len();
    }
    let (from, _) = start.unwrap_or_else(|| panic!("no heading with {title}"));
    &page[from..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_read_from_the_histogram_in_the_unit_asked() {
        let mut h = Histogram::<u64>::new(3).expect("histogram");
        for v in 1..=1000u64 {
            h.record(v).expect("record");
        }
        assert_eq!(quantile(&h, 0.5, 1.0), 500.0);
        assert_eq!(quantile(&h, 0.99, 1000.0), 0.99);
        assert_eq!(quantile(&h, 1.0, 1.0), 1000.0);
        let m = quantile_metrics(&h, [("x_p50_us", 0.5), ("x_p99_us", 0.99)], "us", 1.0);
        assert_eq!(m.len(), 2);
        assert_eq!((m[1].name.as_str(), m[1].value), ("x_p99_us", 990.0));
        assert_eq!(m[1].kind, MetricKind::infer("x_p99_us", "us"), "the kind the name says");
        assert!(quantile_metrics(&Histogram::<u64>::new(3).expect("h"), [("x", 0.5)], "us", 1.0).is_empty());
    }
}
