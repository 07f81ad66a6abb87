//! OpenMetrics text checked by a real parser: `prometheus_client` (PyPI, .ci/pypi.txt), whose
//! `openmetrics.parser` is strict (families declared once and before their samples, label syntax,
//! values, the closing `# EOF`). Used by the live server's and `monitor --listen`'s tests.

use std::io::Write;
use std::process::{Command, Stdio};

/// One sample as the parser read it: its name, its labels (sorted), its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

impl Sample {
    pub fn label(&self, k: &str) -> Option<&str> {
        self.labels.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }
}

const PARSE: &str = r#"
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
out = []
for fam in text_string_to_metric_families(sys.stdin.read()):
    for s in fam.samples:
        out.append([s.name, sorted(s.labels.items()), s.value])
print(json.dumps(out))
"#;

/// `text`'s samples, parsed by `prometheus_client`; panics with the parser's words when it
/// rejects the text; `None` (after `skip_unless_required`) when python3 or the module is missing.
pub fn parse(text: &str) -> Option<Vec<Sample>> {
    let probe = Command::new("python3")
        .args(["-c", "import prometheus_client.openmetrics.parser"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        crate::common::skip_unless_required("python3 with prometheus_client (PyPI) is not installed");
        return None;
    }
    let mut child = Command::new("python3")
        .args(["-c", PARSE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    child.stdin.take().expect("stdin").write_all(text.as_bytes()).expect("write");
    let out = child.wait_with_output().expect("python3");
    assert!(
        out.status.success(),
        "the OpenMetrics parser rejects the text: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    type Row = (String, Vec<(String, String)>, f64);
    let rows: Vec<Row> = serde_json::from_slice(&out.stdout).expect("the parser's JSON");
    Some(
        rows.into_iter()
            .map(|(name, labels, value)| Sample { name, labels, value })
            .collect(),
    )
}

/// The sample named `name` whose labels include every pair of `with`.
pub fn find<'a>(samples: &'a [Sample], name: &str, with: &[(&str, &str)]) -> Option<&'a Sample> {
    samples
        .iter()
        .find(|s| s.name == name && with.iter().all(|(k, v)| s.label(k) == Some(v)))
}
