//! "Did you mean" hints for unknown keys, shared by the plan parser and the workload registry.

/// The first `name` in backticks of a serde message.
pub fn backticked(msg: &str) -> Option<String> {
    let start = msg.find('`')? + 1;
    let len = msg[start..].find('`')?;
    Some(msg[start..start + len].to_string())
}

/// serde lists the expected fields: "unknown field `conections`, expected one of `url`, `connections`".
/// Returns " (did you mean `connections`?)" or "".
pub fn did_you_mean(msg: &str) -> String {
    let Some(bad) = backticked(msg) else { return String::new() };
    let Some((_, expected)) = msg.split_once("expected") else {
        return String::new();
    };
    let candidates: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    nearest(&bad, &candidates)
        .map(|c| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default()
}

/// The candidate nearest to `bad` by edit distance, if it is near enough to be a typo.
pub fn nearest<'a>(bad: &str, candidates: &[&'a str]) -> Option<&'a str> {
    // An abbreviation (`conc` for `concurrency`) is a likely slip too.
    if bad.len() >= 3 {
        if let Some(c) = candidates.iter().find(|c| c.starts_with(bad)) {
            return Some(c);
        }
    }
    let (d, c) = candidates.iter().map(|c| (edit_distance(bad, c), *c)).min()?;
    (d <= 2.max(bad.len() / 3)).then_some(c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_nearest_expected_field() {
        let m = "unknown field `conections`, expected one of `url`, `connections`, `duration`";
        assert_eq!(did_you_mean(m), " (did you mean `connections`?)");
        assert_eq!(did_you_mean("unknown field `zzzzzzzz`, expected `url`"), "");
        assert_eq!(backticked(m).as_deref(), Some("conections"));
        assert_eq!(
            nearest("interleave", &["sequential", "interleaved", "shuffled"]),
            Some("interleaved")
        );
    }
}
