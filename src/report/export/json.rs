//! `report.json`: the serialized model (schema in docs/report-json.md), redacted once more.

use super::{Exporter, Input};
use crate::report::loaded::safe;

pub struct Json;

impl Exporter for Json {
    fn name(&self) -> &'static str {
        "json"
    }

    fn files(&self, input: &Input) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
        let mut text = serde_json::to_string_pretty(input.model)?;
        text.push('\n');
        Ok(vec![("report.json".into(), safe(&text).into_bytes())])
    }
}
